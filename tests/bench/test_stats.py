# SPDX-License-Identifier: Apache-2.0
"""Statistics: quantiles, Mann-Whitney U against hand-computed and
brute-force values, bootstrap determinism, and the verdict rules."""

import itertools
import math
import unittest

import benchpath  # noqa: F401
from skiffbench import stats


def brute_force_mwu_p(a, b):
    """Independent exact two-sided p: enumerate every split of the pooled
    values into groups of len(a) and len(b), with U counted pairwise."""
    def u_of(x, y):
        return sum(1.0 if xi > yi else 0.5 if xi == yi else 0.0
                   for xi in x for yi in y)
    pooled = list(a) + list(b)
    observed = u_of(a, b)
    us = []
    for idx in itertools.combinations(range(len(pooled)), len(a)):
        chosen = set(idx)
        x = [pooled[i] for i in idx]
        y = [pooled[i] for i in range(len(pooled)) if i not in chosen]
        us.append(u_of(x, y))
    lower = sum(u <= observed + 1e-9 for u in us) / len(us)
    upper = sum(u >= observed - 1e-9 for u in us) / len(us)
    return observed, min(1.0, 2 * min(lower, upper))


class QuantileTest(unittest.TestCase):
    def test_median_odd_even(self):
        self.assertEqual(stats.median([3, 1, 2]), 2)
        self.assertEqual(stats.median([4, 1, 3, 2]), 2.5)

    def test_quantile_interpolates(self):
        xs = [10, 20, 30, 40, 50]
        self.assertEqual(stats.quantile(xs, 0), 10)
        self.assertEqual(stats.quantile(xs, 1), 50)
        self.assertAlmostEqual(stats.quantile(xs, 0.9), 46.0)

    def test_minmax_and_errors(self):
        self.assertEqual(stats.minmax([5, 2, 9]), (2.0, 9.0))
        with self.assertRaises(ValueError):
            stats.median([])
        with self.assertRaises(ValueError):
            stats.quantile([1, 2], 1.5)
        with self.assertRaises(ValueError):
            stats.median([1.0, float("nan")])


class MannWhitneyTest(unittest.TestCase):
    def test_complete_separation_five_a_side(self):
        u, p = stats.mann_whitney_u([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
        self.assertEqual(u, 0)
        self.assertAlmostEqual(p, 2 / 252, places=12)
        u, p = stats.mann_whitney_u([6, 7, 8, 9, 10], [1, 2, 3, 4, 5])
        self.assertEqual(u, 25)
        self.assertAlmostEqual(p, 2 / 252, places=12)

    def test_hand_computed_three_a_side(self):
        # a=[1,2,4], b=[3,5,6]: only 4>3, so U=1. Of the C(6,3)=20 equally
        # likely splits, U=0 and U=1 occur once each: P(U<=1)=2/20, p=0.2.
        u, p = stats.mann_whitney_u([1, 2, 4], [3, 5, 6])
        self.assertEqual(u, 1)
        self.assertAlmostEqual(p, 0.2)

    def test_identical_samples_p_is_one(self):
        u, p = stats.mann_whitney_u([1, 2, 3], [1, 2, 3])
        self.assertEqual(u, 4.5)
        self.assertEqual(p, 1.0)
        self.assertEqual(stats.mann_whitney_u([7] * 30, [7] * 30)[1], 1.0)

    def test_exact_matches_brute_force_with_ties(self):
        cases = [([1, 2, 2, 3, 5], [2, 3, 3, 4, 6]),
                 ([10, 10, 11, 12], [10, 12, 12, 13, 14]),
                 ([0.5, 0.7, 0.7, 0.9, 1.1, 1.1], [0.7, 1.1, 1.3, 1.3])]
        for a, b in cases:
            with self.subTest(a=a, b=b):
                u, p = stats.mann_whitney_u(a, b)
                bu, bp = brute_force_mwu_p(a, b)
                self.assertAlmostEqual(u, bu)
                self.assertAlmostEqual(p, bp, places=12)

    def test_normal_approximation_large_samples(self):
        a = list(range(0, 30))
        b = [x + 10.5 for x in a]  # 10.5 .. 39.5: no ties with a
        u, p = stats.mann_whitney_u(a, b)
        # By hand: U = pairs a>b = sum over a>=11 of (a-10) = 1+..+19 = 190;
        # mu = 450, sigma^2 = 30*30*61/12 = 4575 (no ties),
        # z = (|190-450| - 0.5) / sqrt(4575).
        self.assertEqual(u, 190)
        z = (260 - 0.5) / math.sqrt(4575)
        self.assertAlmostEqual(p, math.erfc(z / math.sqrt(2)), places=12)

    def test_normal_approximation_tie_correction(self):
        a = [1] * 15 + [2] * 15
        b = [2] * 15 + [3] * 15
        u, p = stats.mann_whitney_u(a, b)
        # Ties: 15 ones, 30 twos, 15 threes, N=60.
        ties = (15 ** 3 - 15) * 2 + (30 ** 3 - 30)
        var = 30 * 30 / 12 * (61 - ties / (60 * 59))
        z = (abs(u - 450) - 0.5) / math.sqrt(var)
        self.assertEqual(u, 112.5)
        self.assertAlmostEqual(p, math.erfc(z / math.sqrt(2)), places=12)

    def test_exact_and_normal_agree_roughly_at_the_boundary(self):
        a = [1.0, 2.5, 3.1, 4.2, 5.0, 6.6, 7.1, 8.0, 9.3, 10.0,
             11.0, 12.2, 13.0, 14.1, 15.0, 16.2, 17.0, 18.3, 19.0, 20.1]
        b = [x + 4.05 for x in a]
        exact = stats.mann_whitney_u(a, b)[1]
        saved = stats.EXACT_MWU_MAX_N
        try:
            stats.EXACT_MWU_MAX_N = 0
            approx = stats.mann_whitney_u(a, b)[1]
        finally:
            stats.EXACT_MWU_MAX_N = saved
        self.assertAlmostEqual(exact, approx, delta=0.02)

    def test_min_attainable_p(self):
        self.assertAlmostEqual(stats.min_attainable_p(5, 5), 2 / 252)
        self.assertAlmostEqual(stats.min_attainable_p(3, 2), 0.2)


class BootstrapTest(unittest.TestCase):
    base = [10.0, 10.4, 9.8, 10.1, 10.2]
    cand = [12.1, 12.3, 11.9, 12.0, 12.2]

    def test_same_seed_same_answer(self):
        one = stats.bootstrap_ratio_ci(self.base, self.cand, seed=7)
        two = stats.bootstrap_ratio_ci(self.base, self.cand, seed=7)
        self.assertEqual(one, two)

    def test_seed_matters_and_global_random_untouched(self):
        import random
        # 25 distinct values a side, so CI ends are not pinned to a handful
        # of possible medians as they are with 5 runs.
        base = [10 + (i * 37 % 25) / 10 for i in range(25)]
        cand = [11 + (i * 13 % 25) / 9 for i in range(25)]
        random.seed(123)
        before = random.random()
        random.seed(123)
        a = stats.bootstrap_ratio_ci(base, cand, iters=2000, seed=1)
        self.assertEqual(random.random(), before)
        b = stats.bootstrap_ratio_ci(base, cand, iters=2000, seed=2)
        self.assertEqual(a[0], b[0])
        self.assertNotEqual(a[1:], b[1:])

    def test_ratio_and_interval(self):
        ratio, lo, hi = stats.bootstrap_ratio_ci(self.base, self.cand)
        self.assertAlmostEqual(ratio, 12.1 / 10.1)
        self.assertLessEqual(lo, ratio)
        self.assertLessEqual(ratio, hi)
        # Resampled medians stay within the observed ranges.
        self.assertGreaterEqual(lo, 11.9 / 10.4 - 1e-12)
        self.assertLessEqual(hi, 12.3 / 9.8 + 1e-12)

    def test_zero_baseline_does_not_crash(self):
        ratio, lo, hi = stats.bootstrap_ratio_ci([0, 0, 0], [0, 0, 0])
        self.assertEqual((ratio, lo, hi), (1.0, 1.0, 1.0))
        ratio, lo, hi = stats.bootstrap_ratio_ci([0, 0, 0, 0], [1, 2, 1, 2])
        self.assertTrue(math.isinf(ratio) and math.isinf(lo))


class VerdictTest(unittest.TestCase):
    slow = [10.0, 10.4, 9.8, 10.1, 10.2]
    fast = [12.1, 12.3, 11.9, 12.0, 12.2]

    def test_overlapping_draws_are_within_noise(self):
        pool = [9.7, 10.3, 10.0, 9.9, 10.2, 10.1, 9.8, 10.4, 10.05, 9.95]
        v = stats.verdict(pool[0::2], pool[1::2], higher_is_better=True)
        self.assertEqual(v["verdict"], "within noise")
        self.assertLessEqual(v["ci_lo"], 1.0)
        self.assertGreaterEqual(v["ci_hi"], 1.0)
        self.assertGreater(v["p"], 0.05)

    def test_higher_is_better(self):
        v = stats.verdict(self.slow, self.fast, higher_is_better=True)
        self.assertEqual(v["verdict"], "faster")
        self.assertGreater(v["ci_lo"], 1.0)
        self.assertAlmostEqual(v["p"], 2 / 252)
        self.assertTrue(v["agree"])
        v = stats.verdict(self.fast, self.slow, higher_is_better=True)
        self.assertEqual(v["verdict"], "slower")

    def test_lower_is_better(self):
        # Latency: the candidate with the bigger numbers is the slower one.
        v = stats.verdict(self.slow, self.fast, higher_is_better=False)
        self.assertEqual(v["verdict"], "slower")
        v = stats.verdict(self.fast, self.slow, higher_is_better=False)
        self.assertEqual(v["verdict"], "faster")
        self.assertLess(v["ci_hi"], 1.0)

    def test_unknown_direction_and_too_few_runs(self):
        self.assertEqual(stats.verdict(self.slow, self.fast, None)["verdict"],
                         "n/a")
        self.assertEqual(stats.verdict([1.0], self.fast, True)["verdict"],
                         "insufficient data")
        # 3 vs 2 constant runs: the bootstrap CI is [1.33, 1.33] but no
        # rank test can reach 5% with 10 possible splits.
        v = stats.verdict([3, 3, 3], [4, 4], True)
        self.assertEqual(v["verdict"], "insufficient data")

    def test_reproducible(self):
        self.assertEqual(stats.verdict(self.slow, self.fast, True),
                         stats.verdict(self.slow, self.fast, True))


if __name__ == "__main__":
    unittest.main()
