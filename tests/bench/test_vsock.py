# SPDX-License-Identifier: Apache-2.0
"""The vsock and balloon workloads (issue 33.6, bench/bench-vsock.sh):
vsock-io's outputs and the balloon's VmRSS trace into metrics, which
configurations run which workloads, and the L1 side's rules. The vsock-io
fixtures were captured on this host with tests/testbed/guest/vsock-bench.c
against its own serve-uds (the hybrid protocol): vsock_send.txt (send, 1 s),
vsock_recv.txt (recv, 1 s), vsock_rr.txt (rr, 200 x 64 bytes)."""

import json
import os
import shutil
import subprocess
import tempfile
import unittest

import benchpath
from benchpath import fixture
from skiffbench import drift, ingest, metrics, parsers, rawcheck, report, rounds
from test_rounds import console_blob, make_tar

ROUND = os.path.join(benchpath.BENCH, "bench-round.sh")
VSOCK = os.path.join(benchpath.BENCH, "bench-vsock.sh")
SHELL = ([shutil.which("busybox"), "ash"] if shutil.which("busybox")
         else ["sh"])


def in_round(script, *args):
    """script in a shell that sourced bench-round.sh and bench-vsock.sh
    (both only assign variables and define functions); its stdout."""
    res = subprocess.run(
        SHELL + ["-c", f'. "$0"; . "$1"; shift; {script}', ROUND, VSOCK,
                 *args], capture_output=True, text=True, timeout=20,
        check=True)
    return res.stdout


def trace(before, after, actual=None, t0=1_000_000_000, step_ms=50):
    """A balloon trace as bench_balloon_run writes it: VmRSS KiB before
    the request, then one sample each step_ms."""
    lines = ["target_mib 128", f"rss {t0 - 10_000_000} {before}", f"t0 {t0}"]
    for i, kib in enumerate(after, 1):
        lines.append(f"rss {t0 + i * step_ms * 1_000_000} {kib}")
    if actual is not None:
        lines.append(f"actual {t0 + actual * 1_000_000}")
    return "\n".join(lines) + "\n"


class VsockIoTest(unittest.TestCase):
    def test_send(self):
        r = parsers.parse_vsock_io(fixture("vsock_send.txt"))
        self.assertEqual((r["kind"], r["bytes"], r["us"]),
                         ("sent", 2661351424, 1000224))
        m = metrics.from_vsock(r)
        self.assertAlmostEqual(m["vsock_mb_s"], 2661351424 / 1000224)
        self.assertAlmostEqual(m["mb_moved"], 2661.351424)

    def test_recv(self):
        r = parsers.parse_vsock_io(fixture("vsock_recv.txt"))
        self.assertEqual((r["kind"], r["bytes"]), ("received", 2818244608))

    def test_rr_percentiles_of_every_round_trip(self):
        text = fixture("vsock_rr.txt")
        r = parsers.parse_vsock_io(text)
        self.assertEqual((r["count"], r["size"], r["us"]), (200, 64, 4628))
        self.assertEqual(len(r["rtt_us"]), 200)
        self.assertEqual(r["rtt_us"][0], 42.43)
        m = metrics.from_vsock(r)
        rtts = sorted(int(line.split()[1]) / 1000 for line in
                      text.splitlines() if line.startswith("rtt_ns "))
        # type 7: p50 of 200 is the mean of the 100th and 101st
        self.assertAlmostEqual(m["vsock_rtt_p50_us"],
                               (rtts[99] + rtts[100]) / 2)
        self.assertAlmostEqual(m["vsock_rtt_p99_us"],
                               rtts[197] + (rtts[198] - rtts[197]) * 0.01)
        self.assertEqual(m["vsock_rtt_max_us"], rtts[-1])
        self.assertEqual(m["rr_transactions"], 200)

    def test_rr_cut_short(self):
        text = fixture("vsock_rr.txt")
        cut = "\n".join(text.splitlines()[:50]) + "\n"
        with self.assertRaisesRegex(ValueError, "cut short: 48 of 200"):
            parsers.parse_vsock_io(cut)
        # the count must be the header's, not what the lines happen to be
        short = text.replace("rr 200 round trips", "rr 199 round trips")
        with self.assertRaisesRegex(ValueError, "cut short"):
            parsers.parse_vsock_io(short)

    def test_failure_gives_vsock_ios_own_line(self):
        for text, want in (
                ("vsock-io: port 5201 refused: no OK line\n", "refused"),
                ("vsock-io: connect: Connection reset by peer\n", "reset"),
                # an rr to a peer that never echoed, killed by timeout
                ("vsock-io: OK 1\n", "no result line"),
                ("", "no result line")):
            with self.assertRaisesRegex(ValueError, want):
                parsers.parse_vsock_io(text)

    def test_nothing_moved(self):
        with self.assertRaisesRegex(ValueError, "nothing measured"):
            parsers.parse_vsock_io("vsock-io: sent 0 bytes in 12 us\n")

    def test_directions(self):
        self.assertIs(metrics.direction("vsock_mb_s"), True)
        for name in ("vsock_rtt_p50_us", "vsock_rtt_p99_us",
                     "vsock_rtt_avg_us", "vsock_rtt_max_us"):
            self.assertIs(metrics.direction(name), False, name)


class BalloonTraceTest(unittest.TestCase):
    def test_drop_time_and_rate(self):
        # 300 MiB resident, 128 MiB back in the 4th sample (200 ms), the
        # next ones within 1 MiB of the last: the drop counts to there.
        after = [300 * 1024, 250 * 1024, 200 * 1024, 172 * 1024 + 512,
                 172 * 1024 + 100, 172 * 1024, 172 * 1024]
        r = parsers.parse_balloon(trace(300 * 1024, after, actual=260))
        self.assertEqual(r["drop_kib"], 128 * 1024)
        self.assertAlmostEqual(r["recover_ms"], 200.0)
        self.assertAlmostEqual(r["mib_per_s"], 128 / 0.2)
        self.assertAlmostEqual(r["actual_ms"], 260.0)
        m = metrics.from_balloon(r)
        self.assertEqual(m["balloon_rss_drop_mib"], 128.0)
        self.assertEqual(m["balloon_rss_before_mib"], 300.0)
        self.assertEqual(m["balloon_rss_after_mib"], 172.0)
        self.assertAlmostEqual(m["balloon_mib_per_s"], 640.0)
        self.assertAlmostEqual(m["balloon_recover_ms"], 200.0)

    def test_no_drop_is_zero_per_second(self):
        r = parsers.parse_balloon(trace(300 * 1024, [300 * 1024] * 4,
                                        actual=150))
        self.assertEqual(r["mib_per_s"], 0.0)
        self.assertIsNone(r["recover_ms"])
        self.assertNotIn("balloon_recover_ms", metrics.from_balloon(r))

    def test_failures(self):
        with self.assertRaisesRegex(ValueError, "never said"):
            parsers.parse_balloon(trace(300 * 1024, [200 * 1024] * 3))
        with self.assertRaisesRegex(ValueError, "PATCH /balloon: 400"):
            parsers.parse_balloon(trace(300 * 1024, [300 * 1024])
                                  + "error PATCH /balloon: 400 {}\n")
        with self.assertRaisesRegex(ValueError, "samples on both sides"):
            parsers.parse_balloon("target_mib 128\nt0 5\nactual 9\n")
        with self.assertRaisesRegex(ValueError, "bad line"):
            parsers.parse_balloon(trace(300, [200], actual=1)
                                  + "rss 12 lots\n")

    def test_directions(self):
        self.assertIs(metrics.direction("balloon_mib_per_s"), True)
        self.assertIs(metrics.direction("balloon_rss_drop_mib"), True)
        self.assertIs(metrics.direction("balloon_recover_ms"), False)
        # each VMM's own API polled its own way: not compared
        self.assertIsNone(metrics.direction("balloon_actual_ms"))

    def test_fixed_work_judges_the_cpu_per_run(self):
        # 128 MiB for every VMM: no work unit, so the VMM's CPU seconds
        # of the window are compared as in boot.
        doc = {"samples": [{"config": "a", "workload": "balloon",
                            "metrics": metrics.from_balloon(
                                parsers.parse_balloon(trace(
                                    300 * 1024, [172 * 1024] * 3,
                                    actual=100)))}]}
        self.assertFalse(report.work_varies(doc, "balloon"))


class WhoRunsThemTest(unittest.TestCase):
    W = ["boot", "vsock-h2g", "vsock-rr", "balloon", "ping"]

    def test_only_configs_with_a_vsock_run_vsock(self):
        self.assertEqual(ingest.workloads_for("v", self.W, [], [], ["v"]),
                         self.W)
        self.assertEqual(ingest.workloads_for("n", self.W, [], [], ["v"]),
                         ["boot", "balloon", "ping"])
        self.assertEqual(ingest.workloads_for("x", self.W, ["x"], [], []),
                         ["ping"])

    def test_plan_counts_only_runs_that_apply(self):
        plan = rounds.plan_rounds(["v", "n"], self.W, 2, seed=1,
                                  vsocks=["v"])
        self.assertEqual([n for _, _, n in plan], [5 + 3, 5 + 3])

    def test_scenario_rule(self):
        names = in_round("bench_vsock_configs").split()
        self.assertEqual(sorted(names), ["qemu-vhost-vsock",
                                         "skiff-base-vsock-hybrid",
                                         "skiff-base-vsock-vhost",
                                         "skiff-vsock-hybrid",
                                         "skiff-vsock-vhost"])
        out = in_round(
            'for w in vsock-rr blk-seqread balloon; do for v in 0 1; do '
            'bench_applies $w 0 $v && echo y || echo n; done; done')
        self.assertEqual(out.split(), ["n", "y", "n", "n", "y", "y"])

    def test_targets(self):
        out = in_round('for c in skiff-vsock-hybrid skiff-vsock-vhost '
                       'qemu-vhost-vsock skiff-ioeventfd; do '
                       'echo "$c=$(bench_vsock_target $(bench_config_line $c))"; '
                       'done')
        self.assertEqual(out.split(), [
            "skiff-vsock-hybrid=/tmp/bench/v.sock", "skiff-vsock-vhost=3",
            "qemu-vhost-vsock=3", "skiff-ioeventfd="])

    def test_balloon_last_before_those_replacing_the_vmm(self):
        out = in_round("bench_idle_first migrate balloon ping snap idle "
                       "vsock-rr")
        self.assertEqual(out.split(), ["idle", "ping", "vsock-rr", "balloon",
                                       "snap", "migrate"])

    def test_kinds_without_bench_snapmig(self):
        # L1 sources bench-snapmig.sh only when snap or migrate is
        # planned: a plan with balloon alone must still know the kinds.
        res = subprocess.run(
            SHELL + ["-c", '. "$0"; for k in skiff qemu kvmtool; do '
                     'bench_sm_applies $k && echo $k; done; true', ROUND],
            capture_output=True, text=True, timeout=20, check=True)
        self.assertEqual((res.stdout.split(), res.stderr), (["skiff", "qemu"], ""))

    def test_control_socket_and_balloon_when_planned(self):
        out = in_round('for p in "boot ping" "balloon" "snap"; do '
                       'BENCH_PLAN_WORKLOADS=$p; '
                       'bench_ctl_planned && echo c || echo -; '
                       'bench_balloon_planned && echo b || echo -; done')
        self.assertEqual(out.split(), ["-", "-", "c", "b", "c", "-"])

    def test_known_workloads(self):
        out = in_round('echo "$BENCH_EXTRA_WORKLOADS"; echo "$BENCH_VM_ONLY"')
        extra, vm_only = out.splitlines()
        for w in ("vsock-h2g", "vsock-g2h", "vsock-rr", "balloon"):
            self.assertIn(w, extra.split())
        self.assertIn("balloon", vm_only.split())
        self.assertIn("balloon", ingest.VM_ONLY)

    def test_fill_server_refuses_bad_requests(self):
        for req, want in (("grow 12", "bad request"), ("fill", "bad request"),
                          ("fill 12x", "bad size"), ("fill 0", "bad request")):
            out = in_round(f'echo "{req}" | bench_balloon_serve')
            self.assertIn(want, out, req)


class PositionTest(unittest.TestCase):
    def test_vsock_and_balloon_runs_get_the_position_term(self):
        samples = [{"config": c, "workload": w, "rep": r, "position": p,
                    "metrics": {m: 10.0 * p + r}}
                   for w, m in (("vsock-g2h", "vsock_mb_s"),
                                ("balloon", "balloon_mib_per_s"))
                   for r in (1, 2, 3)
                   for p, c in enumerate(("a", "b") if r % 2 else ("b", "a"), 1)]
        text = "\n".join(drift.position_section({"meta": {},
                                                 "samples": samples}))
        self.assertNotIn("No positions recorded", text)
        self.assertIn("vsock-g2h", text)
        self.assertIn("balloon_mib_per_s", text)


class IngestTest(unittest.TestCase):
    def test_round_to_samples_and_raw_check(self):
        files = {"v/vsock-rr/vsock.txt": fixture("vsock_rr.txt"),
                 "v/vsock-rr/metrics": "window_s=1\nkvm_exits=4200\n"
                                       "cpu_s.skiff=0.5\n",
                 "v/balloon/balloon.txt": trace(
                     300 * 1024, [200 * 1024, 172 * 1024, 172 * 1024],
                     actual=120),
                 "v/balloon/metrics": "window_s=2\ncpu_s.skiff=0.1\n"}
        with tempfile.TemporaryDirectory() as d:
            logf = os.path.join(d, "round.log")
            with open(logf, "w") as f:
                f.write("SKIFF-L1: ready uptime=4\n"
                        + console_blob(1, "v", make_tar(files)))
            results = os.path.join(d, "results.json")
            ok, failed = rounds.ingest_round(
                logf, d, results, 1, ["v"], ["vsock-rr", "balloon"],
                say=lambda s: None, vsocks=["v"])
            with open(results) as f:
                doc = json.load(f)
            self.assertEqual((ok, failed), (2, 0))
            by = {s["workload"]: s for s in doc["samples"]}
            rr = by["vsock-rr"]
            self.assertEqual(rr["raw"]["vsock"], "raw/r1/v/vsock-rr/vsock.txt")
            self.assertAlmostEqual(rr["metrics"]["exits_per_trans"], 21.0)
            self.assertAlmostEqual(by["balloon"]["metrics"]["balloon_mib_per_s"],
                                   128 / 0.1)
            self.assertEqual(by["balloon"]["raw"]["balloon"],
                             "raw/r1/v/balloon/balloon.txt")
            counted, bad = rawcheck.check(doc, d)
            self.assertEqual((len(counted), bad), (2, []))


if __name__ == "__main__":
    unittest.main()
