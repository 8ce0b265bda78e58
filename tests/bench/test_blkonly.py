# SPDX-License-Identifier: Apache-2.0
"""Configurations with the word blk-only (bench-round.sh: the world-switch
table's block peers, issue 38) run the blk-* workloads and nothing else:
L1's rule (bench_applies, bench_vm_words), the host's (workloads_for,
the plan's run count) and the list both take from the scenario."""

import os
import shutil
import subprocess
import unittest

import benchpath
from skiffbench import ingest, rounds

ROUND = os.path.join(benchpath.BENCH, "bench-round.sh")
SHELL = ([shutil.which("busybox"), "ash"] if shutil.which("busybox")
         else ["sh"])
W = ["boot", "idle", "ping", "cpu", "blk-randread-qd1", "vsock-rr"]
BLK = ("skiff-ioeventfd-blk", "skiff-cpupm-blk", "qemu-rtc-pvh-blk",
       "qemu-cpupm-blk")


def in_round(script):
    return subprocess.run(SHELL + ["-c", f'. "$0"; {script}', ROUND],
                          capture_output=True, text=True, timeout=20,
                          check=True).stdout


class L1Test(unittest.TestCase):
    def test_listed(self):
        self.assertEqual(tuple(in_round("bench_blk_only_configs").split()),
                         BLK)
        disks = in_round("bench_disk_configs").split()
        for c in BLK:
            self.assertIn(c, disks)

    def test_applies_only_to_blk(self):
        out = in_round('for w in ' + " ".join(W) + '; do '
                       'bench_applies $w 1 1 1 && echo $w; done; true')
        self.assertEqual(out.split(), ["blk-randread-qd1"])
        # without the word: as before
        out = in_round('for w in ' + " ".join(W) + '; do '
                       'bench_applies $w 1 1 0 && echo $w; done; true')
        self.assertEqual(out.split(), W)

    def test_word_is_not_passed_to_the_vmm(self):
        out = in_round('L2_MEM=256M; bench_vm_words blk-only --cpu-pm on '
                       '--disk /dev/loop0,direct; '
                       'echo "$vm_blk_only|$vm_args"')
        self.assertEqual(out.strip(), "1|--cpu-pm on --disk /dev/loop0,direct")
        out = in_round('L2_MEM=256M; bench_vm_words --cpu-pm on; '
                       'echo "$vm_blk_only|$vm_args"')
        self.assertEqual(out.strip(), "0|--cpu-pm on")


class HostTest(unittest.TestCase):
    def test_workloads_for(self):
        self.assertEqual(ingest.workloads_for(
            "skiff-cpupm-blk", W, (), disks=BLK, vsocks=BLK, blk_only=BLK),
            ["blk-randread-qd1"])
        self.assertEqual(ingest.workloads_for(
            "skiff-cpupm", W, (), disks=BLK, blk_only=BLK),
            ["boot", "idle", "ping", "cpu"])

    def test_plan_counts_its_runs(self):
        plan = rounds.plan_rounds(["skiff-cpupm", "skiff-cpupm-blk"], W, 2,
                                  disks=BLK, blk_only=BLK)
        self.assertEqual([n for _, _, n in plan], [5, 5])


if __name__ == "__main__":
    unittest.main()
