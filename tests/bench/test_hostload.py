# SPDX-License-Identifier: Apache-2.0
"""The per-run idle check: others' share of the host from /proc, the
run windows the console markers open and close, and what ingest does with
a contaminated run (recorded, not counted, queued for a redo) and with a
round that only redoes some runs."""

import json
import os
import tempfile
import unittest

import benchpath
from skiffbench import hostload, report, rounds
from test_rounds import console_blob, make_tar


class ShareTest(unittest.TestCase):
    def test_others_pct(self):
        # 400 ticks of machine time, 300 busy, 200 of them ours: 25%.
        self.assertAlmostEqual(hostload.others_pct((100, 1000, 50),
                                                   (400, 1400, 250)), 25.0)
        self.assertEqual(hostload.others_pct((0, 0, 0), (10, 0, 0)), 0.0)
        # Ours more than busy (tick rounding): never below 0.
        self.assertEqual(hostload.others_pct((0, 0, 0), (10, 100, 12)), 0.0)

    def test_tree_ticks(self):
        table = {1: (0, 5), 10: (1, 100), 11: (10, 40), 12: (11, 2),
                 20: (1, 1000), 30: (99, 7)}
        self.assertEqual(hostload.tree_ticks(table, [10]), 142)
        self.assertEqual(hostload.tree_ticks(table, [10, 30]), 149)
        self.assertEqual(hostload.tree_ticks(table, [12345]), 0)

    def test_live_proc(self):
        table = hostload.proc_table()
        self.assertIn(os.getpid(), table)
        self.assertEqual(table[os.getpid()][0], os.getppid())
        busy, total = hostload.machine_ticks()
        self.assertGreaterEqual(total, busy)


class MonitorTest(unittest.TestCase):
    def test_windows_from_markers(self):
        snaps = iter([(0, 0, 0), (100, 200, 60),     # boot window
                      (200, 400, 150), (350, 600, 250)])  # tcp window
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "load.tsv")
            mon = hostload.Monitor(path, [1], snap=lambda: next(snaps))
            for line in ("SKIFF-BENCH: start rep=2 config=vm",
                         "SKIFF-BENCH: run rep=2 config=vm workload=boot",
                         "SKIFF-BENCH: done rep=2 config=vm workload=boot "
                         "rc=0",
                         "SKIFF-BENCH: run rep=2 config=vm workload=tcp",
                         "noise",
                         "SKIFF-BENCH: done rep=2 config=vm workload=tcp "
                         "rc=0",
                         "SKIFF-BENCH: done rep=2 config=vm workload=udp "
                         "rc=0"):
                mon.line(line)
            loads = hostload.read_loads(path, 2)
        # boot, from the start marker: (100 - 60) / 200; tcp: 50 / 200.
        # The "done" without a "run" (udp) is ignored.
        self.assertEqual(loads, {("vm", "boot"): 20.0, ("vm", "tcp"): 25.0})

    def test_busy_window_counts(self):
        snaps = iter([(0, 0, 0), (300, 400, 100)])
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "load.tsv")
            mon = hostload.Monitor(path, [1], snap=lambda: next(snaps))
            mon.line("SKIFF-BENCH: run rep=1 config=a workload=rr")
            mon.line("SKIFF-BENCH: done rep=1 config=a workload=rr rc=0")
            self.assertEqual(hostload.read_loads(path, 1),
                             {("a", "rr"): 50.0})
            self.assertEqual(hostload.read_loads(path, 2), {})


class IngestLoadTest(unittest.TestCase):
    def ingest(self, loads, keep=None, configs=("b", "a")):
        files = {f"{c}/{w}/metrics": "window_s=1\nkvm_exits=10\n"
                 for c in ("a", "b") for w in ("tcp", "rr")}
        files.update({f"{c}/{w}/ping.txt": benchpath.fixture(
            "ping_busybox.txt") for c in ("a", "b") for w in ("tcp", "rr")})
        log = "SKIFF-L1: ready uptime=4\n"
        for c in configs:
            log += console_blob(3, c, make_tar(
                {k: v for k, v in files.items() if k.startswith(c + "/")}))
        d = tempfile.mkdtemp()
        self.addCleanup(lambda: __import__("shutil").rmtree(d))
        logf = os.path.join(d, "round.log")
        with open(logf, "w") as f:
            f.write(log)
        results = os.path.join(d, "results.json")
        redo = []
        ok, failed = rounds.ingest_round(
            logf, d, results, 3, list(configs), ["tcp", "rr"],
            say=lambda s: None, keep=keep, loads=loads, contam_pct=10,
            redo=redo)
        with open(results) as f:
            doc = json.load(f)
        return ok, failed, redo, doc

    def test_contaminated_run_recorded_not_counted(self):
        ok, failed, redo, doc = self.ingest({("a", "rr"): 35.0,
                                             ("b", "tcp"): 4.0})
        self.assertEqual((ok, failed), (3, 1))
        self.assertEqual(redo, [("a", "rr")])
        by = {(s["config"], s["workload"]): s for s in doc["samples"]}
        bad = by[("a", "rr")]
        self.assertTrue(bad["contaminated"])
        self.assertIn("35%", bad["error"])
        self.assertEqual(bad["host_others_pct"], 35.0)
        self.assertEqual(by[("b", "tcp")]["host_others_pct"], 4.0)
        self.assertNotIn("error", by[("b", "tcp")])
        # Positions: the round's order was b, a.
        self.assertEqual(by[("b", "rr")]["position"], 1)
        self.assertEqual(by[("a", "tcp")]["position"], 2)
        _data, counts, notes, _ = report.group(doc)
        self.assertEqual(counts["rr"], {"b": 1})
        self.assertTrue(any("contaminated" in n for n in notes))

    def test_keep_only_the_redone_runs(self):
        ok, failed, redo, doc = self.ingest({}, keep={("a", "rr")},
                                            configs=("a",))
        self.assertEqual((ok, failed, redo), (1, 0, []))
        self.assertEqual([(s["config"], s["workload"])
                          for s in doc["samples"]], [("a", "rr")])


if __name__ == "__main__":
    unittest.main()
