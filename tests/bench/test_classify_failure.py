# SPDX-License-Identifier: Apache-2.0
"""tests/testbed/classify-failure.py: a failed scenario is retried only on
a recognised testbed signature (issue 32.4); anything naming skiff, or not
recognised, is skiff's. The logs are built from the lines run-one.sh,
lib.sh (tb_l0_watch), l1-init, guest/lib.sh (vmm_boot_l2, the L2
watcher) print; the double fault is the one the bench caught (2026-12-03,
docs/bench/2026-12-03-notf-coal)."""

import os
import subprocess
import tempfile
import unittest

import benchpath

SCRIPT = os.path.join(benchpath.REPO, "tests", "testbed", "classify-failure.py")
FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")

BOOT = "SeaBIOS (version 1.16.2-debian-1.16.2-1)\r\nBooting from ROM..\r\n"
READY = "SKIFF-L1: ready uptime=4.70\r\n"
L2UP = "SKIFF-L2: init uptime=2.10\r\nSKIFF-L2-MARK eth0 up\r\n"
STUCK = ("=== testbed: L1 silent for 60 s, at 250 s ===\n"
         "=== testbed: L0 monitor, sample 1: info registers -a ===\n"
         "CPU#0\nRIP=ffffffff81a1b2c3 RFL=00000212 [----A--] CPL=0 II=0 A20=1 SMM=0 HLT=1\n"
         "testbed: L1 stuck: cpu 0: halted, IF=1, IRR 236 251 253 above PPR 0x10"
         " (L0 lost the wake-up), at 250 s\n")
WATCH_BUSY = ("l2-watch: L2 silent for 90 s; VMM pid 231 (1.98 1.40 0.70 3/71 260)\n"
              "l2-watch: task 231 (skiff) S 12 40 wchan=do_epoll_wait\n"
              "l2-watch: task 233 (vcpu0) R 5012 3110 wchan=0\n")
WATCH_IDLE = ("l2-watch: L2 silent for 90 s; VMM pid 231 (0.10 0.40 0.70 1/71 260)\n"
              "l2-watch: task 231 (skiff) S 12 40 wchan=do_epoll_wait\n"
              "l2-watch: task 233 (vcpu0) S 512 310 wchan=kvm_vcpu_block\n")
SKIFF_EXIT = ("vmm_boot_l2: skiff exited 1; its stderr:\n"
              "skiff: virtio-net0: tap0: read failed: Bad address\n")


def fixture(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return f.read()


def classify(log, fail_line=""):
    with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
        f.write(log)
    try:
        res = subprocess.run(["python3", SCRIPT, f.name, fail_line],
                             capture_output=True, text=True, timeout=30)
    finally:
        os.unlink(f.name)
    return res.returncode, res.stdout.strip()


class TestbedSignatures(unittest.TestCase):
    def test_l1_never_ready(self):
        rc, out = classify(BOOT, "FAIL badinput: no result within 300s (killed) (300s)")
        self.assertEqual(rc, 0)
        self.assertEqual(out, "testbed: l1-never-ready: no result within 300s (killed)")

    def test_l1_never_ready_in_one_phase_of_a_trial(self):
        # powercut in a clean clone (2026-12-07): trial 1's phase 2 boot
        # never reached ready; the other boots did.
        def mark(t, p):
            return f"=== testbed: powercut trial {t} phase {p} ===\n"
        log = (mark(1, 1) + BOOT + READY + "=== testbed: L0 killed 530 ms after /x/ ===\n"
               + mark(1, "2 (l1_check)") + BOOT + "qemu-system-x86_64: terminating on signal 15\n"
               + STUCK.replace("testbed: L1 stuck", "L1 looked at")
               + mark(2, 1) + BOOT + READY + mark(2, "2 (l1_check)") + BOOT + READY
               + "SKIFF-RESULT: PASS powercut\n")
        fail = ("FAIL powercut: 1 of 3 trials failed; trial 1: phase 2: no result within 75s"
                " (killed) (141s)")
        rc, out = classify(log, fail)
        self.assertEqual(rc, 0)
        self.assertEqual(out, "testbed: l1-never-ready: 1 of 3 trials failed; trial 1: phase 2:"
                              " no result within 75s (killed)")
        # Two trials failed, one boot never ready: the other is unexplained.
        rc, out = classify(log, fail.replace("1 of 3", "2 of 3"))
        self.assertEqual(rc, 1)
        self.assertTrue(out.startswith("skiff: unrecognised: 2 of 3 trials failed"), out)

    def test_l1_stuck(self):
        rc, out = classify(BOOT + READY + L2UP + STUCK,
                           "FAIL net-modes: L1 stuck: cpu 0: ...; L0 stopped early (262s)")
        self.assertEqual(rc, 0)
        self.assertEqual(out, "testbed: l1-stuck: cpu 0: halted, IF=1, IRR 236 251 253 above"
                              " PPR 0x10 (L0 lost the wake-up), at 250 s")

    def test_known_double_fault(self):
        # skiff then exits 1 (the guest panicked) and the scenario fails:
        # both follow from the fault.
        rc, out = classify(fixture("l2_double_fault_syscall.log"),
                           "FAIL net: skiff exited 1 (80s)")
        self.assertEqual(rc, 0)
        self.assertTrue(out.startswith("testbed: l2-double-fault: "), out)

    def test_l1_irq_after_vmrun(self):
        # A freeze-count life (2026-12-07): L1's timer interrupt taken at
        # __svm_vcpu_run+0x9c, after VMRUN, in skiff's vcpu0; L1 panics
        # ("Kernel panic" after the end trace is the same oops) and the
        # scenario has no result line.
        rc, out = classify(fixture("l1_irq_after_vmrun.log"),
                           "FAIL net-mq: no result line (qemu exit 0) (18s)")
        self.assertEqual(rc, 0, out)
        self.assertEqual(out, "testbed: l1-irq-after-vmrun: L1 took an interrupt right after"
                              " VMRUN, GIF clear (L0's TCG): BUG: TASK stack guard page was"
                              " hit at 00000000401accb2 (stack is"
                              " 00000000c1e1545e..00000000d41a654d)")


class SkiffFailures(unittest.TestCase):
    def test_double_fault_on_a_kernel_stack(self):
        log = fixture("l2_double_fault_syscall.log").replace(
            "RSP: 0018:00007fff8f343dc8", "RSP: 0018:ffffc90000173f58")
        rc, out = classify(log)
        self.assertEqual(rc, 1)
        self.assertEqual(out, "skiff: guest-oops: traps: PANIC: double fault, error_code: 0x0")

    def test_double_fault_elsewhere(self):
        log = fixture("l2_double_fault_syscall.log").replace(
            "entry_SYSCALL_64+0x0/0x29", "virtnet_poll+0x1a/0x3c0")
        self.assertEqual(classify(log)[0], 1)

    def test_other_oops_beside_the_known_one(self):
        log = fixture("l2_double_fault_syscall.log") + \
            "[   12.0] BUG: kernel NULL pointer dereference, address: 0000000000000008\n"
        rc, out = classify(log)
        self.assertEqual(rc, 1)
        self.assertEqual(out, "skiff: guest-oops: BUG: kernel NULL pointer dereference,"
                              " address: 0000000000000008")

    def test_l1_oops_in_skiffs_thread(self):
        log = BOOT + READY + "[  130.2] BUG: TASK stack guard page was hit at 00000000a2c1 " \
                             "(stack is 0000000071a0..00000000f3c2)\n" + STUCK
        self.assertEqual(classify(log)[0], 1)

    def test_l1_oops_elsewhere_in_kvm(self):
        # The same oops with the interrupt taken anywhere but right after
        # VMRUN (where GIF is clear) could be L1's or skiff's doing.
        log = fixture("l1_irq_after_vmrun.log").replace("0f 01 d8 <58> 48", "0f 01 d8 58 <48>")
        rc, out = classify(log)
        self.assertEqual(rc, 1)
        self.assertEqual(out, "skiff: guest-oops: BUG: TASK stack guard page was hit at"
                              " 00000000401accb2 (stack is 00000000c1e1545e..00000000d41a654d)")

    def test_fail_line_before_the_vmrun_oops(self):
        # The scenario had failed before L1 oopsed: skiff's failure,
        # whatever came after.
        log = fixture("l1_irq_after_vmrun.log").replace(
            "SKIFF-L2-MARK up_mbps=284.4\n",
            "SKIFF-L2-MARK up_mbps=284.4\nSKIFF-RESULT: FAIL e1000-quick sha256 differs\n")
        rc, out = classify(log)
        self.assertEqual(rc, 1)
        self.assertEqual(out, "skiff: scenario-fail: e1000-quick sha256 differs")

    def test_skiff_exit_before_the_double_fault(self):
        log = fixture("l2_double_fault_syscall.log").replace(
            "SKIFF-L2-MARK eth0 up\n", "SKIFF-L2-MARK eth0 up\n" + SKIFF_EXIT)
        rc, out = classify(log)
        self.assertEqual(rc, 1)
        self.assertTrue(out.startswith("skiff: "), out)

    def test_other_oops_after_the_vmrun_one(self):
        log = fixture("l1_irq_after_vmrun.log") + \
            "[   19.0] general protection fault, probably for non-canonical address\n"
        rc, out = classify(log)
        self.assertEqual(rc, 1)
        self.assertTrue(out.startswith("skiff: guest-oops: general protection fault"), out)

    def test_scenario_fail_line(self):
        rc, out = classify(BOOT + READY + L2UP + "SKIFF-RESULT: FAIL net sha256 of the"
                                                  " download differs\n")
        self.assertEqual(rc, 1)
        self.assertEqual(out, "skiff: scenario-fail: net sha256 of the download differs")

    def test_fail_line_wins_over_a_later_stuck(self):
        log = BOOT + READY + "SKIFF-RESULT: FAIL net-mq q1 carried nothing\n" + STUCK
        self.assertEqual(classify(log)[0], 1)

    def test_skiff_exit_with_its_error_line(self):
        rc, out = classify(BOOT + READY + L2UP + SKIFF_EXIT)
        self.assertEqual(rc, 1)
        self.assertEqual(out, "skiff: skiff-exit: skiff exited 1: skiff: virtio-net0: tap0:"
                              " read failed: Bad address")

    def test_timeout_with_skiff_busy(self):
        rc, out = classify(BOOT + READY + L2UP + WATCH_BUSY,
                           "FAIL net: no result within 900s (killed) (905s)")
        self.assertEqual(rc, 1)
        self.assertEqual(out, "skiff: busy-timeout: no result within 900s (killed);"
                              " thread vcpu0 running")

    def test_unrecognised_timeout_is_skiffs(self):
        rc, out = classify(BOOT + READY + L2UP + WATCH_IDLE,
                           "FAIL net: no result within 900s (killed) (905s)")
        self.assertEqual(rc, 1)
        self.assertEqual(out, "skiff: unrecognised: no result within 900s (killed)")

    def test_missing_log(self):
        res = subprocess.run(["python3", SCRIPT, "/nonexistent/x.log"],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(res.returncode, 2)
        self.assertEqual(len(res.stderr.splitlines()), 1)
        self.assertIn("cannot read /nonexistent/x.log", res.stderr)


if __name__ == "__main__":
    unittest.main()
