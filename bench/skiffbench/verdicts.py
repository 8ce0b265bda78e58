# SPDX-License-Identifier: Apache-2.0
"""Verdicts over a whole table of comparisons.

A report compares every configuration with the baseline on every metric
of every workload: about a hundred tests. Taken one by one at 5%, several
would come out "significant" by chance. So:

- the Mann-Whitney p-values of all directional comparisons of the table
  are adjusted together (Benjamini-Hochberg: the expected share of false
  discoveries among the verdicts stays below alpha);
- a verdict ("faster"/"slower") needs both the adjusted rank test and the
  bootstrap CI of the ratio of medians to exclude "no difference", in the
  same direction; neither: "within noise"; one but not the other: "needs
  more runs";
- each comparison states its minimal detectable effect (mde_pct): the
  smallest difference its n and noise could resolve, so "within noise"
  with an MDE of 40% is read as "not measured", not as "equal".
"""

import math
from statistics import NormalDist

from . import stats

NEEDS_MORE = "needs more runs"
RESOLVE_PCT = 15.0  # the difference the headline metrics should resolve


def bh_adjust(pvalues):
    """Benjamini-Hochberg adjusted p-values (q), in input order:
    q_(i) = min over j >= i of m * p_(j) / j, capped at 1."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    q = [1.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, pvalues[i] * m / rank)
        q[i] = min(1.0, running)
    return q


def decide(res, q, higher_is_better, alpha=0.05):
    """Verdict of one comparison (a stats.verdict() result) given its
    table-adjusted p-value q."""
    if res.get("verdict") == stats.VERDICT_NODATA:
        return stats.VERDICT_NODATA
    if higher_is_better is None:
        return "n/a"
    if q is None:
        return res.get("verdict", stats.VERDICT_NODATA)
    lo, hi = res["ci_lo"], res["ci_hi"]
    ci_sig = lo > 1.0 or hi < 1.0
    rank_sig = q < alpha
    if not ci_sig and not rank_sig:
        return stats.VERDICT_NOISE
    if ci_sig != rank_sig:
        return NEEDS_MORE
    # Both significant: the rank test's direction (U above or below its
    # null mean) must be the CI's.
    larger = lo > 1.0
    if (res["U"] > res["n_base"] * res["n_cand"] / 2.0) != larger:
        return NEEDS_MORE
    if larger == bool(higher_is_better):
        return stats.VERDICT_BETTER
    return stats.VERDICT_WORSE


def apply_table(items, alpha=0.05):
    """items: dicts with "result" (stats.verdict output or None) and
    "higher_is_better". Adds "q" (BH over every item with a direction and
    a p-value) and "decision" to each; returns the number of tests."""
    tested = [it for it in items
              if it.get("result") and it["result"].get("p") is not None
              and it.get("higher_is_better") is not None
              and it["result"].get("verdict") != stats.VERDICT_NODATA]
    qs = bh_adjust([it["result"]["p"] for it in tested])
    for it, q in zip(tested, qs):
        it["q"] = q
    for it in items:
        res = it.get("result")
        if res is None:
            it["decision"] = None
            continue
        it["decision"] = decide(res, it.get("q"), it.get("higher_is_better"),
                                alpha)
    return len(tested)


def _log_sd(xs):
    logs = [math.log(x) for x in xs]
    mean = sum(logs) / len(logs)
    return math.sqrt(sum((v - mean) ** 2 for v in logs) / (len(logs) - 1))


def mde_pct(base, cand, alpha=0.05, power=0.8):
    """Smallest ratio of medians, in percent away from 1, that a
    comparison of these sample sizes and this noise would detect with the
    given power at the given two-sided level (unadjusted, so optimistic
    after BH). Noise: the pooled SD of log values; the rank test's
    efficiency against the t test is 3/pi for normal data. inf when no
    rank test of these sizes can reach alpha; None when the values are
    not all positive (a ratio of logs is undefined: loss of 0%, say)."""
    base = [float(x) for x in base]
    cand = [float(x) for x in cand]
    if len(base) < 2 or len(cand) < 2:
        return math.inf
    if stats.min_attainable_p(len(base), len(cand)) >= alpha:
        return math.inf
    if min(base + cand) <= 0:
        return None
    n1, n2 = len(base), len(cand)
    var = ((n1 - 1) * _log_sd(base) ** 2
           + (n2 - 1) * _log_sd(cand) ** 2) / (n1 + n2 - 2)
    se = math.sqrt(var * (1.0 / n1 + 1.0 / n2) / (3.0 / math.pi))
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    return (math.exp(z * se) - 1.0) * 100.0
