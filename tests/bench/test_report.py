# SPDX-License-Identifier: Apache-2.0
"""Report generation on a small synthetic results JSON, the CLIs, and a
collect.py -> report.py round trip on the captured tool outputs."""

import filecmp
import json
import os
import subprocess
import sys
import tempfile
import unittest

import benchpath
from skiffbench import plot, report

RESULTS = os.path.join(benchpath.FIXTURES, "results_small.json")
HAVE_GNUPLOT = plot.detect_terminal() is not None


def table_rows(md, workload):
    """The table rows (as lists of cells) of one workload's section."""
    section = md.split(f"## {workload}\n", 1)[1].split("\n## ", 1)[0]
    return [[c.strip() for c in line.strip("|").split("|")]
            for line in section.splitlines() if line.startswith("| ")]


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def build(self, **kw):
        return report.build_report(report.load_results(RESULTS), self.out,
                                   raw_path=RESULTS, **kw)

    def test_table_has_verdicts(self):
        md = self.build(plots=False)
        rows = table_rows(md, "tcp-g2h")
        header = rows[0]
        self.assertEqual(header[-1], "verdict")
        self.assertIn("95% CI", header)
        self.assertIn("p (MWU)", header)
        by_key = {(r[0], r[1]): r for r in rows[1:]}
        self.assertEqual(by_key[("throughput_gbps ↑", "skiff-vhost")][-1],
                         "faster")
        self.assertEqual(by_key[("throughput_gbps ↑", "skiff-trap")][-1],
                         "slower")
        self.assertEqual(by_key[("exits_per_mb ↓", "skiff-vhost")][-1],
                         "within noise")
        self.assertEqual(by_key[("exits_per_mb ↓", "skiff-trap")][-1],
                         "slower")
        self.assertEqual(by_key[("throughput_gbps ↑", "skiff-vhost")][2],
                         "10.1 [9.8–10.4]")

    def test_failed_runs_unknown_metrics_and_raw_copy(self):
        md = self.build(plots=False)
        self.assertIn("rep 4 failed, not counted", md)
        self.assertIn("mystery_counter has no direction", md)
        rr = {r[0]: r for r in table_rows(md, "rr")[1:]}
        # 3 vs 2 numeric runs: too few for any verdict.
        self.assertEqual(rr["mystery_counter"][-1], "insufficient data")
        self.assertTrue(filecmp.cmp(RESULTS,
                                    os.path.join(self.out, "results.json"),
                                    shallow=False))

    def test_deterministic(self):
        one = self.build(plots=False)
        two = self.build(plots=False)
        self.assertEqual(one, two)

    @unittest.skipUnless(HAVE_GNUPLOT, "gnuplot with png/svg not installed")
    def test_plots_written(self):
        md = self.build()
        ext = plot.detect_terminal()[1]
        for workload in ("tcp-g2h", "rr"):
            image = os.path.join(self.out, f"{workload}.{ext}")
            self.assertTrue(os.path.getsize(image) > 0, image)
            self.assertIn(f"]({workload}.{ext})", md)

    def test_baseline_errors(self):
        doc = report.load_results(RESULTS)
        with self.assertRaisesRegex(ValueError, "has no samples"):
            report.build_report(doc, self.out, baseline="nope", plots=False)
        del doc["meta"]["baseline"]
        with self.assertRaisesRegex(ValueError, "no baseline"):
            report.build_report(doc, self.out, plots=False)

    def test_validation(self):
        for bad in ([], {"samples": {}}, {"samples": [{"config": "a"}]},
                    {"samples": [{"config": "a", "workload": "w",
                                  "metrics": []}]}):
            with self.assertRaises(ValueError):
                report.validate(bad)

    def test_cli(self):
        res = subprocess.run(
            [sys.executable, os.path.join(benchpath.BENCH, "report.py"),
             RESULTS, "--out", self.out, "--baseline", "skiff-vhost",
             "--no-plots"], capture_output=True, text=True)
        self.assertEqual(res.returncode, 0, res.stderr)
        with open(os.path.join(self.out, "report.md")) as f:
            self.assertIn("baseline skiff-vhost median", f.read())
        res = subprocess.run(
            [sys.executable, os.path.join(benchpath.BENCH, "report.py"),
             RESULTS, "--out", self.out, "--baseline", "nope"],
            capture_output=True, text=True)
        self.assertEqual(res.returncode, 2)
        self.assertIn("nope", res.stderr)


class CollectTest(unittest.TestCase):
    def test_collect_then_report(self):
        fx = benchpath.FIXTURES
        collect = os.path.join(benchpath.BENCH, "collect.py")
        with tempfile.TemporaryDirectory() as tmp:
            results = os.path.join(tmp, "results.json")
            console = os.path.join(tmp, "console.log")
            with open(console, "w") as f:
                f.write("SKIFF-METRIC: kvm_exits=2385510\n")
            for rep in range(1, 5):
                for cfg in ("base", "cand"):
                    cmd = [sys.executable, collect, results, "--config", cfg,
                           "--workload", "tcp", "--rep", str(rep),
                           "--iperf3", os.path.join(fx, "iperf3_tcp.json"),
                           "--console", console, "--metric",
                           f"mem_overhead_kib={1000 + rep}",
                           "--meta", "baseline=base", "--meta", "reps=4"]
                    subprocess.run(cmd, check=True, capture_output=True)
            bad = subprocess.run(
                [sys.executable, collect, results, "--config", "cand",
                 "--workload", "tcp", "--rep", "5", "--iperf3",
                 os.path.join(fx, "iperf3_error.json")],
                capture_output=True, text=True)
            self.assertEqual(bad.returncode, 3)
            with open(results) as f:
                doc = json.load(f)
            self.assertEqual(doc["meta"], {"baseline": "base", "reps": 4})
            self.assertEqual(len(doc["samples"]), 9)
            m = doc["samples"][0]["metrics"]
            self.assertAlmostEqual(m["exits_per_mb"], 2385510 / 2385.5104)
            self.assertIn("unable to connect", doc["samples"][-1]["error"])
            out = os.path.join(tmp, "out")
            md = report.build_report(report.load_results(results), out,
                                     plots=False, raw_path=results)
            rows = {r[0]: r for r in table_rows(md, "tcp")[1:]}
            # Identical inputs on both sides: nothing to tell apart.
            self.assertEqual(rows["throughput_gbps ↑"][-1], "within noise")
            self.assertIn("rep 5 failed", md)


if __name__ == "__main__":
    unittest.main()
