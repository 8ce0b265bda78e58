# SPDX-License-Identifier: Apache-2.0
"""Small-sample statistics for benchmark comparisons (standard library only).

Benchmarks here have ~5 runs per configuration, so everything is built for
tiny samples: medians instead of means, a rank test whose exact null
distribution is enumerated rather than approximated, and a percentile
bootstrap of the ratio of medians with a fixed seed so a report regenerated
from the same raw JSON prints the same numbers.
"""

import math
import random

# Exact Mann-Whitney distribution is enumerated up to this many pooled
# observations; beyond it the normal approximation is already good and the
# DP (O(N * m * sum_of_ranks)) starts to cost seconds in pure Python.
EXACT_MWU_MAX_N = 40

VERDICT_BETTER = "faster"
VERDICT_WORSE = "slower"
VERDICT_NOISE = "within noise"
VERDICT_NODATA = "insufficient data"


def _clean(xs):
    vals = [float(x) for x in xs if x is not None]
    if any(math.isnan(v) for v in vals):
        raise ValueError("NaN in sample")
    return vals


def quantile(xs, q):
    """Quantile with linear interpolation between order statistics (the
    "type 7" definition used by R and numpy's default), q in [0, 1]."""
    vals = sorted(_clean(xs))
    if not vals:
        raise ValueError("quantile of an empty sample")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile level {q} outside [0, 1]")
    pos = q * (len(vals) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(vals) - 1)
    return vals[lo] + (vals[hi] - vals[lo]) * (pos - lo)


def median(xs):
    return quantile(xs, 0.5)


def minmax(xs):
    vals = _clean(xs)
    if not vals:
        raise ValueError("min/max of an empty sample")
    return min(vals), max(vals)


def _midranks(pooled):
    """Ranks 1..N of the pooled values, ties sharing their average rank.
    Returns (ranks in input order, list of tie-group sizes)."""
    order = sorted(range(len(pooled)), key=lambda i: pooled[i])
    ranks = [0.0] * len(pooled)
    ties = []
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and pooled[order[j + 1]] == pooled[order[i]]:
            j += 1
        avg = (i + j) / 2.0 + 1.0
        for k in range(i, j + 1):
            ranks[order[k]] = avg
        ties.append(j - i + 1)
        i = j + 1
    return ranks, ties


def _exact_rank_sum_counts(doubled_ranks, m):
    """Number of m-element subsets of the pooled ranks for every possible
    (doubled, hence integer) rank sum: the exact permutation null
    distribution of the first sample's rank sum, ties included."""
    total = sum(doubled_ranks)
    # counts[k][s]: subsets of size k with doubled rank sum s
    counts = [[0] * (total + 1) for _ in range(m + 1)]
    counts[0][0] = 1
    for r in doubled_ranks:
        for k in range(m, 0, -1):
            row, prev = counts[k], counts[k - 1]
            for s in range(total, r - 1, -1):
                if prev[s - r]:
                    row[s] += prev[s - r]
    return counts[m]


def mann_whitney_u(a, b):
    """Two-sided Mann-Whitney U test.

    Returns (U, p). U is the statistic of the first sample: the number of
    pairs (x in a, y in b) with x > y, ties counting one half (the same
    convention as scipy.stats.mannwhitneyu). For a pooled size up to
    EXACT_MWU_MAX_N the p-value is exact, from the permutation distribution
    of the rank sum given the observed ties; above that it is the normal
    approximation with tie-corrected variance and continuity correction.
    Two-sided p = min(1, 2 * smaller tail).
    """
    a, b = _clean(a), _clean(b)
    m, n = len(a), len(b)
    if m == 0 or n == 0:
        raise ValueError("Mann-Whitney U needs two non-empty samples")
    ranks, ties = _midranks(a + b)
    rank_sum_a = sum(ranks[:m])
    u = rank_sum_a - m * (m + 1) / 2.0
    big_n = m + n

    if big_n <= EXACT_MWU_MAX_N:
        doubled = [int(round(2 * r)) for r in ranks]
        counts = _exact_rank_sum_counts(doubled, m)
        observed = int(round(2 * rank_sum_a))
        total = math.comb(big_n, m)
        lower = sum(counts[: observed + 1]) / total
        upper = sum(counts[observed:]) / total
        return u, min(1.0, 2.0 * min(lower, upper))

    mu = m * n / 2.0
    tie_term = sum(t ** 3 - t for t in ties) / (big_n * (big_n - 1))
    var = m * n / 12.0 * ((big_n + 1) - tie_term)
    if var <= 0:  # every value identical: no evidence of any difference
        return u, 1.0
    z = max(0.0, abs(u - mu) - 0.5) / math.sqrt(var)
    return u, min(1.0, math.erfc(z / math.sqrt(2.0)))


def _ratio(num, den):
    if den == 0:
        # Baseline median 0 (e.g. zero packet loss): the ratio is undefined
        # unless both are 0. Report inf rather than crash; the table shows it.
        return 1.0 if num == 0 else math.inf
    return num / den


def bootstrap_ratio_ci(base, cand, conf=0.95, iters=10000, seed=1):
    """Percentile-bootstrap confidence interval of median(cand)/median(base).

    Each side is resampled with replacement independently (the runs of the
    two configurations are independent). A private random.Random(seed) keeps
    results reproducible and unaffected by other users of `random`.
    Returns (ratio, lo, hi). Values are assumed non-negative (rates, times,
    counts), where a ratio is meaningful.
    """
    base, cand = _clean(base), _clean(cand)
    if not base or not cand:
        raise ValueError("bootstrap needs two non-empty samples")
    if not 0.0 < conf < 1.0:
        raise ValueError(f"confidence level {conf} outside (0, 1)")
    rng = random.Random(seed)
    nb, nc = len(base), len(cand)
    ratios = []
    for _ in range(iters):
        rb = median(rng.choices(base, k=nb))
        rc = median(rng.choices(cand, k=nc))
        ratios.append(_ratio(rc, rb))
    ratios.sort()
    alpha = 1.0 - conf
    lo = _sorted_quantile(ratios, alpha / 2.0)
    hi = _sorted_quantile(ratios, 1.0 - alpha / 2.0)
    return _ratio(median(cand), median(base)), lo, hi


def _sorted_quantile(vals, q):
    # Like quantile() but on an already sorted list that may contain inf,
    # where interpolating inf - inf would give NaN.
    pos = q * (len(vals) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(vals) - 1)
    if vals[lo] == vals[hi] or math.isinf(vals[hi]):
        return vals[lo] if pos == lo else vals[hi]
    return vals[lo] + (vals[hi] - vals[lo]) * (pos - lo)


def min_attainable_p(m, n):
    """Smallest two-sided exact Mann-Whitney p for sample sizes m and n
    (complete separation): 2 / C(m+n, m); 2/252 for five runs a side."""
    return min(1.0, 2.0 / math.comb(m + n, m))


def verdict(base, cand, higher_is_better, conf=0.95, iters=10000, seed=1):
    """Compare a candidate configuration's samples against the baseline's.

    The verdict comes from the bootstrap CI of the ratio of medians: if the
    whole CI lies above 1 the candidate's metric is larger, below 1 smaller,
    and which of those is "faster" depends on the metric's direction; a CI
    containing 1 is "within noise". The Mann-Whitney p-value is reported
    alongside; `agree` tells whether it tells the same story at the same
    level (p < 1 - conf exactly when the CI excludes 1), because with five
    runs a bootstrap of the median is coarse and a disagreement is worth a
    reader's second look. higher_is_better=None (unknown direction) gives
    the numbers but verdict "n/a". With too few runs for any rank test to
    reach the level (see min_attainable_p) the verdict is "insufficient
    data" whatever the bootstrap says.
    """
    base, cand = _clean(base), _clean(cand)
    out = {"ratio": None, "ci_lo": None, "ci_hi": None, "p": None, "U": None,
           "n_base": len(base), "n_cand": len(cand), "conf": conf,
           "verdict": VERDICT_NODATA, "agree": None}
    if len(base) < 2 or len(cand) < 2:
        return out
    ratio, lo, hi = bootstrap_ratio_ci(base, cand, conf, iters, seed)
    u, p = mann_whitney_u(cand, base)
    out.update(ratio=ratio, ci_lo=lo, ci_hi=hi, p=p, U=u)
    significant = lo > 1.0 or hi < 1.0
    out["agree"] = significant == (p < 1.0 - conf)
    if min_attainable_p(len(base), len(cand)) >= 1.0 - conf:
        # So few runs (e.g. 3 vs 2 after failures) that no rank test could
        # reach this level, yet a bootstrap of near-constant samples happily
        # gives a CI of width zero: refuse rather than overclaim.
        out["verdict"] = VERDICT_NODATA
        out["agree"] = None
    elif higher_is_better is None:
        out["verdict"] = "n/a"
        out["agree"] = None
    elif not significant:
        out["verdict"] = VERDICT_NOISE
    elif (lo > 1.0) == bool(higher_is_better):
        out["verdict"] = VERDICT_BETTER
    else:
        out["verdict"] = VERDICT_WORSE
    return out
