# SPDX-License-Identifier: Apache-2.0
"""BENCHMARKS.md is what `make benchmarks-md` writes (issue 35.1), and
the generator refuses runs it cannot stand behind."""

import copy
import json
import os
import shutil
import tempfile
import unittest

import benchpath

from skiffbench import headline


def sample(config, rep, value, transactions=1000):
    return {"config": config, "workload": "rr", "rep": rep,
            "metrics": {"latency_p99_us": value,
                        "rr_transactions": transactions + rep}}


RUN = {"schema": 1,
       "meta": {"skiff": "abc1234", "date": "2026-12-05T00:00:00Z",
                "reps": 6, "secs_per_run": 3, "command": "bench/run.sh x",
                "testbed": "t", "machine": "m", "qemu": "q",
                "kvmtool": "k" * 40, "cmdline a": "a run",
                "cmdline kvmtool": "lkvm run"},
       "samples": ([sample("a", r, 100 + r) for r in range(1, 7)]
                   + [sample("kvmtool", r, 200 + r, 2000)
                      for r in range(1, 7)])}
INDEX = {"tables": [{"title": "T", "run": "r1", "pairs": [["a", "kvmtool"]],
                     "rows": [["rr", "latency_p99_us"]]}],
         "asymmetries": ["kvmtool is different"]}


class FakeRepo:
    def __init__(self, run=RUN):
        self.dir = tempfile.mkdtemp()
        os.makedirs(os.path.join(self.dir, "docs", "bench", "r1"))
        with open(os.path.join(self.dir, headline.INDEX), "w") as f:
            json.dump(INDEX, f)
        with open(os.path.join(self.dir, "docs", "bench", "r1",
                               "results.json"), "w") as f:
            json.dump(run, f)

    def __enter__(self):
        return self.dir

    def __exit__(self, *exc):
        shutil.rmtree(self.dir)


class HeadlineTest(unittest.TestCase):
    def test_benchmarks_md_is_generated(self):
        with open(os.path.join(benchpath.REPO, "BENCHMARKS.md")) as f:
            committed = f.read()
        self.assertEqual(committed, headline.render(benchpath.REPO),
                         "BENCHMARKS.md is not what `make benchmarks-md` "
                         "writes: run it and commit the result")
        self.assertLessEqual(committed.count("\n"), 200)

    def test_row_has_ratio_interval_verdict_n_and_observations(self):
        with FakeRepo() as repo:
            text = headline.render(repo, iters=200)
        row = [line for line in text.splitlines()
               if line.startswith("| rr: p99")][0]
        self.assertIn("each run's p99 of ≥ 1,001 transactions", row)
        self.assertIn("| 0.51× |", row)
        self.assertIn("**win**", row)
        self.assertIn("| 6/6 |", row)
        self.assertIn(headline.KVMTOOL_NOTE, text)
        self.assertIn("Against kvmtool: 1 win (of 1 comparisons)", text)
        self.assertIn("a: a run", text)

    def test_row_with_its_own_pairs(self):
        index = copy.deepcopy(INDEX)
        index["tables"][0]["pairs"] = [["a", "nobody"]]
        index["tables"][0]["rows"] = [["rr", "latency_p99_us",
                                       [["a", "kvmtool"]]]]
        with FakeRepo() as repo:
            with open(os.path.join(repo, headline.INDEX), "w") as f:
                json.dump(index, f)
            text = headline.render(repo, iters=200)
        rows = [line for line in text.splitlines() if line.startswith("| rr: p99")]
        self.assertEqual(len(rows), 1)
        self.assertIn("| a | kvmtool |", rows[0])

    def test_dirty_run_refused(self):
        run = copy.deepcopy(RUN)
        run["meta"]["skiff"] = "abc1234-dirty"
        with FakeRepo(run) as repo:
            with self.assertRaisesRegex(ValueError, "r1: built from a dirty"):
                headline.render(repo, iters=200)


if __name__ == "__main__":
    unittest.main()
