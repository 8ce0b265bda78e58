# SPDX-License-Identifier: Apache-2.0
"""Table-level verdicts: Benjamini-Hochberg on known vectors, the
agreement rule between rank test and bootstrap CI, and the minimal
detectable effect."""

import math
import unittest

import benchpath  # noqa: F401
from skiffbench import stats, verdicts

FAST = stats.VERDICT_BETTER
SLOW = stats.VERDICT_WORSE


def res(lo, hi, p, u, n=5, verdict=None):
    """A stats.verdict()-shaped result."""
    return {"ci_lo": lo, "ci_hi": hi, "p": p, "U": u, "n_base": n,
            "n_cand": n, "ratio": (lo + hi) / 2, "verdict": verdict or "x"}


class BHTest(unittest.TestCase):
    def test_known_vectors(self):
        # R: p.adjust(c(0.01, 0.04, 0.03, 0.005, 0.2), "BH")
        q = verdicts.bh_adjust([0.01, 0.04, 0.03, 0.005, 0.2])
        for got, want in zip(q, [0.025, 0.05, 0.05, 0.025, 0.2]):
            self.assertAlmostEqual(got, want)
        # The step-up minimum: rank 2's m*p/k = 0.06 drops to rank 3's.
        q = verdicts.bh_adjust([0.001, 0.04, 0.041])
        for got, want in zip(q, [0.003, 0.041, 0.041]):
            self.assertAlmostEqual(got, want)
        # R: p.adjust(c(0.01, 0.02, 0.03, 0.04, 0.05, 0.5), "BH")
        q = verdicts.bh_adjust([0.01, 0.02, 0.03, 0.04, 0.05, 0.5])
        for got, want in zip(q, [0.06] * 5 + [0.5]):
            self.assertAlmostEqual(got, want)

    def test_capped_and_single(self):
        cases = (([0.7, 0.9], [0.9, 0.9]), ([0.8] * 3, [0.8] * 3),
                 ([0.03], [0.03]), ([], []), ([0.6, 0.6, 0.01], [0.6, 0.6, 0.03]),
                 ([0.5, 0.9, 0.45], [0.75, 0.9, 0.75]))
        for p, want in cases:
            got = verdicts.bh_adjust(p)
            self.assertEqual(len(got), len(want))
            for g, w in zip(got, want):
                self.assertAlmostEqual(g, w, msg=p)


class DecideTest(unittest.TestCase):
    def test_agreeing_tests_give_a_verdict(self):
        larger = res(1.1, 1.3, 0.008, 25)  # U = 25 > 12.5: cand larger
        self.assertEqual(verdicts.decide(larger, 0.01, True), FAST)
        self.assertEqual(verdicts.decide(larger, 0.01, False), SLOW)
        smaller = res(0.7, 0.9, 0.008, 0)
        self.assertEqual(verdicts.decide(smaller, 0.01, True), SLOW)
        self.assertEqual(verdicts.decide(smaller, 0.01, False), FAST)

    def test_neither_is_noise(self):
        self.assertEqual(verdicts.decide(res(0.9, 1.2, 0.3, 15), 0.5, True),
                         stats.VERDICT_NOISE)

    def test_disagreement_needs_more_runs(self):
        # CI excludes 1, the adjusted rank test does not (raw p did).
        self.assertEqual(verdicts.decide(res(1.05, 1.3, 0.03, 22), 0.07,
                                         True), verdicts.NEEDS_MORE)
        # The rank test is significant, the CI contains 1.
        self.assertEqual(verdicts.decide(res(0.98, 1.3, 0.008, 25), 0.02,
                                         True), verdicts.NEEDS_MORE)
        # Both "significant" but in opposite directions.
        self.assertEqual(verdicts.decide(res(1.1, 1.3, 0.008, 0), 0.01,
                                         True), verdicts.NEEDS_MORE)

    def test_pass_through(self):
        nodata = res(1.1, 1.3, 0.2, 6, verdict=stats.VERDICT_NODATA)
        self.assertEqual(verdicts.decide(nodata, 0.2, True),
                         stats.VERDICT_NODATA)
        self.assertEqual(verdicts.decide(res(1.1, 1.3, 0.01, 25), 0.01,
                                         None), "n/a")

    def test_apply_table_adjusts_over_all_items(self):
        # Each alone would be a verdict (p = 2/252 < 0.05, CI above 1);
        # with 20 comparisons of which 19 are null, q = 20 * p > 0.05.
        hit = {"result": res(1.1, 1.3, 2 / 252, 25), "higher_is_better": True}
        nulls = [{"result": res(0.9, 1.1, 0.6 + i / 100, 12),
                  "higher_is_better": True} for i in range(19)]
        info = {"result": res(1.1, 1.3, 0.001, 25), "higher_is_better": None}
        items = [hit] + nulls + [info, {"result": None,
                                        "higher_is_better": True}]
        n = verdicts.apply_table(items)
        self.assertEqual(n, 20)  # the informational row is not a test
        self.assertAlmostEqual(hit["q"], 20 * 2 / 252)
        self.assertEqual(hit["decision"], verdicts.NEEDS_MORE)
        self.assertEqual(nulls[0]["decision"], stats.VERDICT_NOISE)
        self.assertNotIn("q", info)
        self.assertEqual(info["decision"], "n/a")
        # Alone, the same comparison is a verdict.
        alone = {"result": res(1.1, 1.3, 2 / 252, 25), "higher_is_better": True}
        verdicts.apply_table([alone])
        self.assertEqual(alone["decision"], FAST)


class MDETest(unittest.TestCase):
    def test_noise_and_n_set_the_resolution(self):
        quiet = [100, 101, 99, 100, 100.5]
        noisy = [100, 130, 75, 110, 90]
        small = verdicts.mde_pct(quiet, quiet)
        large = verdicts.mde_pct(noisy, noisy)
        self.assertLess(small, 3)
        self.assertGreater(large, verdicts.RESOLVE_PCT)
        # More runs of the same spread resolve less.
        self.assertLess(verdicts.mde_pct(noisy * 4, noisy * 4), large / 1.5)

    def test_known_value(self):
        # log SD s of each side; se = s * sqrt(2/5) / sqrt(3/pi);
        # z = 1.95996 + 0.84162.
        a = [math.exp(x) for x in (0.0, 0.1, -0.1, 0.05, -0.05)]
        s = math.sqrt(sum(x * x for x in (0.0, 0.1, -0.1, 0.05, -0.05)) / 4)
        want = (math.exp(2.80158 * s * math.sqrt(0.4 * math.pi / 3)) - 1) * 100
        self.assertAlmostEqual(verdicts.mde_pct(a, a), want, places=2)

    def test_too_few_runs_and_zero_values(self):
        self.assertTrue(math.isinf(verdicts.mde_pct([1, 2, 3], [1, 2])))
        self.assertTrue(math.isinf(verdicts.mde_pct([1], [1, 2, 3])))
        self.assertIsNone(verdicts.mde_pct([0, 0, 1, 2], [1, 2, 0, 3]))


if __name__ == "__main__":
    unittest.main()
