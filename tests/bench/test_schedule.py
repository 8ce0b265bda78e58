# SPDX-License-Identifier: Apache-2.0
"""Interleaved schedule and progress line."""

import io
import subprocess
import sys
import unittest

import benchpath
from skiffbench import schedule
from skiffbench.schedule import Run


class ScheduleTest(unittest.TestCase):
    def test_interleaved_round_major(self):
        runs = schedule.make_schedule(["A", "B"], ["boot", "tcp"], 2)
        self.assertEqual([(r.config, r.workload, r.rep) for r in runs], [
            ("A", "boot", 1), ("B", "boot", 1), ("A", "tcp", 1),
            ("B", "tcp", 1), ("A", "boot", 2), ("B", "boot", 2),
            ("A", "tcp", 2), ("B", "tcp", 2)])

    def test_every_run_once_and_seeded_shuffle_reproducible(self):
        configs = ["a", "b", "c", "d"]
        one = schedule.make_schedule(configs, ["w1", "w2"], 5, seed=3)
        two = schedule.make_schedule(configs, ["w1", "w2"], 5, seed=3)
        self.assertEqual(one, two)
        self.assertEqual(len(set(one)), 4 * 2 * 5)
        self.assertEqual(len(one), 40)
        # Within a round, each workload sees the round's config order.
        for rep in range(1, 6):
            w1 = [r.config for r in one if r.rep == rep and r.workload == "w1"]
            w2 = [r.config for r in one if r.rep == rep and r.workload == "w2"]
            self.assertEqual(w1, w2)
            self.assertEqual(sorted(w1), configs)
        orders = {tuple(r.config for r in one if r.rep == k)
                  for k in range(1, 6)}
        self.assertGreater(len(orders), 1, "seeded shuffle never shuffled")

    def test_bad_input(self):
        with self.assertRaises(ValueError):
            schedule.make_schedule(["a"], ["w"], 0)
        with self.assertRaises(ValueError):
            schedule.make_schedule(["a", "a"], ["w"], 1)


class ProgressTest(unittest.TestCase):
    def test_line_and_estimate(self):
        run = Run("skiff-vhost", "tcp-g2h", 2)
        # 4 runs done in 100 s -> 25 s each; 10 - 4 = 6 left -> 150 s.
        line = schedule.progress_line(5, 10, run, 100.0)
        self.assertEqual(line, "[5/10] skiff-vhost tcp-g2h rep 2 \u2014 "
                               "elapsed 1m40s, ~2m30s left")
        first = schedule.progress_line(1, 10, run, 0.0)
        self.assertTrue(first.endswith("time left unknown"))

    def test_format_duration(self):
        self.assertEqual(schedule.format_duration(59.6), "1m00s")
        self.assertEqual(schedule.format_duration(3725), "1h02m")
        self.assertEqual(schedule.format_duration(7), "7s")

    def test_stateful_printer(self):
        t = [0.0]
        out = io.StringIO()
        p = schedule.Progress(3, out=out, clock=lambda: t[0])
        p.start(Run("a", "w", 1))
        t[0] = 30.0
        p.start(Run("b", "w", 1))
        self.assertIn("[2/3] b w rep 1 \u2014 elapsed 30s, ~1m00s left",
                      out.getvalue())

    def test_cli_list(self):
        res = subprocess.run(
            [sys.executable, benchpath.BENCH + "/skiffbench/schedule.py",
             "list", "--configs", "a,b", "--workloads", "boot", "--reps",
             "2"], capture_output=True, text=True, check=True)
        self.assertEqual(res.stdout.splitlines(), [
            "1\t4\ta\tboot\t1", "2\t4\tb\tboot\t1",
            "3\t4\ta\tboot\t2", "4\t4\tb\tboot\t2"])


if __name__ == "__main__":
    unittest.main()
