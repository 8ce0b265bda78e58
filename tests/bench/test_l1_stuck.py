# SPDX-License-Identifier: Apache-2.0
"""tests/testbed/l1-stuck.py: finds an L1 CPU that L0's TCG left halted
over a deliverable interrupt, from tb_l0_dump's output. The fixture is the
first such dump caught (2026-12-04, net-mq): CPU 0 halted with IRR 236
(its timer) and 251 pending, CPU 1 idle with nothing pending."""

import os
import re
import subprocess
import unittest

import benchpath

SCRIPT = os.path.join(benchpath.REPO, "tests", "testbed", "l1-stuck.py")
FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "fixtures", "l0_dump_stuck.txt")
SAMPLE2 = "=== testbed: L0 monitor, sample 2"


def stuck(text):
    res = subprocess.run(["python3", SCRIPT], input=text, capture_output=True,
                         text=True, timeout=30)
    return res.returncode, res.stdout


def fixture():
    with open(FIXTURE) as f:
        return f.read()


def cpu0_regs(text, old, new):
    """text with CPU 0's register line changed in every sample."""
    return re.sub(r"(CPU#0\n(?:.*\n){4})(RIP=.*)",
                  lambda m: m.group(1) + m.group(2).replace(old, new), text)


class StuckTest(unittest.TestCase):
    def test_caught_stall(self):
        rc, out = stuck(fixture())
        self.assertEqual(rc, 0)
        self.assertEqual(out, "cpu 0: halted, IF=1, IRR 236 251 above PPR 0x10\n")

    def test_one_sample_is_not_enough(self):
        text = fixture()
        i = text.index(SAMPLE2)
        rc, out = stuck(text[:i] + text[i:].replace("IRR\t 236 251", "IRR\t (none)"))
        self.assertEqual((rc, out), (1, ""))

    def test_interrupts_off(self):
        rc, out = stuck(cpu0_regs(fixture(), "RFL=00000212", "RFL=00000012"))
        self.assertEqual((rc, out), (1, ""))

    def test_running(self):
        rc, out = stuck(cpu0_regs(fixture(), "HLT=1", "HLT=0"))
        self.assertEqual((rc, out), (1, ""))

    def test_masked_by_priority(self):
        text = fixture().replace("LDR 0x01 PPR 0x10", "LDR 0x01 PPR 0xf0")
        rc, out = stuck(text)
        self.assertEqual((rc, out), (1, ""))

    def test_healthy_idle(self):
        rc, out = stuck(fixture().replace("IRR\t 236 251", "IRR\t (none)"))
        self.assertEqual((rc, out), (1, ""))


if __name__ == "__main__":
    unittest.main()
