# SPDX-License-Identifier: Apache-2.0
"""The snap and migrate workloads (issue 34.5, bench/bench-snapmig.sh):
their order in a round, who runs them, the numbers read from each VMM's
answer and the metrics' directions. The replies are in the shapes
docs/MIGRATION.md gives for skiff's send and QEMU 7.2's query-migrate
returns."""

import os
import shutil
import subprocess
import tempfile
import unittest

import benchpath
from skiffbench import ingest, metrics

ROUND = os.path.join(benchpath.BENCH, "bench-round.sh")
SNAPMIG = os.path.join(benchpath.BENCH, "bench-snapmig.sh")
SHELL = ([shutil.which("busybox"), "ash"] if shutil.which("busybox")
         else ["sh"])

SKIFF_SEND = ('{"downtime_ms":88,"downtime_sent_ms":3,"total_ms":969,'
              '"pages":33046}')
# What a held QMP connection records (bench_qmp_hold): events with QEMU's
# timestamps among the replies.
QMP_HELD = """{"return": {}}
{"return": {"status": "active", "total-time": 12}}
{"timestamp": {"seconds": 1765000000, "microseconds": 995123}, "event": "STOP"}
{"return": {"status": "completed", "downtime": 27, "total-time": 916}}
{"timestamp": {"seconds": 1765000001, "microseconds": 45}, "event": "RESUME"}
"""
QEMU_QUERY = ('{"return": {"status": "completed", "setup-time": 1, '
              '"downtime": 42, "total-time": 1830, "ram": {"transferred": '
              '123, "total": 268435456, "duplicate": 60000}}}')


def in_round(script, *args):
    """script in a shell that sourced bench-round.sh and bench-snapmig.sh
    (both only assign variables and define functions); its stdout."""
    res = subprocess.run(
        SHELL + ["-c", f'. "$0"; . "$1"; shift; {script}', ROUND, SNAPMIG,
                 *args], capture_output=True, text=True, timeout=20,
        check=True)
    return res.stdout


class OrderTest(unittest.TestCase):
    def test_snap_then_migrate_last(self):
        # They replace the VMM: every other workload runs on the VM first.
        out = in_round("bench_idle_first migrate ping snap idle tcp-g2h")
        self.assertEqual(out.split(),
                         ["idle", "ping", "tcp-g2h", "snap", "migrate"])

    def test_plan_without_them_unchanged(self):
        out = in_round("bench_idle_first ping idle")
        self.assertEqual(out.split(), ["idle", "ping"])

    def test_planned(self):
        self.assertEqual(in_round(
            'for p in "boot ping" "boot snap" "migrate"; do '
            'BENCH_PLAN_WORKLOADS=$p; bench_sm_planned && echo y || echo n; '
            'done').split(), ["n", "y", "y"])


class WhoRunsThemTest(unittest.TestCase):
    def test_kinds(self):
        out = in_round('for k in skiff qemu kvmtool native; do '
                       'bench_sm_applies $k && echo $k; done; true')
        self.assertEqual(out.split(), ["skiff", "qemu"])

    def test_native_never_plans_them(self):
        self.assertEqual(ingest.workloads_for(
            "native-veth", ["boot", "ping", "snap", "migrate"],
            ["native-veth"]), ["ping"])
        self.assertEqual(ingest.workloads_for(
            "skiff", ["snap", "migrate"], ["native-veth"]),
            ["snap", "migrate"])

    def test_known_workloads(self):
        out = in_round('echo "$BENCH_EXTRA_WORKLOADS"; echo "$BENCH_VM_ONLY"')
        extra, vm_only = out.splitlines()
        for w in ("snap", "migrate"):
            self.assertIn(w, extra.split())
            self.assertIn(w, vm_only.split())


class AnswersTest(unittest.TestCase):
    def num(self, key, text):
        return in_round('bench_sm_json "$@"', key, text).strip()

    def test_skiff_send_reply(self):
        self.assertEqual(self.num("downtime_ms", SKIFF_SEND), "88")
        self.assertEqual(self.num("total_ms", SKIFF_SEND), "969")

    def test_qemu_query_migrate(self):
        # "downtime", not "setup-time" nor "total-time" that contain it
        # as a word part, and the key's value, not the next field's.
        self.assertEqual(self.num("downtime", QEMU_QUERY), "42")
        self.assertEqual(self.num("total-time", QEMU_QUERY), "1830")

    def test_skiff_downtime_sent(self):
        # "downtime_ms" is not found inside "downtime_sent_ms", nor it
        # inside the other
        self.assertEqual(self.num("downtime_sent_ms", SKIFF_SEND), "3")

    def test_qmp_event_times(self):
        ev = 'printf "%s" "$1" >"$2"; bench_qmp_event_us "$2" "$3"'
        with tempfile.NamedTemporaryFile() as f:
            stop = in_round(ev, QMP_HELD, f.name, "STOP").strip()
            resume = in_round(ev, QMP_HELD, f.name, "RESUME").strip()
            none = in_round(ev, QMP_HELD, f.name, "SHUTDOWN").strip()
        self.assertEqual(stop, "1765000000995123")
        # 4.922 ms from the source's STOP to the target's RESUME
        self.assertEqual(int(resume) - int(stop), 4922)
        self.assertEqual(none, "")

    def test_missing_key_gives_nothing(self):
        self.assertEqual(self.num("downtime", '{"return": {}}'), "")


class DirectionsTest(unittest.TestCase):
    def test_times_lower_is_better(self):
        for name in ("snap_create_ms", "snap_restore_running_ms",
                     "snap_restore_ping_ms", "mig_total_ms",
                     "mig_downtime_ms", "mig_downtime_sent_ms", "mig_request_ms",
                     "snap_disk_kib"):
            self.assertIs(metrics.direction(name), False, name)

    def test_apparent_size_undirected(self):
        self.assertIsNone(metrics.direction("snap_bytes"))


if __name__ == "__main__":
    unittest.main()
