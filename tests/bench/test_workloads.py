# SPDX-License-Identifier: Apache-2.0
"""The workloads of issue 13 point 4: TCP request/response (sockperf
--tcp), UDP 64 B at a fixed offered rate both ways, the idle VM, and the
configuration words (mem=, cpus=) of bench/bench-round.sh. Fixtures were
captured on this host over loopback with sockperf 3.7 and iperf3 3.12
(sockperf_pingpong_tcp.txt; iperf3_udp64_{g2h,h2g}.json: -u -l 64 -b 2M;
iperf3_udp64_unbounded.json: -R -u -l 64 -b 0)."""

import os
import shutil
import subprocess
import unittest

import benchpath
from benchpath import fixture
from skiffbench import ingest, metrics, parsers, report


def udp_sample(cfg, rep, offered, loss, pps, workload="udp64-g2h"):
    return {"config": cfg, "workload": workload, "rep": rep,
            "metrics": metrics.derive({
                "udp_offered_mbps": offered, "udp_loss_pct": loss,
                "udp_pps": pps, "udp_packets": pps * 3,
                "kvm_exits": 100 * pps, "cpu_s_total": 1.0})}


class TcpRrTest(unittest.TestCase):
    def test_tcp_pingpong_percentiles(self):
        r = parsers.parse_sockperf(fixture("sockperf_pingpong_tcp.txt"))
        self.assertFalse(r["full_rtt"])
        self.assertEqual((r["p50_us"], r["p99_us"], r["p99_9_us"]),
                         (5.554, 211.113, 2185.95))
        self.assertEqual(r["max_us"], 3995.549)
        m = metrics.from_sockperf(r)
        self.assertEqual(m["latency_p99_9_us"], 2185.95)
        self.assertEqual(m["rr_transactions"], 37176)

    def test_udp_rr_reports_p99_9(self):
        m = metrics.from_sockperf(parsers.parse_sockperf(
            fixture("sockperf_pingpong_udp.txt")))
        self.assertEqual(m["latency_p99_9_us"], 116.292)
        self.assertIs(metrics.direction("latency_p99_9_us"), False)
        self.assertIn("latency_p99_9_us", metrics.DIRECTIONS)


class FixedRateUdpTest(unittest.TestCase):
    def test_h2g_receiver_view(self):
        r = parsers.parse_iperf3_json(fixture("iperf3_udp64_h2g.json"))
        self.assertFalse(r["reverse"])
        self.assertEqual(r["target_bitrate"], 2000000)
        self.assertEqual((r["packets"], r["lost_packets"]), (3903, 10))
        self.assertAlmostEqual(r["packets_per_second"], 3893 / 1.000221)
        m = metrics.from_iperf3(r)
        self.assertEqual(m["udp_offered_mbps"], 2.0)
        self.assertAlmostEqual(m["udp_loss_pct"], 0.256213169356905)

    def test_g2h_reverse(self):
        r = parsers.parse_iperf3_json(fixture("iperf3_udp64_g2h.json"))
        self.assertTrue(r["reverse"])
        self.assertEqual((r["packets"], r["lost_packets"]), (3904, 0))
        self.assertEqual(metrics.from_iperf3(r)["udp_offered_mbps"], 2.0)

    def test_unbounded_rate_is_zero(self):
        # udp-g2h's command: -b 0 (unbounded), captured over loopback.
        m = metrics.from_iperf3(parsers.parse_iperf3_json(
            fixture("iperf3_udp64_unbounded.json")))
        self.assertEqual(m["udp_offered_mbps"], 0)
        self.assertAlmostEqual(m["udp_loss_pct"], 62.62746512746513)
        self.assertEqual(metrics.from_iperf3(parsers.parse_iperf3_json(
            fixture("iperf3_udp.json")))["udp_offered_mbps"], 100.0)
        tcp = metrics.from_iperf3(parsers.parse_iperf3_json(
            fixture("iperf3_tcp.json")))
        self.assertNotIn("udp_offered_mbps", tcp)

    def test_offered_rate(self):
        self.assertIsNone(metrics.offered_rate([]))
        self.assertEqual(metrics.offered_rate([0, 0]), metrics.UNBOUNDED)
        self.assertEqual(metrics.offered_rate([2.0, 2.0]), 2.0)
        self.assertEqual(metrics.offered_rate([2.0, 4.0]), metrics.MIXED)

    def test_directions_by_offered_rate(self):
        d = metrics.direction
        # Loss: judged only at a bounded rate (-b 0 rewards slow senders).
        self.assertIs(d("udp_loss_pct", True, 2.0), False)
        self.assertIsNone(d("udp_loss_pct", True, metrics.UNBOUNDED))
        self.assertIsNone(d("udp_loss_pct", True, metrics.MIXED))
        # Delivered rate: only between runs offered the same rate.
        self.assertIs(d("udp_pps", True, 2.0), True)
        self.assertIs(d("udp_pps", True, metrics.UNBOUNDED), True)
        self.assertIsNone(d("udp_pps", True, metrics.MIXED))
        self.assertIsNone(d("throughput_gbps", True, metrics.MIXED))
        # Per-packet costs keep theirs; per-time costs stay undirected.
        self.assertIs(d("exits_per_pkt", True, metrics.MIXED), False)
        self.assertIsNone(d("kvm_exits", True, 2.0))
        # Without a rate (TCP, older results): as before.
        self.assertIs(d("udp_loss_pct"), False)

    def test_report_withholds_loss_verdict_at_unbounded_rate(self):
        def doc(offered):
            return {"meta": {}, "samples":
                    [udp_sample("a", r, offered, 1.0 + r / 10, 1000 + r)
                     for r in range(6)]
                    + [udp_sample("b", r, offered, 5.0 + r / 10, 900 + r)
                       for r in range(6)]}
        tables, _ = report.comparison_table(doc(0), "a")
        rows = {r["metric"]: r for r in tables["udp64-g2h"]}
        self.assertIsNone(rows["udp_loss_pct"]["higher_is_better"])
        self.assertEqual(rows["udp_loss_pct"]["decision"], "n/a")
        self.assertEqual(rows["udp_pps"]["decision"], "slower")
        tables, _ = report.comparison_table(doc(2.0), "a")
        rows = {r["metric"]: r for r in tables["udp64-g2h"]}
        self.assertEqual(rows["udp_loss_pct"]["decision"], "slower")

    def test_report_mixed_rates_not_compared(self):
        samples = ([udp_sample("a", r, 2.0, 0.1, 3900 + r) for r in range(6)]
                   + [udp_sample("b", r, 4.0, 0.1, 7800 + r)
                      for r in range(6)])
        tables, _ = report.comparison_table({"meta": {}, "samples": samples},
                                            "a")
        rows = {r["metric"]: r for r in tables["udp64-g2h"]}
        self.assertEqual(rows["udp_pps"]["decision"], "n/a")
        self.assertEqual(rows["udp_loss_pct"]["decision"], "n/a")


class IdleTest(unittest.TestCase):
    def test_rates_per_second_of_idling(self):
        m = metrics.derive({"idle_s": 3, "window_s": 3.2,
                            "cpu_s.skiff": 0.02, "cpu_s.skiff.3": 0.14,
                            "kvm_exits": 1600})
        self.assertAlmostEqual(m["idle_cpu_pct"], 5.0)
        self.assertAlmostEqual(m["idle_exits_per_s"], 500.0)

    def test_only_in_the_idle_workload(self):
        m = metrics.derive({"window_s": 3.2, "cpu_s_total": 1.0,
                            "kvm_exits": 1600})
        self.assertNotIn("idle_cpu_pct", m)
        self.assertNotIn("idle_exits_per_s", m)
        m = metrics.derive({"idle_s": 3, "window_s": 0, "kvm_exits": 5})
        self.assertNotIn("idle_exits_per_s", m)

    def test_directions(self):
        for name in ("idle_cpu_pct", "idle_exits_per_s"):
            self.assertIs(metrics.direction(name), False, name)
        # No work unit in idle: its per-run costs are judged too.
        self.assertIs(metrics.direction("cpu_s_total"), False)

    def test_native_has_no_idle(self):
        self.assertEqual(ingest.workloads_for(
            "native-veth", ["boot", "idle", "tcp-rr"], ["native-veth"]),
            ["tcp-rr"])
        self.assertEqual(ingest.workloads_for(
            "skiff", ["boot", "idle", "tcp-rr"], ["native-veth"]),
            ["boot", "idle", "tcp-rr"])


SCENARIO = os.path.join(benchpath.BENCH, "bench-round.sh")
# L1 runs the scenario under busybox ash; dash is the next best POSIX sh.
SHELL = ([shutil.which("busybox"), "ash"] if shutil.which("busybox")
         else ["sh"])


def in_scenario(script, *args):
    """Run script in a shell that sourced bench-round.sh (which only
    assigns variables and defines functions); its stdout."""
    res = subprocess.run(SHELL + ["-c", f'. "$0"; {script}', SCENARIO,
                                  *args], capture_output=True, text=True,
                         timeout=20, check=True)
    return res.stdout


class ConfigWordsTest(unittest.TestCase):
    def words(self, *args):
        out = in_scenario('L2_MEM=256M; bench_vm_words "$@"; '
                          'echo "$vm_mem|$vm_cpus|$vm_args"', *args)
        return tuple(out.strip().split("|"))

    def test_defaults(self):
        self.assertEqual(self.words("--net", "tap=tap0,vhost=on"),
                         ("256M", "1", "--net tap=tap0,vhost=on"))

    def test_mem_and_cpus_taken_out(self):
        self.assertEqual(self.words("mem=2048M", "vhost=off", "cpus=2"),
                         ("2048M", "2", "vhost=off"))
        self.assertEqual(self.words("cpus=2"), ("256M", "2", ""))

    def test_bad_words_left_in(self):
        # Not a size/count: passed on, for the VMM to reject loudly.
        self.assertEqual(self.words("mem=lots", "cpus=two"),
                         ("256M", "1", "mem=lots cpus=two"))

    def test_mem_kib(self):
        out = in_scenario('bench_mem_kib 2048M; bench_mem_kib 128M')
        self.assertEqual(out.split(), ["2097152", "131072"])

    def test_new_configurations_exist(self):
        for name, want in (("skiff-mem128", "mem=128M"),
                           ("qemu-mem2048", "mem=2048M"),
                           ("kvmtool-mem512", "mem=512M"),
                           ("skiff-2cpu", "cpus=2"),
                           ("qemu-rtc-pvh-2cpu", "cpus=2")):
            line = in_scenario('bench_config_line "$1"', name)
            self.assertIn(want, line.split(), name)

    def test_vm_only_lists_agree(self):
        # L1 skips these for native configurations, the host expects none.
        out = in_scenario('echo "$BENCH_VM_ONLY"')
        self.assertEqual(tuple(out.split()), ingest.VM_ONLY)

    def test_idle_runs_first(self):
        out = in_scenario('bench_idle_first tcp-rr idle ping')
        self.assertEqual(out.split(), ["idle", "tcp-rr", "ping"])
        out = in_scenario('bench_idle_first tcp-rr ping')
        self.assertEqual(out.split(), ["tcp-rr", "ping"])


if __name__ == "__main__":
    unittest.main()
