#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reads what tb_l0_dump printed (L0's `info registers -a` and `info lapic
N`) on stdin and says which L1 CPUs are halted with interrupts enabled
while their LAPIC holds a deliverable interrupt: an IRR vector whose
priority class is above the processor priority (PPR). Real hardware
leaves HLT for such an interrupt. L0's QEMU 7.2 TCG was caught not doing
so (tests/testbed/README.md, "The testbed's own failures"). Several
samples in a row: a CPU counts only if it is stuck in every one of them,
since a single look may fall between an interrupt's arrival and its
delivery.

Prints one line per stuck CPU and exits 0, or exits 1 if none is."""
import re
import sys

# A header may follow the monitor's prompt, "(qemu) ", on its line.
SAMPLE = re.compile(r"=== testbed: L0 monitor, sample (\d+): info registers")


def stuck_cpus(text):
    """CPU numbers stuck in one sample's text, with what shows it."""
    regs, lapic = {}, {}
    for m in re.finditer(r"^CPU#(\d+)\n(.*?)(?=^CPU#|\(qemu\)|===|\Z)", text, re.M | re.S):
        rfl = re.search(r"RFL=([0-9a-f]+)", m.group(2))
        hlt = re.search(r"HLT=(\d)", m.group(2))
        if rfl and hlt:
            regs[int(m.group(1))] = (int(rfl.group(1), 16), hlt.group(1) == "1")
    for m in re.finditer(r"local APIC state for CPU (\d+)(.*?)(?=local APIC state|\Z)", text, re.S):
        body = m.group(2)
        irr = re.search(r"^IRR\s+(.*)$", body, re.M)
        ppr = re.search(r"PPR 0x([0-9a-f]+)", body)
        if "APIC enabled" in body and irr and ppr:
            vecs = [int(v) for v in irr.group(1).split() if v.isdigit()]
            lapic[int(m.group(1))] = (vecs, int(ppr.group(1), 16))
    out = {}
    for cpu, (rfl, halted) in regs.items():
        vecs, ppr = lapic.get(cpu, ([], 0))
        if halted and rfl & 0x200 and vecs and max(vecs) >> 4 > ppr >> 4:
            irr = " ".join(map(str, vecs))
            out[cpu] = f"cpu {cpu}: halted, IF=1, IRR {irr} above PPR {ppr:#04x}"
    return out


def main():
    text = sys.stdin.read().replace("\r", "")
    starts = [m.start() for m in SAMPLE.finditer(text)] or [0]
    samples = [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]
    found = [stuck_cpus(s) for s in samples]
    common = set(found[0]).intersection(*found[1:])
    for cpu in sorted(common):
        print(found[-1][cpu])
    return 0 if common else 1


if __name__ == "__main__":
    sys.exit(main())
