# SPDX-License-Identifier: Apache-2.0
"""Costs per unit of work: the arithmetic, and that a cost per run or per
second gets no direction where configurations do different work."""

import unittest

import benchpath
from skiffbench import metrics, parsers, report


class PerUnitTest(unittest.TestCase):
    def test_stream(self):
        m = metrics.derive({"kvm_exits": 5000, "mb_moved": 250.0,
                            "cpu_s.vcpu0": 1.5, "cpu_s.io0": 0.5,
                            "window_s": 2.0})
        self.assertAlmostEqual(m["cpu_s_total"], 2.0)
        self.assertAlmostEqual(m["exits_per_mb"], 20.0)
        self.assertAlmostEqual(m["cpu_s_per_gb"], 8.0)  # 2 s / 0.25 GB
        self.assertAlmostEqual(m["exits_per_s"], 2500.0)
        self.assertNotIn("exits_per_pkt", m)

    def test_packets_and_transactions(self):
        m = metrics.derive({"kvm_exits": 30000, "udp_packets": 20000,
                            "cpu_s_total": 0.5})
        self.assertAlmostEqual(m["exits_per_pkt"], 1.5)
        self.assertAlmostEqual(m["cpu_s_per_mpkt"], 25.0)  # 0.5 / 0.02
        m = metrics.derive({"kvm_exits": 900, "rr_transactions": 300,
                            "cpu_s_total": 0.03})
        self.assertAlmostEqual(m["exits_per_trans"], 3.0)
        self.assertAlmostEqual(m["cpu_s_per_mtrans"], 100.0)

    def test_zero_work_and_given_values(self):
        m = metrics.derive({"kvm_exits": 10, "mb_moved": 0,
                            "cpu_s_total": 1.0})
        self.assertNotIn("exits_per_mb", m)
        self.assertNotIn("cpu_s_per_gb", m)
        m = metrics.derive({"kvm_exits": 10, "mb_moved": 5,
                            "exits_per_mb": 7.0})
        self.assertEqual(m["exits_per_mb"], 7.0)

    def test_work_units_from_tools(self):
        udp = parsers.parse_iperf3_json(benchpath.fixture("iperf3_udp.json"))
        self.assertEqual(metrics.from_iperf3(udp)["udp_packets"],
                         udp["packets"])
        rr = metrics.from_sockperf(parsers.parse_sockperf(
            benchpath.fixture("sockperf_pingpong_udp.txt")))
        self.assertEqual(rr["rr_transactions"], 17769)


class DirectionTest(unittest.TestCase):
    def test_per_time_costs_need_equal_work(self):
        for name in ("cpu_s_total", "kvm_exits", "cpu_s.vcpu0", "exits_io"):
            self.assertIs(metrics.direction(name), False, name)
            self.assertIsNone(metrics.direction(name, work_varies=True), name)
        for name in ("cpu_s_per_gb", "exits_per_mb", "exits_per_pkt",
                     "cpu_s_per_mtrans", "mem_rss_anon_kib"):
            self.assertIs(metrics.direction(name, work_varies=True), False,
                          name)
        self.assertIs(metrics.direction("throughput_gbps", True), True)
        self.assertIsNone(metrics.direction("exits_per_s"))
        self.assertIsNone(metrics.direction("kvm.io_exits"))
        self.assertTrue(metrics.is_known("kvm.io_exits"))

    def test_report_judges_per_unit_only_in_streams(self):
        def sample(cfg, rep, gbps, cpu):
            return {"config": cfg, "workload": "tcp-g2h", "rep": rep,
                    "metrics": metrics.derive({
                        "throughput_gbps": gbps, "mb_moved": gbps * 250,
                        "cpu_s_total": cpu, "kvm_exits": 1000 * gbps})}
        # b moves twice the data for 1.5x the CPU: costlier per second,
        # cheaper per GB.
        doc = {"meta": {}, "samples":
               [sample("a", r, 1.0 + r / 100, 1.0) for r in range(6)]
               + [sample("b", r, 2.0 + r / 100, 1.5) for r in range(6)]}
        tables, _ = report.comparison_table(doc, "a")
        rows = {r["metric"]: r for r in tables["tcp-g2h"]}
        self.assertIsNone(rows["cpu_s_total"]["higher_is_better"])
        self.assertEqual(rows["cpu_s_total"]["decision"], "n/a")
        self.assertEqual(rows["cpu_s_per_gb"]["decision"], "faster")
        self.assertEqual(rows["throughput_gbps"]["decision"], "faster")


if __name__ == "__main__":
    unittest.main()
