# SPDX-License-Identifier: Apache-2.0
"""The migrate-busy workload (issue 34.5, bench/bench-migbusy.sh): where
a plan runs it, L2's load server (run here in a shell, on a small working
set), the load's file into metrics (bench/skiffbench/dirtyjob.py), and
the pages and rounds read from each VMM's answer."""

import json
import os
import shutil
import subprocess
import tempfile
import unittest

import benchpath
from skiffbench import dirtyjob, ingest, metrics

import collect

ROUND = os.path.join(benchpath.BENCH, "bench-round.sh")
SNAPMIG = os.path.join(benchpath.BENCH, "bench-snapmig.sh")
MIGBUSY = os.path.join(benchpath.BENCH, "bench-migbusy.sh")
LIB = os.path.join(benchpath.REPO, "tests", "testbed", "guest", "lib.sh")
SHELL = ([shutil.which("busybox"), "ash"] if shutil.which("busybox")
         else ["sh"])

# A run's dirty.txt: 4 MiB passes of 20 cs (two chunks) with 30 cs
# between; L1 marks at 1000 cs, the migration lasts 1 s (to 1100);
# stopped at 1260.
DIRTY = """SKIFF-DIRTY: start mib=4 chunk_mib=2 pause_ms=150 up=850
SKIFF-DIRTY: mark up=1000 passes=3
SKIFF-DIRTY: window ms=1000
SKIFF-DIRTY: pass 1 800 850
SKIFF-DIRTY: pass 2 880 900
SKIFF-DIRTY: pass 3 930 950
SKIFF-DIRTY: pass 4 980 1000
SKIFF-DIRTY: pass 5 1030 1050
SKIFF-DIRTY: pass 6 1080 1100
SKIFF-DIRTY: pass 7 1130 1150
SKIFF-DIRTY: pass 8 1180 1200
SKIFF-DIRTY: pass 9 1230 1250
SKIFF-DIRTY: end 9 stop 1260
"""
QEMU_QUERY = ('{"return": {"status": "completed", "downtime": 56, '
              '"total-time": 1515, "ram": {"dirty-sync-count": 3, '
              '"normal-bytes": 95723520, "normal": 23370, "duplicate": 42307}}}')
SKIFF_LOG = """skiff: first KVM_RUN after 439345 us
skiff: migration: round 0 sent 23232 pages in 562 ms
skiff: migration: round 1 sent 149 pages in 1 ms
skiff: migration: switch: last 0 pages 0 ms, state 11874 bytes to READY 6 ms, to RUNNING 27 ms
skiff: migration: done to unix:/tmp/bench/mig.sock: downtime 35 ms (6 ms to the last byte sent), total 606 ms, 23381 pages sent
"""


def in_round(script, *args):
    """script in a shell that sourced bench-round.sh, bench-snapmig.sh and
    bench-migbusy.sh (they only assign variables and define functions)."""
    res = subprocess.run(
        SHELL + ["-c", f'. "$0"; . "$1"; . "$2"; shift 2; {script}', ROUND,
                 SNAPMIG, MIGBUSY, *args], capture_output=True, text=True,
        timeout=20, check=True)
    return res.stdout


def serve(request, d):
    """bench_mb_serve on request, its working set in d (2 MiB in 1 MiB
    chunks, 20 ms pauses): its reply."""
    res = subprocess.run(
        SHELL + ["-c", '. "$0"; . "$1"; . "$2"; BENCH_MB_DIR=$3 '
                 'BENCH_MB_MIB=2 BENCH_MB_CHUNK_MIB=1 BENCH_MB_PAUSE_MS=20; '
                 'bench_mb_serve',
                 LIB, ROUND, MIGBUSY, d],
        input=request + "\n", capture_output=True, text=True, timeout=90,
        check=True)
    return res.stdout


class PlanTest(unittest.TestCase):
    def test_last_after_migrate(self):
        # It replaces the VMM: after every other workload, after the
        # idle guest's migrate.
        out = in_round("bench_idle_first migrate-busy ping migrate snap "
                       "balloon idle")
        self.assertEqual(out.split(), ["idle", "ping", "balloon", "snap",
                                       "migrate", "migrate-busy"])
        self.assertEqual(in_round("bench_idle_first migrate-busy ping").split(),
                         ["ping", "migrate-busy"])

    def test_planned_alone_gives_the_vmm_its_socket(self):
        out = in_round('for p in "boot ping" "migrate-busy" "ping migrate-busy"; '
                       'do BENCH_PLAN_WORKLOADS=$p; '
                       'bench_sm_planned && echo y || echo n; '
                       'bench_ctl_planned && echo c || echo -; done')
        self.assertEqual(out.split(), ["n", "-", "y", "c", "y", "c"])

    def test_skiff_and_qemu_only(self):
        # bench_vm skips BENCH_LAST_WORKLOADS for other kinds (kvmtool)
        out = in_round('echo "$BENCH_LAST_WORKLOADS"; echo "$BENCH_EXTRA_WORKLOADS"; '
                       'echo "$BENCH_VM_ONLY"; echo "$BENCH_WORKLOADS"')
        last, extra, vm_only, default = out.splitlines()
        self.assertIn("migrate-busy", last.split())
        self.assertIn("migrate-busy", extra.split())
        self.assertIn("migrate-busy", vm_only.split())
        self.assertNotIn("migrate-busy", default.split())
        self.assertEqual(ingest.workloads_for(
            "native-veth", ["ping", "migrate-busy"], ["native-veth"]),
            ["ping"])
        self.assertEqual(ingest.workloads_for(
            "qemu-rtc-pvh", ["ping", "migrate-busy"], ["native-veth"]),
            ["ping", "migrate-busy"])

    def test_not_packed_is_a_failed_run(self):
        with tempfile.TemporaryDirectory() as d:
            subprocess.run(
                SHELL + ["-c", '. "$0"; . "$1"; vm_kind=skiff; '
                         'bench_sm_run migrate-busy "$2"', ROUND, SNAPMIG, d],
                capture_output=True, text=True, timeout=20, check=True)
            with open(os.path.join(d, "error")) as f:
                self.assertIn("bench-migbusy.sh was not packed", f.read())


class ServerTest(unittest.TestCase):
    def test_start_mark_stop(self):
        with tempfile.TemporaryDirectory() as d:
            start = serve("start 60", d)
            self.assertRegex(start, r"^SKIFF-DIRTY: start mib=2 chunk_mib=1 "
                             r"pause_ms=20 up=\d+\n$")
            # the working set is there, its size, and not zero pages
            with open(os.path.join(d, "ws"), "rb") as f:
                data = f.read()
            self.assertEqual(len(data), 2 << 20)
            self.assertNotEqual(data[:4096], bytes(4096))
            self.assertEqual(serve("start 60", d), "a load runs already\n")
            mark = serve("mark", d)
            self.assertRegex(mark, r"^SKIFF-DIRTY: mark up=\d+ passes=\d+\n$")
            stop = serve("stop", d)
            self.assertEqual(sorted(os.listdir(d)), [])
        text = start + mark + "SKIFF-DIRTY: window ms=0\n" + stop
        parsed = dirtyjob.parse_dirty(text)
        self.assertGreaterEqual(len(parsed["passes"]), 1)
        self.assertEqual(parsed["mib"], 2)

    def test_chunks_must_divide_the_set(self):
        with tempfile.TemporaryDirectory() as d:
            res = subprocess.run(
                SHELL + ["-c", '. "$0"; . "$1"; . "$2"; BENCH_MB_DIR=$3 '
                         'BENCH_MB_MIB=3 BENCH_MB_CHUNK_MIB=2; bench_mb_serve',
                         LIB, ROUND, MIGBUSY, d], input="start 60\n",
                capture_output=True, text=True, timeout=20, check=True)
            self.assertEqual(res.stdout,
                             "3 MiB is no multiple of 2 MiB chunks\n")
            self.assertEqual(os.listdir(d), [])

    def test_bad_requests_get_one_line_and_no_load(self):
        for req, want in (("start 0", "bad bound '0'"),
                          ("start x", "bad bound 'x'"),
                          ("start", "bad bound ''"),
                          ("start 012", "bad bound '012'"),
                          ("start 601", "bound 601 over 600 s"),
                          ("fill 3", "no job 'fill'"),
                          ("start 60 chunks", "bad bound '60 chunks'"),
                          ("mark", "no load runs"),
                          ("stop", "no load runs")):
            with tempfile.TemporaryDirectory() as d:
                out = serve(req, d)
                self.assertEqual(out, want + "\n", req)
                self.assertEqual(os.listdir(d), [], req)


class ParserTest(unittest.TestCase):
    def test_rates(self):
        parsed = dirtyjob.parse_dirty(DIRTY)
        self.assertEqual((parsed["mib"], parsed["mark_cs"],
                          parsed["window_ms"], parsed["end_cs"]),
                         (4, 1000, 1000, 1260))
        m = dirtyjob.from_dirty(parsed)
        # [1000, 1100]: passes 5 and 6 (1030-1050, 1080-1100), 8 MiB in 1 s
        self.assertAlmostEqual(m["mig_load_mib_per_s"], 8.0)
        self.assertAlmostEqual(m["mig_load_passes_per_s"], 2.0)
        # [850, 1000], after the first pass: passes 2-4, 12 MiB in 1.5 s
        self.assertAlmostEqual(m["mig_load_free_mib_per_s"], 8.0)
        self.assertEqual(m["mig_load_set_mib"], 4)
        # a first pass within one clock tick is not counted either
        m = dirtyjob.from_dirty(dirtyjob.parse_dirty(
            DIRTY.replace("pass 1 800 850", "pass 1 850 850")))
        self.assertAlmostEqual(m["mig_load_free_mib_per_s"], 8.0)

    def test_a_cut_pass_counts_its_part(self):
        passes = [(0, 100), (200, 200)]
        self.assertAlmostEqual(dirtyjob.mib_written(passes, 32, 50, 100), 16)
        self.assertAlmostEqual(dirtyjob.mib_written(passes, 32, 75, 250), 40)
        self.assertAlmostEqual(dirtyjob.mib_written(passes, 32, 201, 300), 0)

    def test_failures_say_what_is_wrong(self):
        for text, want in (
                ("", "no output"),
                ("a load runs already", "no SKIFF-DIRTY line"),
                (DIRTY.replace("end 9 stop", "end 9 bound"),
                 r"ended \(bound\) before L1 stopped it"),
                (DIRTY.replace("stop 1260", "stop 1090"),
                 "stopped before the migration ended"),
                (DIRTY.replace("SKIFF-DIRTY: mark up=1000 passes=3\n", ""),
                 "0 mark lines"),
                (DIRTY.replace("SKIFF-DIRTY: window ms=1000\n", "") + "",
                 "0 window lines"),
                (DIRTY.replace("SKIFF-DIRTY: end 9 stop 1260\n", ""),
                 "no end line"),
                (DIRTY.replace("end 9", "end 10"), "9 pass lines for 10"),
                (DIRTY.replace("mib=4", "mib=0"), "no working set")):
            with self.assertRaisesRegex(ValueError, want, msg=text):
                dirtyjob.parse_dirty(text)

    def test_collect_records_the_load(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "dirty.txt")
            with open(path, "w") as f:
                f.write(DIRTY)
            results = os.path.join(tmp, "r.json")
            self.assertEqual(collect.main(
                [results, "--config", "a", "--workload", "migrate-busy",
                 "--rep", "1", "--dirty", path,
                 "--metric", "mig_downtime_ms=40"]), 0)
            with open(results) as f:
                sample = json.load(f)["samples"][0]
        self.assertEqual(sample["metrics"]["mig_load_mib_per_s"], 8.0)
        self.assertEqual(sample["metrics"]["mig_downtime_ms"], 40)
        self.assertEqual(sample["raw"]["dirty"], path)
        self.assertIn(("dirty", "dirty.txt"), ingest.TOOL_FILES)

    def test_load_and_counts_informational(self):
        for name in ("mig_load_mib_per_s", "mig_load_passes_per_s",
                     "mig_load_free_mib_per_s", "mig_load_set_mib",
                     "mig_pages", "mig_precopy_rounds"):
            self.assertIn(name, metrics.DIRECTIONS)
            self.assertIsNone(metrics.direction(name), name)


class CountsTest(unittest.TestCase):
    def test_qemu_pages_and_rounds(self):
        # 3 syncs: the first (its pass over RAM), one more, the last in
        # the downtime: 2 pre-copy rounds, as skiff's 0 and 1
        self.assertEqual(in_round('bench_sm_qemu_counts "$1"', QEMU_QUERY)
                         .split(), ["mig_pages=23370", "mig_precopy_rounds=2"])
        self.assertEqual(in_round('bench_sm_qemu_counts "$1"',
                                  '{"return": {}}'), "")

    def test_skiff_rounds_from_its_log(self):
        with tempfile.NamedTemporaryFile("w") as f:
            f.write(SKIFF_LOG)
            f.flush()
            self.assertEqual(in_round('bench_sm_skiff_rounds "$1"', f.name)
                             .strip(), "2")
        self.assertEqual(in_round('bench_sm_skiff_rounds /nonexistent'), "")


if __name__ == "__main__":
    unittest.main()
