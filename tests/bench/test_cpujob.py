# SPDX-License-Identifier: Apache-2.0
"""The cpu workload (issue 38.3, bench/bench-cpu.sh): L2's job server
(its reply and its refusals, run here in a shell), the reply's parser,
its metrics and direction, and that native configurations skip it."""

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import benchpath
from skiffbench import cpujob, ingest, metrics

import collect

ROUND = os.path.join(benchpath.BENCH, "bench-round.sh")
CPU = os.path.join(benchpath.BENCH, "bench-cpu.sh")
LIB = os.path.join(benchpath.REPO, "tests", "testbed", "guest", "lib.sh")
SHELL = ([shutil.which("busybox"), "ash"] if shutil.which("busybox")
         else ["sh"])
HASH = "ab" * 32


def serve(request, tmp):
    """bench_cpu_serve on request, its buffer and console under tmp:
    (its reply, the console's lines)."""
    buf = os.path.join(tmp, "buf")
    con = os.path.join(tmp, "console")
    with open(buf, "wb") as f:
        f.write(b"x" * 4096)
    res = subprocess.run(
        SHELL + ["-c", '. "$0"; . "$1"; . "$2"; '
                 'BENCH_CPU_BUF=$3 BENCH_CPU_CONSOLE=$4; bench_cpu_serve',
                 LIB, ROUND, CPU, buf, con],
        input=request, capture_output=True, text=True, timeout=20,
        check=True)
    lines = open(con).read().split("\n")[:-1] if os.path.exists(con) else []
    return res.stdout, lines


class ServerTest(unittest.TestCase):
    def test_job_reports_its_work_and_time(self):
        with tempfile.TemporaryDirectory() as tmp:
            out, console = serve("cpu 3\n", tmp)
        parsed = cpujob.parse_cpu_job(out)
        self.assertEqual(parsed["mib"], 3)
        self.assertEqual(parsed["sha256"],
                         hashlib.sha256(b"x" * 4096).hexdigest())
        self.assertGreaterEqual(parsed["ms"], 0)
        # the window's markers, in order, and nothing else
        self.assertEqual(console, ["SKIFF-BENCH-L2: cpu-run",
                                   "SKIFF-BENCH-L2: cpu-end"])

    def test_bad_requests_get_one_line_and_no_job(self):
        for req, want in (("cpu 0", "bad amount 0"), ("cpu x", "bad amount x"),
                          ("cpu", "bad amount"), ("cpu 012", "bad amount"),
                          ("fio 3", "no job fio"),
                          ("cpu 5000", "over 4096 MiB")):
            with tempfile.TemporaryDirectory() as tmp:
                out, console = serve(req + "\n", tmp)
            self.assertEqual(len(out.splitlines()), 1, req)
            self.assertIn(want, out, req)
            self.assertEqual(console, [], req)
            with self.assertRaisesRegex(ValueError, "no SKIFF-CPU line"):
                cpujob.parse_cpu_job(out)


class ParserTest(unittest.TestCase):
    def test_line(self):
        self.assertEqual(
            cpujob.parse_cpu_job(f"SKIFF-CPU: mib=24 ms=3120 sha256={HASH}\n"),
            {"mib": 24, "ms": 3120, "sha256": HASH})

    def test_other_lines_around_it(self):
        text = f"\nnc: noise\nSKIFF-CPU: mib=1 ms=7 sha256={HASH}\r\n"
        self.assertEqual(cpujob.parse_cpu_job(text)["ms"], 7)

    def test_failures_say_what_came(self):
        for text, want in (("", "no output"),
                           ("sha256sum failed (rc 1)", "sha256sum failed"),
                           (f"SKIFF-CPU: mib=1 ms=7 sha256={HASH[:-1]}",
                            "no SKIFF-CPU"),
                           ("SKIFF-CPU: mib=1 ms= sha256=" + HASH,
                            "no SKIFF-CPU"),
                           (f"SKIFF-CPU: mib=1 ms=7 sha256={HASH}\n" * 2,
                            "2 SKIFF-CPU lines"),
                           (f"SKIFF-CPU: mib=0 ms=7 sha256={HASH}",
                            "no work")):
            with self.assertRaisesRegex(ValueError, want, msg=text):
                cpujob.parse_cpu_job(text)


class MetricsTest(unittest.TestCase):
    def test_lower_is_better_and_amount_informational(self):
        self.assertIs(metrics.DIRECTIONS["cpu_job_ms"][0], False)
        self.assertIsNone(metrics.DIRECTIONS["cpu_job_mib"][0])

    def test_collect_records_the_job(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "cpu.txt")
            with open(path, "w") as f:
                f.write(f"SKIFF-CPU: mib=24 ms=3120 sha256={HASH}\n")
            results = os.path.join(tmp, "r.json")
            self.assertEqual(collect.main(
                [results, "--config", "a", "--workload", "cpu", "--rep", "1",
                 "--cpu", path, "--metric", "kvm_exits=900"]), 0)
            bad = os.path.join(tmp, "bad.txt")
            with open(bad, "w") as f:
                f.write("bad amount x\n")
            self.assertEqual(collect.main(
                [results, "--config", "a", "--workload", "cpu", "--rep", "2",
                 "--cpu", bad]), 3)
            samples = json.load(open(results))["samples"]
        self.assertEqual(samples[0]["metrics"]["cpu_job_ms"], 3120)
        self.assertEqual(samples[0]["metrics"]["kvm_exits"], 900)
        self.assertEqual(samples[0]["raw"]["cpu"], path)
        self.assertIn("no SKIFF-CPU line (got: bad amount x)",
                      samples[1]["error"])

    def test_only_vms_run_it(self):
        self.assertIn("cpu", ingest.VM_ONLY)
        self.assertEqual(ingest.workloads_for("native-veth", ["cpu", "ping"],
                                              ["native-veth"]), ["ping"])
        self.assertIn(("cpu", "cpu.txt"), ingest.TOOL_FILES)


if __name__ == "__main__":
    unittest.main()
