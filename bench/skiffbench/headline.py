# SPDX-License-Identifier: Apache-2.0
"""BENCHMARKS.md, generated: what skiff wins, ties and loses against its
peers, from the committed runs docs/bench/HEADLINE.json names.

Each table is one run; each comparison is one of skiff's configurations
against one peer on one metric: the ratio of medians, its bootstrap CI
and the verdict of verdicts.decide, with Benjamini-Hochberg over every
comparison of the page (one family: the page's claims). A run built from
a dirty tree is refused: a headline must be reproducible from a commit.
"""

import json
import os

from . import metrics, report, stats, summary, verdicts

INDEX = os.path.join("docs", "bench", "HEADLINE.json")
WORDS = {stats.VERDICT_BETTER: "**win**", stats.VERDICT_WORSE: "**loss**",
         verdicts.NEEDS_MORE: "needs more runs",
         stats.VERDICT_NODATA: "too few runs"}
# Percentile metrics and the count of observations each run's percentile
# is taken over.
OBSERVATIONS = {"latency_": ("rr_transactions", "transactions"),
                "vsock_rtt_": ("rr_transactions", "transactions"),
                "blk_clat_": ("blk_ios", "I/Os")}
LABELS = {(w, m): label.strip() for w, m, label in summary.HEADLINE}
LABELS.update({("boot", "boot_guest_uptime_ms"): "guest uptime at init, ms",
               ("udp64-h2g", "cpu_s_per_mpkt"):
                   "VMM CPU s per million packets",
               ("udp64-g2h", "cpu_s_per_mpkt"):
                   "VMM CPU s per million packets"})
# The tally's order.
ORDER = ("win", "tie", "loss", "not resolved", "needs more runs",
         "too few runs")
KVMTOOL_NOTE = ("kvmtool rows: its guest runs on 4 KiB pages and boots "
                "`noapic noacpi` in this testbed (Setup), so they are not "
                "like for like.")


def load_index(repo):
    with open(os.path.join(repo, INDEX)) as f:
        return json.load(f)


def load_run(repo, run):
    doc = report.load_results(os.path.join(repo, "docs", "bench", run,
                                           "results.json"))
    build = str(doc.get("meta", {}).get("skiff", ""))
    if not build or build.endswith("-dirty"):
        raise ValueError(f"run {run}: built from a dirty or unknown tree "
                         f"(skiff={build or '?'}): not a headline run")
    return doc


def _observations(doc, workload, metric, configs):
    """'each run's p99 of >= N transactions' for a percentile, else ''."""
    for prefix, (count, unit) in OBSERVATIONS.items():
        if metric.startswith(prefix) and "_p" in metric:
            ns = [s["metrics"].get(count) for s in doc["samples"]
                  if s["workload"] == workload and s["config"] in configs
                  and not s.get("error")]
            ns = [n for n in ns if isinstance(n, (int, float))]
            if ns:
                pct = metric.rsplit("_p", 1)[1].split("_us")[0]
                return (f" (each run's p{pct.replace('_', '.')} of "
                        f"≥ {min(ns):,.0f} {unit})")
    return ""


def comparisons(repo, index, iters=10000, seed=1):
    """[(table, run doc, [comparison dicts])] with decisions made over the
    whole page."""
    out, items = [], []
    for table in index["tables"]:
        doc = load_run(repo, table["run"])
        data, counts, _notes, _configs = report.group(doc)
        rows = []
        for row in table["rows"]:
            # [workload, metric] for every pair of the table, or
            # [workload, metric, pairs] for a row only some configurations
            # ran (a disk-only configuration's fio in a network table).
            workload, metric = row[0], row[1]
            per_cfg = data.get(workload, {}).get(metric, {})
            higher = metrics.direction(metric,
                                       report.work_varies(doc, workload),
                                       report.offered_rate(doc, workload))
            for skiff, peer in (row[2] if len(row) > 2 else table["pairs"]):
                base, cand = per_cfg.get(peer, []), per_cfg.get(skiff, [])
                if not base or not cand:
                    raise ValueError(f"run {table['run']}: no {metric} of "
                                     f"{workload} for {skiff} or {peer}")
                rows.append({
                    "workload": workload, "metric": metric, "skiff": skiff,
                    "peer": peer, "base": base, "cand": cand,
                    "higher_is_better": higher,
                    "result": stats.verdict(base, cand, higher, 0.95, iters,
                                            seed),
                    "mde": verdicts.mde_pct(base, cand),
                    "obs": _observations(doc, workload, metric,
                                         (skiff, peer))})
        items += rows
        out.append((table, doc, rows))
    verdicts.apply_table(items)
    return out


def word(row):
    decision = row["decision"]
    if decision == stats.VERDICT_NOISE:
        mde = row["mde"]
        if mde is not None and mde > verdicts.RESOLVE_PCT:
            return f"not resolved (MDE {report.fmt_mde(mde).rstrip(' ⚠')})"
        return "tie"
    return WORDS.get(decision, decision or "—")


def peer_kind(peer):
    return "kvmtool" if peer.startswith("kvmtool") else "QEMU"


def tally(tables):
    """{peer kind: {word: count}}, words in ORDER."""
    out = {}
    for _table, _doc, rows in tables:
        for row in rows:
            w = word(row).split(" (")[0].strip("*")
            kind = out.setdefault(peer_kind(row["peer"]), {})
            kind[w] = kind.get(w, 0) + 1
    return {k: {w: v[w] for w in ORDER if w in v} for k, v in out.items()}


def table_md(table, doc, rows):
    meta = doc["meta"]
    run = table["run"]
    out = [f"### {table['title']}", "",
           f"Run [{run}](docs/bench/{run}/README.md): build {meta['skiff']}, "
           f"{meta['date']}, {meta['reps']} rounds of {meta['secs_per_run']} "
           "s runs.", "",
           "| metric | skiff | peer | skiff median | peer median | ratio "
           "| 95% CI | verdict | n (skiff/peer) |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        res = r["result"]
        label = LABELS.get((r["workload"], r["metric"]),
                           f"{r['workload']} {r['metric']}")
        if label.startswith(("p", "KVM", "VMM", "delivered", "guest")):
            label = f"{r['workload']}: {label}"
        ci = f"{res['ci_lo']:.2f}–{res['ci_hi']:.2f}"
        out.append(
            f"| {label}{r['obs']} | {r['skiff']} | {r['peer']} "
            f"| {report.fmt(stats.median(r['cand']))} "
            f"| {report.fmt(stats.median(r['base']))} "
            f"| {res['ratio']:.2f}× | {ci} | {word(r)} "
            f"| {len(r['cand'])}/{len(r['base'])} |")
    kvmtool = meta.get("kvmtool", "none")
    with_kvmtool = any(p.startswith("kvmtool") for _s, p in table["pairs"])
    if with_kvmtool:
        out += ["", KVMTOOL_NOTE]
    # One line: the page has 200 (issue 35.1).
    steps = [f"git checkout {meta['skiff']}", "make all"]
    if with_kvmtool:
        steps.append(f"bench/build-kvmtool.sh <kvmtool {kvmtool[:7]} clone>")
    steps.append(meta["command"])
    out += ["", "Reproduce (the testbed's L0 is needed; `make bench` "
            f"documents it): `{' && '.join(steps)}`", ""]
    return out


def setup_md(index, tables):
    first = tables[0][1]["meta"]
    out = ["## Setup", "",
           "```",
           f"testbed   {first['testbed']}",
           f"host      {first['machine']}",
           f"QEMU      {first['qemu']}",
           f"kvmtool   {first['kvmtool']} (bench/build-kvmtool.sh)",
           "skiff     " + ", ".join(
               f"{t['run']}: {d['meta']['skiff']}" for t, d, _r in tables),
           "```", "",
           "Every configuration's command line, as L1 ran it (from each "
           "run's `results.json`):", "", "```"]
    seen = {}
    for table, doc, _rows in tables:
        for pair in table["pairs"]:
            for config in pair:
                line = doc["meta"].get(f"cmdline {config}", "?")
                if seen.get(config) == line:
                    continue
                if config in seen:
                    config = f"{config} ({table['run']})"
                seen[config] = line
                out.append(f"{config}: {line}")
    out += ["```", "", "Known asymmetries between the peers:", ""]
    out += [f"- {a}" for a in index["asymmetries"]]
    return out + [""]


def runs_md(repo):
    runs = sorted(d for d in os.listdir(os.path.join(repo, "docs", "bench"))
                  if os.path.isdir(os.path.join(repo, "docs", "bench", d)))
    links = [f"[{r}](docs/bench/{r}/README.md)" for r in reversed(runs)]
    return ["Every run, newest first, with its notes: " + ", ".join(links)
            + "."]


def render(repo, iters=10000, seed=1):
    index = load_index(repo)
    tables = comparisons(repo, index, iters, seed)
    counts = tally(tables)
    out = ["# Benchmarks", "",
           "<!-- Generated by `make benchmarks-md` (bench/benchmarks_md.py) "
           "from docs/bench/HEADLINE.json and the runs it names. Do not edit: "
           "tests/bench/test_headline.py fails when this file is not what "
           "the command writes. -->", "",
           "skiff against QEMU 7.2 tuned as its users run it and against "
           "kvmtool, each table from one run in the nested testbed (see "
           "Setup: absolute numbers are not hardware's). A **win** or "
           "**loss** needs the Mann–Whitney test (Benjamini–Hochberg over "
           "every comparison on this page) and the 95% bootstrap CI of the "
           "ratio of medians to agree; *tie*: neither, with a minimal "
           "detectable effect (MDE) of at most "
           f"{verdicts.RESOLVE_PCT:g}%; *not resolved*: neither, with a "
           "larger MDE. Ratio: skiff's median over the peer's; whether "
           "higher is better depends on the metric. n: runs. How it is "
           "measured: [docs/bench/METHODS.md](docs/bench/METHODS.md).", "",
           "## What skiff wins, ties and loses", ""]
    for kind, by_word in counts.items():
        total = sum(by_word.values())
        parts = ", ".join(f"{n} {w}" for w, n in by_word.items())
        out.append(f"- Against {kind}: {parts} (of {total} comparisons).")
    out.append("")
    for table, doc, rows in tables:
        out += table_md(table, doc, rows)
    out += setup_md(index, tables)
    out += ["## More", "",
            "- Methods (configurations, workloads, statistics, noise): "
            "[docs/bench/METHODS.md](docs/bench/METHODS.md).",
            "- Superseded and reverted experiments, the harness's own "
            "mistakes: [docs/bench/ARCHIVE.md](docs/bench/ARCHIVE.md).",
            "- " + runs_md(repo)[0], ""]
    return "\n".join(out)
