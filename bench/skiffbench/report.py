# SPDX-License-Identifier: Apache-2.0
"""Results JSON -> markdown report (+ gnuplot images, + a copy of the JSON).

Results schema (version 1):

  {"schema": 1,                                   # optional, default 1
   "meta": {"date": "2026-11-30T03:08:01Z", "machine": "uname -a / CPU",
            "command": "make bench", "reps": 5, "baseline": "qemu-vhost-on",
            ...any other keys are printed as-is},
   "samples": [{"config": "skiff-vhost", "workload": "tcp-g2h", "rep": 1,
                "metrics": {"throughput_gbps": 9.4, "kvm_exits": 120345},
                "duration_s": 12.5,               # optional, wall time
                "raw": {"iperf3": "raw/..."},     # optional, raw files
                "error": "why the run failed"}]}  # optional: failed run

One sample is one run of one workload under one configuration. A metric
absent from a sample is simply not measured in that run; non-numeric values
are kept in the JSON but left out of the statistics (with a note). A sample
with "error" is a failed run: listed under Notes, not counted.
"""

import json
import math
import os
import shutil

from . import drift
from . import metrics as metric_table
from . import plot
from . import stats
from . import verdicts

SCHEMA_VERSION = 1


def load_results(path):
    with open(path) as f:
        try:
            doc = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: not valid JSON ({e})") from None
    validate(doc)
    return doc


def validate(doc):
    """Raise ValueError naming the first thing wrong with a results doc."""
    if not isinstance(doc, dict):
        raise ValueError("results: top level must be an object")
    if doc.get("schema", SCHEMA_VERSION) != SCHEMA_VERSION:
        raise ValueError(f"results: schema {doc.get('schema')} not supported")
    if not isinstance(doc.get("meta", {}), dict):
        raise ValueError("results: meta must be an object")
    samples = doc.get("samples")
    if not isinstance(samples, list):
        raise ValueError("results: samples must be a list")
    for i, s in enumerate(samples):
        where = f"results: samples[{i}]"
        if not isinstance(s, dict):
            raise ValueError(f"{where} is not an object")
        for key in ("config", "workload"):
            if not isinstance(s.get(key), str) or not s[key]:
                raise ValueError(f"{where}: missing {key}")
        if not isinstance(s.get("metrics"), dict):
            raise ValueError(f"{where}: metrics must be an object")


def _is_number(v):
    return (isinstance(v, (int, float)) and not isinstance(v, bool)
            and math.isfinite(v))


def group(doc):
    """({workload: {metric: {config: [values in rep order]}}},
    {workload: {config: n_samples}}, notes, config order of first appearance)
    """
    data, counts, notes, configs = {}, {}, [], []
    samples = sorted(doc["samples"], key=lambda s: (s.get("rep") or 0))
    for s in samples:
        cfg, wl = s["config"], s["workload"]
        if cfg not in configs:
            configs.append(cfg)
        if s.get("error"):
            notes.append(f"{cfg}/{wl} rep {s.get('rep')} failed, not "
                         f"counted: {s['error']}")
            continue
        counts.setdefault(wl, {}).setdefault(cfg, 0)
        counts[wl][cfg] += 1
        for name, value in s["metrics"].items():
            if not _is_number(value):
                notes.append(f"{cfg}/{wl} rep {s.get('rep')}: {name}="
                             f"{value!r} is not a number, left out")
                continue
            data.setdefault(wl, {}).setdefault(name, {}) \
                .setdefault(cfg, []).append(float(value))
    return data, counts, notes, configs


def fmt(x):
    if x is None:
        return "—"
    if math.isinf(x):
        return "inf"
    if x == 0:
        return "0"
    if abs(x) >= 10000:
        return f"{x:,.0f}"
    return f"{x:.4g}"


def summary_cell(vals, expected_n):
    if not vals:
        return "—"
    lo, hi = stats.minmax(vals)
    cell = f"{fmt(stats.median(vals))} [{fmt(lo)}–{fmt(hi)}]"
    return cell + (f" (n={len(vals)})" if len(vals) != expected_n else "")


def work_varies(doc, workload):
    """Whether the workload's amount of work depends on the configuration
    (a sample carries a work unit: MB moved, packets, transactions)."""
    return any(s["workload"] == workload and not s.get("error")
               and any(u in s["metrics"] for u in metric_table.WORK_UNITS)
               for s in doc["samples"])


def offered_rate(doc, workload):
    """The workload's UDP offered rate (metrics.offered_rate) over its
    measured runs."""
    return metric_table.offered_rate(
        s["metrics"]["udp_offered_mbps"] for s in doc["samples"]
        if s["workload"] == workload and not s.get("error")
        and _is_number(s["metrics"].get("udp_offered_mbps")))


def compare_workload(by_metric, configs, baseline, conf, iters, seed,
                     varies=False, offered=None):
    """Rows of the comparison table: one per (metric, non-baseline config)
    where the candidate has data, or one per metric when there is only the
    baseline. KVM's raw counters (kvm.*) have their own table. varies and
    offered: see metrics.direction."""
    rows = []
    for name in sorted(by_metric, key=metric_table.sort_key):
        if name.startswith("kvm."):
            continue
        per_cfg = by_metric[name]
        base = per_cfg.get(baseline, [])
        others = [c for c in configs if c != baseline and per_cfg.get(c)]
        higher = metric_table.direction(name, varies, offered)
        for cand in others or [None]:
            row = {"metric": name, "config": cand, "base": base,
                   "cand": per_cfg.get(cand, []) if cand else [],
                   "higher_is_better": higher, "result": None, "mde": None}
            if cand and base:
                row["result"] = stats.verdict(base, row["cand"], higher,
                                              conf, iters, seed)
                if higher is not None:
                    row["mde"] = verdicts.mde_pct(base, row["cand"],
                                                  1 - conf)
            rows.append(row)
    return rows


def comparison_table(doc, baseline, conf=0.95, iters=10000, seed=1):
    """({workload: rows}, number of tests): every comparison of the
    results, with Benjamini-Hochberg over all of them and each row's
    "decision" (verdicts.decide)."""
    data, _counts, _notes, configs = group(doc)
    order = [baseline] + [c for c in configs if c != baseline]
    tables = {w: compare_workload(data[w], order, baseline, conf, iters,
                                  seed, work_varies(doc, w),
                                  offered_rate(doc, w))
              for w in sorted(data)}
    n_tests = verdicts.apply_table(
        [r for rows in tables.values() for r in rows], 1 - conf)
    return tables, n_tests


def _arrow(higher):
    return {True: " ↑", False: " ↓"}.get(higher, "")


def fmt_mde(mde):
    if mde is None:
        return "—"
    if math.isinf(mde):
        return "any"
    return f"{mde:.0f}%" + (" ⚠" if mde > verdicts.RESOLVE_PCT else "")


def markdown_table(rows, baseline, counts):
    head = ("| metric | config | baseline " + baseline + " median [min–max]"
            " | candidate median [min–max] | ratio | 95% CI | p (MWU)"
            " | q (BH) | MDE | verdict |")
    out = [head, "|" + "---|" * 10]
    for r in rows:
        res = r["result"] or {}
        ci = (f"{fmt(res['ci_lo'])}–{fmt(res['ci_hi'])}"
              if res.get("ci_lo") is not None else "—")
        p = f"{res['p']:.3g}" if res.get("p") is not None else "—"
        q = f"{r['q']:.3g}" if r.get("q") is not None else "—"
        verdict = r.get("decision") or ("—" if r["config"]
                                        else "baseline only")
        n_base = counts.get(baseline, 0)
        n_cand = counts.get(r["config"], 0) if r["config"] else 0
        out.append("| " + " | ".join([
            r["metric"] + _arrow(r["higher_is_better"]),
            r["config"] or "—",
            summary_cell(r["base"], n_base),
            summary_cell(r["cand"], n_cand),
            fmt(res.get("ratio")), ci, p, q, fmt_mde(r.get("mde")),
            verdict]) + " |")
    return "\n".join(out)


def method_text(conf, iters, seed, n_tests=0):
    pct = f"{conf * 100:g}%"
    alpha = f"{1 - conf:.2g}"
    return (
        f"Each cell is median [min–max] over the runs. *ratio* is "
        f"median(candidate) / median(baseline); *{pct} CI* is a percentile "
        f"bootstrap of that ratio ({iters} resamples, seed {seed}, each side "
        f"resampled independently). *p* is the two-sided Mann–Whitney U test "
        f"(exact permutation distribution for up to "
        f"{stats.EXACT_MWU_MAX_N} pooled runs, else normal approximation "
        f"with tie correction); *q* is p adjusted by Benjamini–Hochberg over "
        f"all {n_tests} comparisons of this report (false-discovery rate "
        f"{alpha}). A verdict, \"faster\" (better) or \"slower\" (worse) by "
        f"the metric's direction (↑ higher is better, ↓ lower is better), "
        f"needs q < {alpha} and a CI excluding 1, in the same direction; "
        f"neither is \"within noise\"; one without the other is \"needs "
        f"more runs\". *MDE* is the smallest difference the two samples' n "
        f"and noise resolve (80% power, two-sided {alpha} before the "
        f"adjustment, pooled SD of log values, rank-test efficiency 3/π): "
        f"⚠ above {verdicts.RESOLVE_PCT:g}%, \"any\" when no rank test of "
        f"these sizes can reach {alpha}; \"within noise\" with a large MDE "
        f"means not resolved, not equal. Costs per run or per second "
        f"(CPU seconds, exits, exits per second) get no arrow in workloads "
        f"whose amount of work depends on the configuration (streams of "
        f"fixed duration): read the per-unit rows (per GB, per packet, per "
        f"transaction) there. UDP loss gets an arrow only at a bounded offered "
        f"rate (iperf3 -b; at -b 0 a slow sender loses less), and UDP "
        f"packets per second and goodput only when every run was offered "
        f"the same rate. Metrics without an arrow are informational.")


def build_report(doc, out_dir, baseline=None, conf=0.95, iters=10000,
                 seed=1, plots=True, results_name="results.json",
                 raw_path=None):
    """Write out_dir/report.md, plots and the raw JSON; return the markdown.
    raw_path: the results file doc came from, copied byte for byte; without
    it doc itself is written out."""
    validate(doc)
    meta = doc.get("meta", {})
    baseline = baseline or meta.get("baseline")
    data, counts, notes, configs = group(doc)
    if not baseline:
        raise ValueError("no baseline: pass --baseline or set meta.baseline "
                         f"(configs: {', '.join(configs)})")
    if configs and baseline not in configs:
        raise ValueError(f"baseline {baseline!r} has no samples "
                         f"(configs: {', '.join(configs)})")
    order = [baseline] + [c for c in configs if c != baseline]
    os.makedirs(out_dir, exist_ok=True)
    term = plot.detect_terminal() if plots else None
    if plots and term is None:
        notes.append("plots skipped: gnuplot missing or has no png/svg "
                     "terminal (Debian: gnuplot-nox)")

    md = ["# skiff benchmark report", ""]
    for key in ("date", "machine", "command", "reps"):
        if key in meta:
            md.append(f"- {key}: {meta[key]}")
    md.append(f"- baseline: {baseline}")
    for key in sorted(k for k in meta if k not in
                      ("date", "machine", "command", "reps", "baseline")):
        md.append(f"- {key}: {meta[key]}")
    md += [f"- raw data: [{results_name}]({results_name})", "",
           method_text(conf, iters, seed), ""]

    tables, n_tests = comparison_table(doc, baseline, conf, iters, seed)
    md[-2] = method_text(conf, iters, seed, n_tests)
    unknown = set()
    for workload in sorted(data):
        by_metric = data[workload]
        unknown |= {m for m in by_metric if not metric_table.is_known(m)}
        n_line = ", ".join(f"{c} {counts[workload].get(c, 0)}" for c in order
                           if counts[workload].get(c))
        md += [f"## {workload}", "", f"Runs per config: {n_line}.", ""]
        md += [markdown_table(tables[workload], baseline, counts[workload]),
               ""]
        md += drift.counters_section(doc, workload, order)
        if term is not None:
            shown = {k: v for k, v in by_metric.items()
                     if not k.startswith("kvm.")}
            image, why = plot.plot_workload(workload, shown,
                                            [c for c in order
                                             if counts[workload].get(c)],
                                            out_dir, term)
            if image:
                name = os.path.basename(image)
                md += [f"![{workload}]({name})", ""]
            else:
                notes.append(f"plot for {workload} not made: {why}")
    md += drift.position_section(doc)
    for name in sorted(unknown):
        notes.append(f"metric {name} has no direction in "
                     f"skiffbench/metrics.py: no verdict given")
    if notes:
        md += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    text = "\n".join(md)
    with open(os.path.join(out_dir, "report.md"), "w") as f:
        f.write(text)
    dst = os.path.join(out_dir, results_name)
    if raw_path is not None:
        if os.path.abspath(raw_path) != os.path.abspath(dst):
            shutil.copyfile(raw_path, dst)
    else:
        with open(dst, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    return text
