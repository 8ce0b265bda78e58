# SPDX-License-Identifier: Apache-2.0
"""The NVMe passthrough configurations (issue 37.4): skiff-vfio-nvme and
qemu-vfio-nvme pass L0's NVMe to L2 and only they run the nvme-*
workloads (L1's rule and the host's agree); L0 gets the IOMMU once; the
VMMs keep L2's NIC; fio in L2 only reads the namespace."""

import os
import shutil
import subprocess
import tempfile
import unittest

import benchpath
from skiffbench import ingest, rounds, summary

ROUND = os.path.join(benchpath.BENCH, "bench-round.sh")
RUN = os.path.join(benchpath.BENCH, "run.sh")
# L2 runs busybox's ash: the rule must hold there too.
SHELL = ([shutil.which("busybox"), "ash"] if shutil.which("busybox")
         else ["sh"])
NVME = ("qemu-vfio-nvme", "skiff-vfio-nvme")
W = ["boot", "tcp-g2h", "blk-seqread", "nvme-seqread", "nvme-randread-qd1",
     "nvme-randread-qd32"]


def in_round(script):
    return subprocess.run(SHELL + ["-c", f'. "$0"; {script}', ROUND],
                          capture_output=True, text=True, timeout=20,
                          check=True).stdout


class L1RuleTest(unittest.TestCase):
    def test_listed(self):
        self.assertEqual(tuple(sorted(in_round("bench_nvme_configs")
                                      .split())), NVME)
        # not the e1000e's passthrough, nor a test disk's
        self.assertNotIn("skiff-vfio-nvme", in_round("bench_pt_configs"))
        self.assertNotIn("skiff-vfio-nvme", in_round("bench_disk_configs"))

    def test_applies_only_with_the_nvme(self):
        loop = 'for w in ' + " ".join(W) + '; do bench_applies $w 0 0 0 {}' \
               ' && echo $w; done; true'
        self.assertEqual(in_round(loop.format(1)).split(),
                         ["boot", "tcp-g2h"] + W[3:])
        self.assertEqual(in_round(loop.format(0)).split(),
                         ["boot", "tcp-g2h"])
        # a blk-only configuration runs no nvme-*
        self.assertEqual(in_round('bench_applies nvme-seqread 1 0 1 1 && '
                                  'echo y || echo n').strip(), "n")

    def test_every_nvme_workload_is_a_read(self):
        out = in_round('for w in $BENCH_NVME_WORKLOADS; do '
                       'echo "$w $(bench_fio_job $w)"; done')
        jobs = dict(line.split(" ", 1) for line in out.splitlines())
        self.assertEqual(sorted(jobs), ["nvme-randread-qd1",
                                        "nvme-randread-qd32", "nvme-seqread"])
        for job in jobs.values():
            self.assertRegex(job, r"--rw=(rand)?read( |$)")
        self.assertIn("--bs=128k --iodepth=32", jobs["nvme-seqread"])
        self.assertIn("--bs=4k --iodepth=1", jobs["nvme-randread-qd1"])
        self.assertIn("--bs=4k --iodepth=32", jobs["nvme-randread-qd32"])

    def serve(self, request):
        """bench_blk_serve with fio replaced by echo: its command line."""
        with tempfile.TemporaryDirectory() as d:
            blk, nvme = os.path.join(d, "blk"), os.path.join(d, "nvme")
            with open(blk, "w") as f:
                f.write("/dev/vdb\n")
            with open(nvme, "w") as f:
                f.write("/dev/nvme0n1\n")
            return subprocess.run(
                SHELL + ["-c", f'. "$0"; BENCH_FIO=echo '
                         f'BENCH_BLK_DEV_FILE={blk} '
                         f'BENCH_NVME_DEV_FILE={nvme} bench_blk_serve', ROUND],
                input=request, capture_output=True, text=True, timeout=20,
                check=True).stdout.split()

    def test_fio_reads_the_namespace_read_only(self):
        args = self.serve("nvme-randread-qd1 3\n")
        self.assertIn("--filename=/dev/nvme0n1", args)
        self.assertIn("--readonly", args)
        for a in ("--direct=1", "--time_based", "--runtime=3",
                  "--rw=randread", "--iodepth=1"):
            self.assertIn(a, args)
        # the test disk's workloads as before: their disk, writes allowed
        args = self.serve("blk-randwrite-qd1 3\n")
        self.assertIn("--filename=/dev/vdb", args)
        self.assertNotIn("--readonly", args)

    def test_skiff_keeps_its_nic(self):
        net = 'bench_skiff_net {}; echo "|"'
        self.assertEqual(in_round(net.format("--vfio-pci @NVME")).split(),
                         ["--net", "tap=tap0", "|"])
        # the e1000e passed through is L2's NIC, as before
        self.assertEqual(in_round(net.format("--vfio-pci @PT,mmap=off"))
                         .split(), ["|"])
        self.assertEqual(in_round(net.format("--net tap=tap0,vhost=on"))
                         .split(), ["|"])

    def test_qemu_passes_the_nvme_beside_its_nic(self):
        words = in_round('bench_subst @NVME 0000:02:00.0 vhost=off '
                         'machine=q35 nvme=@NVME')
        self.assertEqual(words.split(),
                         ["vhost=off", "machine=q35", "nvme=0000:02:00.0"])
        out = in_round(f'bench_qemu_opts {words.strip()}; '
                       'echo "$vm_m|$vm_nvme_addr|$vm_pt_addr|$vm_nic|$vm_o"')
        self.assertEqual(out.strip(),
                         "q35|0000:02:00.0||virtio-net-pci|,vhost=off")

    def test_l0_has_one_iommu_first(self):
        for pt, nvme in ((0, 1), (1, 1)):
            args = in_round(f"bench_l0_args {pt} {nvme}").split()
            self.assertEqual(args[:2], ["-device", "intel-iommu,intremap=off"])
            self.assertEqual(sum("intel-iommu" in a for a in args), 1)
            self.assertIn("nvme,serial=bench0,drive=nvb,bus=rp1", args)
            self.assertEqual("e1000e,netdev=h0,bus=rp0" in args, pt == 1)
        # the e1000e's rounds keep the L0 they had
        self.assertEqual(in_round("bench_l0_args 1 0").split(),
                         in_round("echo $BENCH_PT_L0_ARGS").split())
        self.assertEqual(in_round("bench_l0_args 0 0").strip(), "")
        # inside the emulated machine only
        self.assertNotIn("tap", in_round("echo $BENCH_NVME_L0_ARGS"))


class HostRuleTest(unittest.TestCase):
    def test_workloads_for(self):
        self.assertEqual(ingest.workloads_for("skiff-vfio-nvme", W, (),
                                              nvmes=NVME),
                         ["boot", "tcp-g2h"] + W[3:])
        self.assertEqual(ingest.workloads_for("skiff-vfio", W, (),
                                              nvmes=NVME),
                         ["boot", "tcp-g2h"])

    def test_plan_counts_its_runs(self):
        plan = rounds.plan_rounds(["skiff-vfio", "skiff-vfio-nvme"], W, 2,
                                  nvmes=NVME)
        self.assertEqual([n for _, _, n in plan], [2 + 5, 2 + 5])

    def test_run_sh_asks_the_scenario(self):
        out = subprocess.run([RUN, "--list"], capture_output=True,
                             text=True, timeout=30, check=True).stdout
        for name in NVME + ("nvme-seqread", "nvme-randread-qd1",
                            "nvme-randread-qd32"):
            self.assertIn(name, out)


class SummaryTest(unittest.TestCase):
    def test_latencies_with_the_ios_behind_them(self):
        samples = [{"config": c, "workload": "nvme-randread-qd1", "rep": r,
                    "metrics": {"blk_clat_p50_us": lat + r,
                                "blk_clat_p99_us": 3 * lat,
                                "blk_ios": 1000 * r, "exits_per_io": 2.0}}
                   for c, lat in (("qemu-vfio-nvme", 100.0),
                                  ("skiff-vfio-nvme", 90.0))
                   for r in (1, 2, 3)]
        doc = {"schema": 1, "meta": {"baseline": "qemu-vfio-nvme"},
               "samples": samples}
        order, rows, _ = summary.summary_rows(doc, "qemu-vfio-nvme",
                                              iters=100)
        self.assertEqual(order, ["qemu-vfio-nvme", "skiff-vfio-nvme"])
        by = dict(rows)
        self.assertTrue(by["NVMe passthrough: 4 KiB random read QD1 p50, "
                           "µs"][1].startswith("92"))
        self.assertEqual([c.split()[0] for c in by["  I/Os per run behind them"]],
                         ["2000", "2000"])
        # nothing of workloads that did not run
        self.assertNotIn("NVMe passthrough: 4 KiB random read QD32, IOPS",
                         by)


if __name__ == "__main__":
    unittest.main()
