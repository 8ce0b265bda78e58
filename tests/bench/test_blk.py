# SPDX-License-Identifier: Apache-2.0
"""Block I/O workloads (fio in L2): the fio JSON parser on real outputs
(tests/bench/fixtures/fio_*.json, fio 3.33 on this host, libaio,
direct=1), the blk_* metrics and their directions, and which
configuration/workload pairs apply (only configurations with a test disk
run blk-*; the others have no sample, not a failed one)."""

import json
import os
import subprocess
import tempfile
import unittest

import benchpath
from skiffbench import metrics, parsers, report, rounds

from test_rounds import console_blob, make_tar

SCENARIO = os.path.join(benchpath.REPO, "bench", "bench-round.sh")


class FioParserTest(unittest.TestCase):
    def test_random_read_qd1(self):
        r = parsers.parse_fio_json(benchpath.fixture("fio_randread_qd1.json"))
        self.assertEqual(r["direction"], "read")
        self.assertEqual(r["job"], "blk-randread-qd1")
        self.assertAlmostEqual(r["iops"], 574000.0)
        self.assertEqual(r["total_ios"], 574574)
        self.assertAlmostEqual(r["bw_bytes"], 2351104000.0)
        # clat_ns.percentile, ns -> us
        self.assertAlmostEqual(r["clat_p50_us"], 0.382)
        self.assertAlmostEqual(r["clat_p99_us"], 0.812)
        self.assertAlmostEqual(r["clat_p99_9_us"], 2.192)
        self.assertAlmostEqual(r["runtime_s"], 1.001)

    def test_write_side_is_used_for_a_write_job(self):
        r = parsers.parse_fio_json(
            benchpath.fixture("fio_randwrite_qd32.json"))
        self.assertEqual(r["direction"], "write")
        self.assertEqual(r["total_ios"], 91216)
        self.assertAlmostEqual(r["clat_p99_9_us"], 2211.84)

    def test_sequential_bandwidth(self):
        r = parsers.parse_fio_json(benchpath.fixture("fio_seqread.json"))
        self.assertAlmostEqual(r["bw_bytes"], 1074582349.0)
        self.assertEqual(r["io_bytes"], 1083179008)
        self.assertEqual(r["total_ios"], 1033)

    def test_job_error_raises(self):
        # fio on a path that is no file: the job's "error" is 22.
        with self.assertRaisesRegex(ValueError, "error 22"):
            parsers.parse_fio_json(benchpath.fixture("fio_error.json"))

    def test_no_io_raises(self):
        doc = json.loads(benchpath.fixture("fio_randread_qd1.json"))
        doc["jobs"][0]["read"]["total_ios"] = 0
        with self.assertRaisesRegex(ValueError, "no I/O"):
            parsers.parse_fio_json(json.dumps(doc))

    def test_mixed_job_raises(self):
        # A randrw job would need a choice of side: refused, not guessed.
        doc = json.loads(benchpath.fixture("fio_randread_qd1.json"))
        doc["jobs"][0]["write"]["total_ios"] = 5
        with self.assertRaisesRegex(ValueError, "exactly one direction"):
            parsers.parse_fio_json(json.dumps(doc))

    def test_messages_around_the_json(self):
        text = ("note: both iodepth >= 1 and synchronous I/O engine\n"
                + benchpath.fixture("fio_seqread.json")
                + "\nfio: closing {files}\n")
        self.assertEqual(parsers.parse_fio_json(text)["total_ios"], 1033)

    def test_not_json(self):
        with self.assertRaisesRegex(ValueError, "no JSON.*No such file"):
            parsers.parse_fio_json("sh: /mnt/fio/fio: No such file\n")
        with self.assertRaisesRegex(ValueError, "not valid JSON"):
            parsers.parse_fio_json('{"jobs": [')

    def test_missing_percentile_raises(self):
        doc = json.loads(benchpath.fixture("fio_randread_qd1.json"))
        del doc["jobs"][0]["read"]["clat_ns"]["percentile"]["99.900000"]
        with self.assertRaisesRegex(ValueError, "percentile 99.9"):
            parsers.parse_fio_json(json.dumps(doc))


class FioMetricsTest(unittest.TestCase):
    def sample(self, name="fio_randread_qd1.json", **extra):
        m = metrics.from_fio(parsers.parse_fio_json(benchpath.fixture(name)))
        m.update(extra)
        return metrics.derive(m)

    def test_names_and_units(self):
        m = self.sample()
        self.assertAlmostEqual(m["blk_iops"], 574000.0)
        self.assertAlmostEqual(m["blk_mb_s"], 2351.104)
        self.assertAlmostEqual(m["blk_clat_p99_9_us"], 2.192)
        self.assertEqual(m["blk_ios"], 574574)
        self.assertAlmostEqual(m["blk_guest_cpu_pct"], 38.3 + 61.4)

    def test_cost_per_io(self):
        m = self.sample(**{"kvm_exits": 1149148, "cpu_s.skiff": 0.5,
                           "cpu_s.skiff.2": 0.7})
        self.assertAlmostEqual(m["cpu_s_total"], 1.2)
        self.assertAlmostEqual(m["cpu_s_per_mio"], 1.2 / 0.574574)
        self.assertAlmostEqual(m["exits_per_io"], 2.0)
        # per GB too, from the bytes moved (the 1 MiB runs)
        self.assertAlmostEqual(m["cpu_s_per_gb"], 1.2 / 2.353455104)

    def test_directions(self):
        for name in ("blk_iops", "blk_mb_s"):
            self.assertIs(metrics.direction(name, True), True, name)
        for name in ("blk_clat_p50_us", "blk_clat_p99_us",
                     "blk_clat_p99_9_us", "cpu_s_per_mio", "exits_per_io"):
            self.assertIs(metrics.direction(name, True), False, name)
        for name in ("blk_ios", "blk_runtime_s", "blk_guest_cpu_pct"):
            self.assertIsNone(metrics.direction(name), name)
            self.assertTrue(metrics.is_known(name), name)

    def test_fixed_time_runs_judge_per_io_not_per_run(self):
        # fio runs for a fixed time: the faster VMM does more I/O and
        # spends more CPU per run; only the per-I/O cost gets a verdict.
        # blk_ios alone (no bytes moved) marks the work as varying.
        doc = {"samples": [{"config": "a", "workload": "blk-randread-qd1",
                            "metrics": {"blk_ios": 574574,
                                        "cpu_s_total": 1.0}}]}
        self.assertTrue(report.work_varies(doc, "blk-randread-qd1"))
        self.assertIsNone(metrics.direction("cpu_s_total", True))
        self.assertIsNone(metrics.direction("kvm_exits", True))


class ApplicabilityTest(unittest.TestCase):
    W = ["boot", "tcp-g2h", "blk-randread-qd1", "blk-seqread"]

    def test_only_configs_with_a_disk_run_blk(self):
        self.assertEqual(rounds.workloads_for("d", self.W, [], ["d"]),
                         self.W)
        self.assertEqual(rounds.workloads_for("n", self.W, [], ["d"]),
                         ["boot", "tcp-g2h"])
        self.assertEqual(rounds.workloads_for("v", self.W, ["v"], []),
                         ["tcp-g2h"])

    def test_plan_counts_only_runs_that_apply(self):
        plan = rounds.plan_rounds(["d", "n"], self.W, 2, seed=1,
                                  disks=["d"])
        self.assertEqual([n for _, _, n in plan], [4 + 2, 4 + 2])

    def test_ingest_leaves_no_sample_for_a_pair_that_does_not_apply(self):
        fio = benchpath.fixture("fio_seqread.json")
        blobs = (console_blob(1, "d", make_tar({
                     "d/blk-seqread/fio.json": fio,
                     "d/blk-seqread/metrics": "window_s=3\nkvm_exits=2066\n"
                                              "cpu_s.skiff=0.2\n"}))
                 + console_blob(1, "n", make_tar({
                     "n/tcp-g2h/metrics": "window_s=3\n",
                     "n/tcp-g2h/iperf3.json":
                         benchpath.fixture("iperf3_tcp.json")})))
        with tempfile.TemporaryDirectory() as d:
            logf = os.path.join(d, "round.log")
            with open(logf, "w") as f:
                f.write("SKIFF-L1: ready uptime=4\n" + blobs)
            results = os.path.join(d, "results.json")
            ok, failed = rounds.ingest_round(
                logf, d, results, 1, ["d", "n"], ["tcp-g2h", "blk-seqread"],
                say=lambda s: None, disks=["d"])
            with open(results) as f:
                by = {(s["config"], s["workload"]): s
                      for s in json.load(f)["samples"]}
        # d's tcp-g2h was planned and sent nothing: a failed run; n's
        # blk-seqread was never planned: no sample at all.
        self.assertEqual((ok, failed), (2, 1))
        self.assertNotIn(("n", "blk-seqread"), by)
        self.assertIn("no output", by[("d", "tcp-g2h")]["error"])
        blk = by[("d", "blk-seqread")]["metrics"]
        self.assertEqual(blk["blk_ios"], 1033)
        self.assertAlmostEqual(blk["exits_per_io"], 2.0)
        self.assertEqual(by[("d", "blk-seqread")]["raw"]["fio"],
                         "raw/r1/d/blk-seqread/fio.json")


def scenario_sh(script):
    """Run script in sh with bench-round.sh sourced (as L1 does)."""
    return subprocess.run(["sh", "-c", f'. "{SCENARIO}"; {script}'],
                          capture_output=True, text=True, check=True).stdout


class ScenarioRuleTest(unittest.TestCase):
    """The L1 side's rule (bench-round.sh), which bench/run.sh also asks
    for the host's --disks."""

    def test_disk_configs(self):
        names = scenario_sh("bench_disk_configs").split()
        self.assertEqual(sorted(names), sorted([
            "skiff-blk", "skiff-blk-poll", "skiff-blk-iothreads",
            "skiff-blk-direct", "skiff-blk-direct-poll", "qemu-blk", "qemu-blk-native",
            "qemu-blk-iothread", "skiff-ioeventfd-blk", "skiff-cpupm-blk",
            "qemu-rtc-pvh-blk", "qemu-cpupm-blk"]))

    def test_has_disk_and_applies(self):
        out = scenario_sh(
            'for a in "skiff --disk /dev/loop0" "skiff --net tap=tap0" '
            '"qemu vhost=off disk=native" "qemu vhost=on"; do '
            'bench_has_disk $a && echo y || echo n; done; '
            'bench_applies blk-seqread 0 && echo y || echo n; '
            'bench_applies blk-seqread 1 && echo y || echo n; '
            'bench_applies tcp-g2h 0 && echo y || echo n')
        self.assertEqual(out.split(), ["y", "n", "y", "n", "n", "y", "y"])

    def test_every_blk_workload_has_a_fio_job(self):
        out = scenario_sh('for w in $BENCH_BLK_WORKLOADS; do '
                          'echo "$w $(bench_fio_job $w)"; done')
        jobs = dict(line.split(" ", 1) for line in out.splitlines())
        self.assertEqual(len(jobs), 6)
        self.assertIn("--iodepth=32", jobs["blk-randwrite-qd32"])
        self.assertIn("--bs=1M", jobs["blk-seqwrite"])
        self.assertIn("--rw=randread", jobs["blk-randread-qd1"])


if __name__ == "__main__":
    unittest.main()
