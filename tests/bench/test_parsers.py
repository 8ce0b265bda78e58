# SPDX-License-Identifier: Apache-2.0
"""Parsers on real tool outputs (tests/bench/fixtures, captured on loopback
with iperf3 3.12, sockperf 3.7, busybox and iputils ping) plus a few
hand-written variants of formats not installed here, and the mapping of
parsed values to metric names."""

import unittest

from benchpath import fixture
from skiffbench import metrics, parsers


class Iperf3Test(unittest.TestCase):
    def test_tcp_uses_receiver_sum(self):
        r = parsers.parse_iperf3_json(fixture("iperf3_tcp.json"))
        self.assertEqual(r["protocol"], "TCP")
        # end.sum_received, not end.sum_sent (19079160776.5)
        self.assertAlmostEqual(r["bits_per_second"], 19068828137.490009)
        self.assertEqual(r["retransmits"], 2)
        self.assertAlmostEqual(r["cpu_host"], 97.097950654778131)
        self.assertAlmostEqual(r["cpu_remote"], 39.095111150190647)
        self.assertEqual(r["bytes"], 2385510400)
        self.assertFalse(r["reverse"])

    def test_tcp_reverse_two_streams(self):
        r = parsers.parse_iperf3_json(
            fixture("iperf3_tcp_reverse_2streams.json"))
        self.assertTrue(r["reverse"])
        self.assertEqual(r["streams"], 2)
        self.assertAlmostEqual(r["bits_per_second"], 18380046734.87836)
        self.assertEqual(r["retransmits"], 8)

    def test_udp(self):
        r = parsers.parse_iperf3_json(fixture("iperf3_udp.json"))
        self.assertEqual(r["protocol"], "UDP")
        self.assertEqual(r["packets"], 192068)
        self.assertEqual(r["lost_packets"], 2606)
        self.assertAlmostEqual(r["lost_percent"], 1.3568111293916738)
        self.assertAlmostEqual(r["jitter_ms"], 0.009545502500622945)
        self.assertAlmostEqual(r["packets_per_second"],
                               (192068 - 2606) / 1.000066)
        self.assertAlmostEqual(r["bits_per_second"], 96998142.1226199)

    def test_error_json_raises_with_message(self):
        with self.assertRaisesRegex(ValueError, "unable to connect to server"):
            parsers.parse_iperf3_json(fixture("iperf3_error.json"))

    def test_garbage_and_console_noise(self):
        with self.assertRaisesRegex(ValueError, "no JSON"):
            parsers.parse_iperf3_json("iperf3: command not found\n")
        noisy = ("[    1.234] random console line\n"
                 + fixture("iperf3_tcp.json") + "\nSKIFF-METRIC: done=1\n")
        r = parsers.parse_iperf3_json(noisy)
        self.assertAlmostEqual(r["bits_per_second"], 19068828137.490009)

    def test_truncated_run_raises(self):
        with self.assertRaisesRegex(ValueError, "sum_received"):
            parsers.parse_iperf3_json('{"start": {}, "end": {}}')


class SockperfTest(unittest.TestCase):
    def test_pingpong_udp(self):
        r = parsers.parse_sockperf(fixture("sockperf_pingpong_udp.txt"))
        self.assertFalse(r["full_rtt"])
        self.assertEqual(r["p50_us"], 33.003)
        self.assertEqual(r["p99_us"], 62.227)
        self.assertEqual(r["p99_9_us"], 116.292)
        self.assertEqual(r["avg_us"], 34.202)
        self.assertEqual(r["std_dev_us"], 16.175)
        self.assertEqual(r["max_us"], 1106.911)
        self.assertEqual(r["min_us"], 6.925)
        self.assertEqual(r["observations"], 8039)
        self.assertEqual(r["dropped"], 0)

    def test_full_rtt_gets_other_metric_names(self):
        r = parsers.parse_sockperf(fixture("sockperf_pingpong_fullrtt.txt"))
        self.assertTrue(r["full_rtt"])
        self.assertEqual(r["avg_us"], 11.758)
        m = metrics.from_sockperf(r)
        self.assertIn("rtt_p99_us", m)
        self.assertNotIn("latency_p99_us", m)
        self.assertFalse(metrics.direction("rtt_p99_us"))

    def test_older_avg_lat_format(self):
        # Hand-written in the pre-3.7 layout ("avg-lat=" with padding).
        text = ("sockperf: ====> avg-lat=  1.403 (std-dev=0.677)\n"
                "sockperf: ---> <MAX> observation =   42.337\n"
                "sockperf: ---> percentile 99.000 =    3.100\n"
                "sockperf: ---> percentile 50.000 =    1.300\n"
                "sockperf: ---> <MIN> observation =    0.900\n")
        r = parsers.parse_sockperf(text)
        self.assertEqual((r["avg_us"], r["p99_us"], r["p50_us"]),
                         (1.403, 3.1, 1.3))

    def test_failed_client_raises(self):
        with self.assertRaises(ValueError):
            parsers.parse_sockperf("sockperf: ERROR: connect failed\n")


class PingTest(unittest.TestCase):
    def test_busybox(self):
        r = parsers.parse_ping(fixture("ping_busybox.txt"))
        self.assertEqual((r["min_ms"], r["avg_ms"], r["max_ms"]),
                         (0.057, 0.149, 0.322))
        self.assertEqual((r["transmitted"], r["received"], r["loss_pct"]),
                         (3, 3, 0.0))

    def test_iputils(self):
        r = parsers.parse_ping(fixture("ping_iputils.txt"))
        self.assertEqual((r["min_ms"], r["avg_ms"], r["max_ms"]),
                         (0.046, 0.059, 0.067))
        self.assertEqual(r["mdev_ms"], 0.009)
        self.assertEqual(r["received"], 3)

    def test_total_loss(self):
        bb = ("--- 10.0.0.2 ping statistics ---\n"
              "2 packets transmitted, 0 packets received, 100% packet loss\n")
        r = parsers.parse_ping(bb)
        self.assertEqual((r["loss_pct"], r["avg_ms"]), (100.0, None))
        ip = ("--- 10.0.0.2 ping statistics ---\n5 packets transmitted, "
              "0 received, +5 errors, 100% packet loss, time 4081ms\n")
        self.assertEqual(parsers.parse_ping(ip)["loss_pct"], 100.0)
        self.assertEqual(metrics.from_ping(parsers.parse_ping(ip)),
                         {"ping_loss_pct": 100.0})

    def test_no_summary_raises(self):
        with self.assertRaises(ValueError):
            parsers.parse_ping("ping: bad address 'nohost'\n")


class MetricMarkersTest(unittest.TestCase):
    def test_markers(self):
        text = ("[    0.512] SKIFF-METRIC: boot_init_ms=123.5\r\n"
                "noise\n"
                "SKIFF-METRIC: kvm_exits=1200\n"
                "SKIFF-METRIC: cpu_s.vcpu0=0.25\n"
                "SKIFF-METRIC: note=warm-cache\n"
                "SKIFF-METRIC: bad=nan\n"
                "SKIFF-METRIC: kvm_exits=1300\n")
        self.assertEqual(parsers.parse_metrics(text), {
            "boot_init_ms": 123.5, "kvm_exits": 1300, "cpu_s.vcpu0": 0.25,
            "note": "warm-cache", "bad": "nan"})
        self.assertEqual(parsers.parse_metrics("nothing here"), {})


class MetricTableTest(unittest.TestCase):
    def test_directions(self):
        self.assertTrue(metrics.direction("throughput_gbps"))
        self.assertTrue(metrics.direction("udp_pps"))
        for name in ("latency_p99_us", "exits_per_mb", "cpu_s.vhost-12",
                     "mem_overhead_kib", "boot_init_ms", "ping_avg_ms"):
            self.assertIs(metrics.direction(name), False, name)
        self.assertIsNone(metrics.direction("mb_moved"))
        self.assertIsNone(metrics.direction("something_new"))
        self.assertFalse(metrics.is_known("something_new"))

    def test_iperf3_mapping_and_derived_rates(self):
        m = metrics.from_iperf3(parsers.parse_iperf3_json(
            fixture("iperf3_tcp.json")))
        self.assertAlmostEqual(m["throughput_gbps"], 19.068828137490009)
        self.assertAlmostEqual(m["mb_moved"], 2385.5104)
        m["kvm_exits"] = 23855.104
        d = metrics.derive(m)
        self.assertAlmostEqual(d["exits_per_mb"], 10.0)
        self.assertAlmostEqual(d["exits_per_s"], 23855.104 / 1.0008)
        u = metrics.from_iperf3(parsers.parse_iperf3_json(
            fixture("iperf3_udp.json")))
        self.assertIn("udp_pps", u)
        self.assertNotIn("retransmits", u)

    def test_cpu_total(self):
        d = metrics.derive({"cpu_s.vcpu0": 1.5, "cpu_s.io": 0.5})
        self.assertEqual(d["cpu_s_total"], 2.0)


if __name__ == "__main__":
    unittest.main()
