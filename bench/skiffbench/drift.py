# SPDX-License-Identifier: Apache-2.0
"""Report sections beside the comparison table: the position term (does a
run's place in its round move its result?) and KVM's raw counters.

Position: each sample carries its 1-based place in the round's order
("position", set by rounds.ingest_round). A value is divided by the
median of its configuration's values for the same workload and metric,
which takes the configuration's own level out; what is left is compared
across positions: the median ratio per position, and Spearman's rank
correlation of position with the ratio (p from 2000 seeded
permutations). The Williams design balances positions, so drift adds
noise rather than bias; this section says how much.
"""

import math
import random

from . import stats

# (workload, metric) checked for drift: the headline's main numbers.
POSITION_METRICS = (
    ("boot", "boot_init_ms"),
    ("tcp-g2h", "throughput_gbps"),
    ("tcp-g2h", "cpu_s_per_gb"),
    ("tcp-h2g", "throughput_gbps"),
    ("udp-g2h", "udp_pps"),
    ("udp-g2h", "cpu_s_per_mpkt"),
    ("rr", "latency_p50_us"),
    ("ping", "ping_avg_ms"),
    ("vsock-h2g", "vsock_mb_s"),
    ("vsock-g2h", "vsock_mb_s"),
    ("vsock-rr", "vsock_rtt_p50_us"),
    ("balloon", "balloon_mib_per_s"),
    ("cpu", "cpu_job_ms"),
)


def _ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    ranks = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return ranks


def spearman(xs, ys):
    """Spearman's rho (Pearson on mid-ranks); None when either side is
    constant."""
    rx, ry = _ranks(xs), _ranks(ys)
    n = len(xs)
    mx, my = sum(rx) / n, sum(ry) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def spearman_p(xs, ys, iters=2000, seed=1):
    """Two-sided permutation p of Spearman's rho."""
    rho = spearman(xs, ys)
    if rho is None:
        return None, None
    rng = random.Random(seed)
    ys = list(ys)
    hits = 0
    for _ in range(iters):
        rng.shuffle(ys)
        r = spearman(xs, ys)
        if r is not None and abs(r) >= abs(rho) - 1e-12:
            hits += 1
    return rho, (hits + 1) / (iters + 1)


def position_ratios(doc, workload, metric):
    """[(position, value / its configuration's median)]."""
    by_cfg = {}
    for s in doc["samples"]:
        v = s["metrics"].get(metric)
        if (s["workload"] != workload or s.get("error")
                or not isinstance(s.get("position"), int)
                or not isinstance(v, (int, float)) or isinstance(v, bool)):
            continue
        by_cfg.setdefault(s["config"], []).append((s["position"], float(v)))
    out = []
    for pairs in by_cfg.values():
        med = stats.median([v for _, v in pairs])
        if med > 0:
            out += [(pos, v / med) for pos, v in pairs]
    return out


def position_section(doc):
    rows = []
    width = 0
    for workload, metric in POSITION_METRICS:
        pairs = position_ratios(doc, workload, metric)
        if len(pairs) < 4:
            continue
        positions = sorted({p for p, _ in pairs})
        width = max(width, max(positions))
        per = {p: stats.median([r for q, r in pairs if q == p])
               for p in positions}
        rho, p = spearman_p([q for q, _ in pairs], [r for _, r in pairs])
        rows.append((f"{workload} {metric}", per, rho, p, len(pairs)))
    if not rows:
        return ["## Position in the round", "",
                "No positions recorded (results from before the Williams "
                "design): drift not checked.", ""]
    head = ("| metric | " + " | ".join(f"pos {i}" for i in
                                       range(1, width + 1))
            + " | Spearman ρ | p | runs |")
    out = ["## Position in the round", "",
           "Median of value / its configuration's median, by the run's "
           "place in its round (1 = first after L1's boot); ρ and its "
           "permutation p: a monotone trend with position. The design "
           "balances positions, so a trend widens the spread of every "
           "configuration alike instead of favouring one.", "",
           head, "|" + "---|" * (width + 4)]
    for name, per, rho, p, n in rows:
        cells = [f"{per[i]:.3f}" if i in per else "—"
                 for i in range(1, width + 1)]
        out.append(f"| {name} | " + " | ".join(cells) + " | "
                   + ("—" if rho is None else f"{rho:+.2f}") + " | "
                   + ("—" if p is None else f"{p:.3g}") + f" | {n} |")
    return out + [""]


def _unit(metrics):
    """(divisor, label) of a sample's work, or (None, "run")."""
    if metrics.get("mb_moved"):
        return metrics["mb_moved"], "MB"
    if metrics.get("udp_packets"):
        return metrics["udp_packets"], "packet"
    if metrics.get("rr_transactions"):
        return metrics["rr_transactions"], "transaction"
    return None, "run"


def counters_section(doc, workload, order):
    """KVM's debugfs counters (kvm.NAME) of a workload: median per unit of
    work (per run where the work is fixed), one column per config."""
    per = {}
    label = "run"
    for s in doc["samples"]:
        if s["workload"] != workload or s.get("error"):
            continue
        div, lab = _unit(s["metrics"])
        if div is not None:
            label = lab
        for name, v in s["metrics"].items():
            if name.startswith("kvm.") and isinstance(v, (int, float)):
                val = v / div if div else float(v)
                per.setdefault(name, {}).setdefault(s["config"], []).append(val)
    names = [n for n in sorted(per)
             if any(stats.median(vs) for vs in per[n].values())]
    if not names:
        return []
    cols = [c for c in order if any(c in per[n] for n in names)]
    out = [f"KVM counters (L1's debugfs), median per {label}; zero in every "
           f"configuration left out:", "",
           "| counter | " + " | ".join(cols) + " |",
           "|---|" + "---|" * len(cols)]
    from .report import fmt  # noqa: E402  (report imports this module)
    for n in names:
        out.append(f"| {n[4:]} | " + " | ".join(
            fmt(stats.median(per[n][c])) if c in per[n] else "—"
            for c in cols) + " |")
    return out + [""]

