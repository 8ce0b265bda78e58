# SPDX-License-Identifier: Apache-2.0
"""Rounds of bench/run.sh: plan, console data transfer, ingest, progress,
and the headline summary."""

import base64
import hashlib
import io
import json
import os
import tarfile
import tempfile
import unittest

import benchpath
from skiffbench import rawcheck, report, rounds, summary


def make_tar(files):
    """tar.gz bytes of {path: text}."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def console_blob(rep, config, data, corrupt=False, cut=False):
    b64 = base64.b64encode(data).decode()
    lines = [f"SKIFF-BENCH-DATA-BEGIN rep={rep} config={config}\r"]
    for i in range(0, len(b64), 76):
        chunk = b64[i:i + 76]
        if corrupt and i == 0:
            chunk = ("A" if chunk[0] != "A" else "B") + chunk[1:]
        lines.append(f"SKIFF-BENCH-B64 {chunk}\r")
    if not cut:
        lines.append(f"SKIFF-BENCH-DATA-END rep={rep} config={config} "
                     f"sha256={hashlib.sha256(data).hexdigest()}\r")
    return "\n".join(lines) + "\n"


class PlanTest(unittest.TestCase):
    def test_rounds_cover_every_config_and_skip_native_boot(self):
        plan = rounds.plan_rounds(["a", "b", "n"], ["boot", "tcp"], 6,
                                  seed=2, native=["n"])
        self.assertEqual([rep for rep, _, _ in plan], [1, 2, 3, 4, 5, 6])
        for _, order, n in plan:
            self.assertEqual(sorted(order), ["a", "b", "n"])
            self.assertEqual(n, 2 + 2 + 1)
        again = rounds.plan_rounds(["a", "b", "n"], ["boot", "tcp"], 6,
                                   seed=2, native=["n"])
        self.assertEqual(plan, again)
        # One Williams block (2n rounds for odd n): each configuration
        # twice in each position.
        for pos in range(3):
            self.assertEqual(sorted(order[pos] for _, order, _ in plan),
                             ["a", "a", "b", "b", "n", "n"])

    def test_two_configs_take_turns_first(self):
        plan = rounds.plan_rounds(["a", "b"], ["tcp"], 4, seed=1)
        firsts = [order[0] for _, order, _ in plan]
        self.assertEqual(sorted(firsts[:2]), ["a", "b"])
        self.assertEqual(sorted(firsts[2:]), ["a", "b"])

    def test_balance_note(self):
        self.assertIn("every position 2 time(s)",
                      rounds.balance_note(["a", "b", "c", "d"], 8))
        self.assertIn("only approximately",
                      rounds.balance_note(["a", "b", "c"], 4))
        self.assertIn("every position 1 time(s); carry-over",
                      rounds.balance_note(["a", "b", "c"], 3))

    def test_cli_plan(self):
        out = io.StringIO()
        import contextlib
        with contextlib.redirect_stdout(out):
            rounds.main(["plan", "--configs", "a,b", "--workloads", "boot",
                         "--reps", "2", "--native", "b"])
        lines = out.getvalue().splitlines()
        self.assertEqual(lines[0], "total\t2")
        self.assertTrue(lines[1].startswith("balance\tWilliams design"))
        self.assertEqual(len(lines), 4)


class BlobTest(unittest.TestCase):
    def test_good_garbled_and_cut_off(self):
        data = make_tar({"x/w/metrics": "kvm_exits=5\n"})
        log = ("noise\n" + console_blob(1, "x", data)
               + "[ 12.3] kernel says hi\n"
               + console_blob(1, "y", data, corrupt=True)
               + console_blob(1, "z", data, cut=True))
        blobs = rounds.extract_blobs(log)
        self.assertEqual(blobs[(1, "x")], (data, None))
        self.assertIsNone(blobs[(1, "y")][0])
        self.assertIn("sha256", blobs[(1, "y")][1])
        self.assertIsNone(blobs[(1, "z")][0])
        self.assertIn("cut off", blobs[(1, "z")][1])

    def test_unsafe_members_refused(self):
        with tempfile.TemporaryDirectory() as d:
            for name in ("../evil", "/abs", "other/file"):
                with self.assertRaises(ValueError):
                    rounds.safe_extract(make_tar({name: "x"}), d, "cfg")


class IngestTest(unittest.TestCase):
    def test_round_to_samples(self):
        iperf = benchpath.fixture("iperf3_tcp.json")
        ping = benchpath.fixture("ping_busybox.txt")
        files = {
            "vm/boot/metrics": "window_s=8.5\nkvm_exits=40000\n"
                               "boot_init_ms=8500\ncpu_s.vcpu=3.5\n",
            "vm/tcp/iperf3.json": iperf,
            "vm/tcp/metrics": "window_s=4.2\nkvm_exits=420\n"
                              "cpu_s.a=1.0\ncpu_s.b=0.5\n",
            "vm/tcp/duration_ms": "4300\n",
            "vm/ping/error": "ping did not finish within 32s\n",
        }
        log = ("SKIFF-L1: ready uptime=4\n"
               + console_blob(2, "vm", make_tar(files)))
        with tempfile.TemporaryDirectory() as d:
            logf = os.path.join(d, "round.log")
            with open(logf, "w") as f:
                f.write(log)
            results = os.path.join(d, "results.json")
            said = []
            ok, failed = rounds.ingest_round(
                logf, d, results, 2, ["vm", "gone"], ["boot", "tcp", "ping"],
                native=["gone"], l0_rc=124, say=said.append)
            self.assertEqual((ok, failed), (2, 1 + 2))
            with open(results) as f:
                doc = json.load(f)
            report.validate(doc)
            by = {(s["config"], s["workload"]): s for s in doc["samples"]}
            self.assertEqual(len(by), 5)  # gone has no boot: native
            boot = by[("vm", "boot")]["metrics"]
            self.assertEqual(boot["boot_init_ms"], 8500)
            self.assertAlmostEqual(boot["exits_per_s"], 40000 / 8.5)
            tcp = by[("vm", "tcp")]
            self.assertAlmostEqual(tcp["metrics"]["cpu_s_total"], 1.5)
            self.assertEqual(tcp["metrics"]["window_s"], 4.2)
            self.assertIn("exits_per_mb", tcp["metrics"])
            self.assertEqual(tcp["duration_s"], 4.3)
            self.assertEqual(tcp["raw"]["iperf3"], "raw/r2/vm/tcp/iperf3.json")
            self.assertTrue(os.path.exists(os.path.join(d, tcp["raw"]["iperf3"])))
            self.assertIn("did not finish", by[("vm", "ping")]["error"])
            self.assertIn("time bound", by[("gone", "tcp")]["error"])

    def test_hung_round_reports_lost_configs(self):
        data = make_tar({"a/tcp/metrics": "window_s=1\n",
                         "a/tcp/ping.txt": benchpath.fixture(
                             "ping_busybox.txt")})
        log = ("SKIFF-L1: ready uptime=4\n" + console_blob(1, "a", data)
               + "[  340.9] watchdog: BUG: soft lockup - CPU#1 stuck for "
                 "22s! [khugepaged:36]\n")
        with tempfile.TemporaryDirectory() as d:
            logf = os.path.join(d, "round.log")
            with open(logf, "w") as f:
                f.write(log)
            lost = []
            ok, failed = rounds.ingest_round(
                logf, d, os.path.join(d, "r.json"), 1, ["a", "b", "c"],
                ["tcp"], l0_rc=143, say=lambda s: None, stalled=True,
                lost=lost)
            self.assertEqual((ok, failed, lost), (1, 2, ["b", "c"]))
            with open(os.path.join(d, "r.json")) as f:
                errors = [s.get("error") for s in json.load(f)["samples"]]
            self.assertIn("soft lockup", errors[1])

    def test_l1_never_ready(self):
        with tempfile.TemporaryDirectory() as d:
            logf = os.path.join(d, "round.log")
            with open(logf, "w") as f:
                f.write("qemu: could not load kernel\n")
            results = os.path.join(d, "results.json")
            ok, failed = rounds.ingest_round(logf, d, results, 1, ["a"],
                                             ["tcp"], say=lambda s: None,
                                             l0_rc=1)
            self.assertEqual((ok, failed), (0, 1))
            with open(results) as f:
                self.assertIn("L1 never became ready",
                              json.load(f)["samples"][0]["error"])


class MakeupRawTest(unittest.TestCase):
    """An extra round re-runs a configuration's every workload; its raw
    files must not replace those of the runs counted from the original
    round (issue 35.1: 52 of 2,073 counted samples pointed at a makeup
    round's file)."""

    def _round(self, d, name, rep, keep=None, makeup=0):
        ping = benchpath.fixture("ping_busybox.txt")
        files = {"vm/a/metrics": "window_s=1\n",
                 "vm/a/ping.txt": ping + f"# {name}\n",
                 "vm/b/metrics": "window_s=1\n",
                 "vm/b/ping.txt": ping + f"# {name}\n"}
        logf = os.path.join(d, f"{name}.log")
        with open(logf, "w") as f:
            f.write("SKIFF-L1: ready uptime=4\n"
                    + console_blob(rep, "vm", make_tar(files)))
        return rounds.ingest_round(logf, d, os.path.join(d, "r.json"), rep,
                                   ["vm"], ["a", "b"], say=lambda s: None,
                                   keep=keep, makeup=makeup)

    def test_makeup_keeps_its_own_raw_directory(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(self._round(d, "first", 3), (2, 0))
            # b was contaminated, say: the extra round redoes it only.
            self.assertEqual(self._round(d, "makeup", 3,
                                         keep={("vm", "b")}, makeup=1),
                             (1, 0))
            with open(os.path.join(d, "r.json")) as f:
                samples = json.load(f)["samples"]
            raws = [s["raw"]["ping"] for s in samples]
            self.assertEqual(raws, ["raw/r3/vm/a/ping.txt",
                                    "raw/r3/vm/b/ping.txt",
                                    "raw/r3-m1/vm/b/ping.txt"])
            for raw, round_name in zip(raws, ("first", "first", "makeup")):
                with open(os.path.join(d, raw)) as f:
                    self.assertTrue(f.read().endswith(f"# {round_name}\n"),
                                    raw)
            # Each sample names its run's directory, tool files or not
            # (a migrate run has only "metrics"): rawcheck reads it.
            dirs = [rawcheck.run_dir({k: v for k, v in s.items()
                                      if k != "raw"}) for s in samples]
            self.assertEqual(dirs, ["raw/r3/vm/a", "raw/r3/vm/b",
                                    "raw/r3-m1/vm/b"])


class FollowTest(unittest.TestCase):
    def test_progress_lines(self):
        with tempfile.TemporaryDirectory() as d:
            logf = os.path.join(d, "log")
            with open(logf, "w") as f:
                f.write("SKIFF-L1: ready\r\n"
                        "SKIFF-BENCH: run rep=1 config=a workload=boot\r\n"
                        "SKIFF-BENCH: done rep=1 config=a workload=boot rc=0\n"
                        "SKIFF-BENCH: run rep=1 config=a workload=tcp\n"
                        "SKIFF-BENCH: done rep=1 config=a workload=tcp rc=1\n"
                        "SKIFF-BENCH: run rep=1 config=b workload=tcp")
            out = io.StringIO()
            states = iter([True, False])
            state = os.path.join(d, "state")
            n = rounds.follow(logf, 0, 10, 4, 30.0, out=out, poll=0,
                              alive=lambda: next(states), state=state,
                              clock=lambda: 100.0)
            with open(state) as f:
                self.assertEqual(f.read().strip(), "0.0")
            self.assertEqual(n, 3)
            lines = out.getvalue().splitlines()
            self.assertTrue(lines[0].startswith("[5/10] a boot rep 1 "
                                                "— elapsed 30s"))
            self.assertIn("a tcp: exit status 1", lines[2])
            self.assertTrue(lines[3].startswith("[7/10] b tcp rep 1"))


class StallTest(unittest.TestCase):
    def test_stall_detected(self):
        with tempfile.TemporaryDirectory() as d:
            logf = os.path.join(d, "log")
            with open(logf, "w") as f:
                f.write("SKIFF-L1: ready\n")
            now = [0.0]

            def clock():
                now[0] += 10
                return now[0]
            out = io.StringIO()
            n = rounds.follow(logf, 0, 5, 0, out=out, poll=0,
                              alive=lambda: True, clock=clock, stall=60)
            self.assertEqual(n, rounds.STALLED)
            self.assertIn("L1 hung", out.getvalue())


    def test_kernel_lines_are_no_progress(self):
        """An L1 whose CPU is lost prints RCU stall reports every minute:
        they must not keep a hung round alive; a bench line must."""
        for tail, want_stall in (("[   81.944367] rcu: INFO: rcu_preempt detected stalls\n", True),
                                 ("SKIFF-BENCH: done rep=1 config=a workload=b rc=0\n", False)):
            with tempfile.TemporaryDirectory() as d:
                logf = os.path.join(d, "log")
                with open(logf, "w") as f:
                    f.write("SKIFF-L1: ready\n")
                now = [0.0]
                polls = [0]

                def clock():
                    now[0] += 10
                    return now[0]

                def alive():
                    # One more line every 5th poll, then done after 40.
                    polls[0] += 1
                    if polls[0] % 5 == 0:
                        with open(logf, "a") as f:
                            f.write(tail)
                    return polls[0] < 40
                out = io.StringIO()
                n = rounds.follow(logf, 0, 5, 0, out=out, poll=0,
                                  alive=alive, clock=clock, stall=60)
                self.assertEqual(n == rounds.STALLED, want_stall, tail)


class SummaryTest(unittest.TestCase):
    def test_headline_table(self):
        doc = {"meta": {"baseline": "q"}, "samples": []}
        for rep in range(1, 6):
            doc["samples"].append({"config": "q", "workload": "tcp-g2h",
                                   "rep": rep, "metrics": {
                                       "throughput_gbps": 0.4 + rep / 100}})
            doc["samples"].append({"config": "s", "workload": "tcp-g2h",
                                   "rep": rep, "metrics": {
                                       "throughput_gbps": 0.8 + rep / 100}})
        text = summary.summary_markdown(doc)
        self.assertIn("| metric | q (baseline) | s |", text)
        self.assertIn("| TCP guest→host, Gbit/s | 0.43 | 0.83 (1.93× +) |",
                      text)

    def test_verdicts_are_the_tables_and_unresolved_listed(self):
        # Four comparisons: tcp throughput (5 a side, 2x: p = 0.008),
        # retransmits (equal), rr p50 (4 a side, 1.3x: p = 0.029, CI
        # excludes 1) and p99 (noisy). BH over the four: q(p50) = 0.057,
        # so p50 needs more runs although its CI alone would say "slower".
        doc = {"meta": {"baseline": "q"}, "samples": []}
        for rep in range(1, 6):
            for cfg, g in (("q", 0.4), ("s", 0.8)):
                doc["samples"].append({"config": cfg, "workload": "tcp-g2h",
                                       "rep": rep, "metrics": {
                                           "throughput_gbps": g + rep / 100,
                                           "retransmits": 3}})
        noisy = [500, 700, 450, 650]
        for rep, v in enumerate(noisy, 1):
            for cfg, k in (("q", 1.0), ("s", 1.3)):
                doc["samples"].append({"config": cfg, "workload": "rr",
                                       "rep": rep, "metrics": {
                                           "latency_p50_us": k * (100 + rep),
                                           "latency_p99_us": v * (k ** 0.1)}})
        text = summary.summary_markdown(doc)
        self.assertIn("(1.93× +)", text)
        self.assertIn("| UDP request/response p50, µs one-way | 102.5 | "
                      "133.2 (1.30× ?) |", text)
        unresolved = text.split("Not resolving a 15% difference", 1)[1]
        self.assertIn("p99, µs (rr)", unresolved)
        self.assertNotIn("TCP guest", unresolved)

    def test_block_rows(self):
        # A run of blk-* workloads only: its table is not empty.
        doc = {"meta": {"baseline": "q"}, "samples": []}
        for rep in range(1, 6):
            for cfg, k in (("q", 1.0), ("s", 2.0)):
                doc["samples"].append({"config": cfg,
                                       "workload": "blk-randread-qd32",
                                       "rep": rep, "metrics": {
                                           "blk_iops": k * (1000 + rep),
                                           "blk_ios": 3000}})
        text = summary.summary_markdown(doc)
        self.assertIn("| 4 KiB random read QD32, IOPS | 1003 | "
                      "2006 (2.00× +) |", text)

    def test_columns_follow_meta_configs(self):
        doc = {"meta": {"baseline": "b", "configs": "c,a,b"}, "samples": [
            {"config": k, "workload": "ping", "rep": 1,
             "metrics": {"ping_avg_ms": 1.0}} for k in ("a", "b", "c")]}
        self.assertIn("| metric | b (baseline) | c | a |",
                      summary.summary_markdown(doc))


if __name__ == "__main__":
    unittest.main()
