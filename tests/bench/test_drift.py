# SPDX-License-Identifier: Apache-2.0
"""Report sections: the position term and KVM's counters per unit."""

import unittest

import benchpath  # noqa: F401
from skiffbench import drift


def doc_with_drift(step):
    """Two configs, 6 rounds alternating first/second; second place is
    `step` times slower in boot_init_ms."""
    samples = []
    for rep in range(1, 7):
        order = ["a", "b"] if rep % 2 else ["b", "a"]
        for pos, cfg in enumerate(order, 1):
            base = 1000.0 if cfg == "a" else 3000.0
            jitter = 1 + rep / 1000
            samples.append({"config": cfg, "workload": "boot", "rep": rep,
                            "position": pos, "metrics": {
                                "boot_init_ms": base * jitter
                                * (step if pos == 2 else 1.0)}})
    return {"meta": {}, "samples": samples}


class SpearmanTest(unittest.TestCase):
    def test_rho(self):
        self.assertAlmostEqual(drift.spearman([1, 2, 3, 4], [10, 20, 30, 40]),
                               1.0)
        self.assertAlmostEqual(drift.spearman([1, 2, 3, 4], [4, 3, 2, 1]),
                               -1.0)
        self.assertIsNone(drift.spearman([1, 1, 1], [1, 2, 3]))
        # Ties share ranks: x = 1,1,2,2 against y = 1,2,3,4.
        self.assertAlmostEqual(drift.spearman([1, 1, 2, 2], [1, 2, 3, 4]),
                               0.8944271909999159)

    def test_permutation_p(self):
        xs = list(range(12))
        rho, p = drift.spearman_p(xs, [x * 2 for x in xs])
        self.assertAlmostEqual(rho, 1.0)
        self.assertLess(p, 0.01)
        _rho, p = drift.spearman_p(xs, [5, 1, 9, 3, 7, 0, 11, 2, 8, 4, 10, 6])
        self.assertGreater(p, 0.2)


class PositionTest(unittest.TestCase):
    def test_drift_shows_in_the_position_term(self):
        pairs = drift.position_ratios(doc_with_drift(1.1), "boot",
                                      "boot_init_ms")
        self.assertEqual(len(pairs), 12)
        text = "\n".join(drift.position_section(doc_with_drift(1.1)))
        row = [line for line in text.splitlines()
               if line.startswith("| boot boot_init_ms")][0]
        cells = [c.strip() for c in row.strip("|").split("|")]
        pos1, pos2 = float(cells[1]), float(cells[2])
        # Each config's median sits between its two positions' levels.
        self.assertAlmostEqual(pos2 / pos1, 1.1, places=2)
        self.assertTrue(cells[3].startswith("+"))  # rho > 0
        self.assertLess(float(cells[4]), 0.01)

    def test_no_drift_no_trend(self):
        text = "\n".join(drift.position_section(doc_with_drift(1.0)))
        row = [line for line in text.splitlines()
               if line.startswith("| boot boot_init_ms")][0]
        cells = [c.strip() for c in row.strip("|").split("|")]
        self.assertAlmostEqual(float(cells[1]), float(cells[2]), places=2)

    def test_old_results_without_positions(self):
        doc = doc_with_drift(1.0)
        for s in doc["samples"]:
            del s["position"]
        self.assertIn("No positions recorded",
                      "\n".join(drift.position_section(doc)))


class CountersTest(unittest.TestCase):
    def test_per_unit_and_zero_rows_dropped(self):
        doc = {"meta": {}, "samples": [
            {"config": c, "workload": "tcp", "rep": r, "metrics": {
                "mb_moved": mb, "kvm.io_exits": 10 * mb * k,
                "kvm.nmi_window_exits": 0}}
            for c, k, mb in (("a", 1, 100.0), ("b", 3, 50.0))
            for r in (1, 2, 3)]}
        text = "\n".join(drift.counters_section(doc, "tcp", ["a", "b"]))
        self.assertIn("median per MB", text)
        self.assertIn("| io_exits | 10 | 30 |", text)
        self.assertNotIn("nmi_window", text)
        self.assertEqual(drift.counters_section(doc, "boot", ["a"]), [])


if __name__ == "__main__":
    unittest.main()
