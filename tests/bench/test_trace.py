# SPDX-License-Identifier: Apache-2.0
"""bench/bench-trace.sh (BENCH_TRACE, docs/bench/2026-12-06-irqdiag): which
workloads are traced, and bench_trace_sum's counts from L1's trace text:
exits by reason, the host vector behind an external-interrupt exit (KVM
takes it before it traces the exit; else the next one), injections,
MSIs, where threads ran. The lines are the format of L1's 6.1 tracefs."""

import os
import shutil
import subprocess
import tempfile
import unittest

import benchpath

TRACE = os.path.join(benchpath.BENCH, "bench-trace.sh")
SHELL = ([shutil.which("busybox"), "ash"] if shutil.which("busybox")
         else ["sh"])

SAMPLE = """\
# tracer: nop
           vcpu0-564     [001] d..1.    78.839068: kvm_entry: vcpu 0, rip 0xffffffff81a592eb
           vcpu0-564     [001] d.h1.    78.839704: local_timer_entry: vector=236
           vcpu0-564     [001] .....    78.840058: kvm_exit: vcpu 0 reason interrupt rip 0xffffffff81e018a0 info1 0x0 info2 0x0 intr_info 0x00000000 error_code 0x00000000
           vcpu0-564     [001] d..1.    78.840086: kvm_entry: vcpu 0, rip 0xffffffff81e018a0
           vcpu0-564     [001] .....    78.840148: kvm_exit: vcpu 0 reason interrupt rip 0xffffffff81a592eb info1 0x0 info2 0x0 intr_info 0x00000000 error_code 0x00000000
           vcpu0-564     [001] d.h1.    78.840150: reschedule_entry: vector=253
           vcpu0-564     [001] .....    78.840162: kvm_inj_virq: IRQ 0x28
           vcpu0-564     [001] d..1.    78.840169: kvm_entry: vcpu 0, rip 0xffffffff81a592eb
           vcpu0-564     [001] .....    78.840625: kvm_exit: vcpu 0 reason vintr rip 0xffffffff81a592eb info1 0x0 info2 0x0 intr_info 0x00000000 error_code 0x00000000
       vhost-529-543     [000] d..1.    78.837750: kvm_msi_set_irq: dst 0 vec 40 (Fixed|physical|edge)
       vhost-529-543     [000] d..1.    78.837763: kvm_apic_accept_irq: apicid 0 vec 40 (Fixed|edge)
       vhost-529-543     [000] d..2.    78.837842: sched_switch: prev_comm=vhost-529 prev_pid=543 prev_prio=120 prev_state=S ==> next_comm=vsock-io next_pid=683 next_prio=120
           vcpu0-564     [001] .....    78.840732: kvm_apic: apic_write APIC_EOI = 0x0
"""


def trace_sum(text):
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
        f.write(text)
        f.flush()
        res = subprocess.run(SHELL + ["-c", '. "$0"; bench_trace_sum "$1"',
                                      TRACE, f.name],
                             capture_output=True, text=True, timeout=20,
                             check=True)
    out = {}
    for line in res.stdout.splitlines():
        key, _, n = line.rpartition(" ")
        out[key] = int(n)
    return out


class TraceTest(unittest.TestCase):
    def test_counts(self):
        s = trace_sum(SAMPLE)
        self.assertEqual(s["exit interrupt"], 2)
        self.assertEqual(s["exit vintr"], 1)
        self.assertEqual(s["exit_cpu 1 vcpu0"], 3)
        # the timer came before its exit, the IPI after
        self.assertEqual(s["intr_exit_cause local_timer_entry"], 1)
        self.assertEqual(s["intr_exit_cause reschedule_entry"], 1)
        self.assertNotIn("intr_exit_cause none-seen", s)
        self.assertEqual(s["inj IRQ 0x28"], 1)
        self.assertEqual(s["inj_after_exit interrupt"], 1)
        self.assertEqual(s["msi dst 0 vec 40 (Fixed|physical|edge)"], 1)
        self.assertEqual(s["accept vec 40"], 1)
        self.assertEqual(s["accept_by vhost-529"], 1)
        self.assertEqual(s["run_on 0 vsock-io"], 1)
        self.assertEqual(s["apic apic_write APIC_EOI"], 1)

    def test_exit_without_a_vector(self):
        s = trace_sum(SAMPLE.split("\n", 4)[0] + "\n" + "\n".join(
            SAMPLE.splitlines()[3:5]) + "\n")
        self.assertEqual(s["intr_exit_cause none-seen"], 1)

    def test_wanted(self):
        script = ('. "$0"; BENCH_TRACE=vsock-rr,rr; '
                  'for w in rr vsock-rr tcp-rr balloon; do '
                  'bench_trace_wanted $w && echo y || echo n; done; '
                  'BENCH_TRACE=; bench_trace_wanted rr && echo y || echo n')
        res = subprocess.run(SHELL + ["-c", script, TRACE],
                             capture_output=True, text=True, timeout=20,
                             check=True)
        self.assertEqual(res.stdout.split(), ["y", "y", "n", "n", "n"])


if __name__ == "__main__":
    unittest.main()
