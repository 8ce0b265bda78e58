#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The headline table of a benchmark: one row per workload and key metric,
one column per configuration, the baseline first.

  python3 bench/skiffbench/summary.py RESULTS.json [--baseline C] [--out F]
      [--plot DIR]   also DIR/headline.png: one panel per row of the table

A cell is the median over the runs, then, for a candidate, the ratio to
the baseline's median and the verdict of stats.verdict (the same as
report.md's): "+" faster (better), "−" slower (worse), "≈" within noise,
"?" insufficient data. report.md has every metric, the CI and p-values;
this table is each run's summary.md and what the end of bench/run.sh shows.
Verdicts are report.md's: Benjamini-Hochberg over every comparison of the
report, rank test and CI agreeing. Below the table: the headline
comparisons whose n and noise cannot resolve a 15% difference.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from skiffbench import metrics, plot, report, stats, verdicts  # noqa: E402

# (workload, metric, label). A workload's rows appear only when measured.
HEADLINE = (
    ("boot", "boot_init_ms", "start → L2 init, ms"),
    ("boot", "boot_first_exit_ms", "start → first KVM exit, ms"),
    ("boot", "boot_pre_kernel_ms", "start → guest clock starts, ms"),
    ("boot", "kvm_exits", "KVM exits to init"),
    ("boot", "cpu_s_total", "VMM CPU to init, s"),
    ("boot", "mem_overhead_kib", "VMM memory beyond guest RAM, KiB"),
    ("boot", "mem_anon_overhead_kib", "  of it anonymous (heap, buffers), KiB"),
    ("tcp-g2h", "throughput_gbps", "TCP guest→host, Gbit/s"),
    ("tcp-g2h", "exits_per_mb", "  KVM exits per MB"),
    ("tcp-g2h", "cpu_s_per_gb", "  VMM CPU s per GB"),
    ("tcp-h2g", "throughput_gbps", "TCP host→guest, Gbit/s"),
    ("tcp-h2g", "exits_per_mb", "  KVM exits per MB"),
    ("tcp-h2g", "cpu_s_per_gb", "  VMM CPU s per GB"),
    ("udp-g2h", "udp_pps", "UDP 64 B guest→host, packets/s"),
    ("udp-g2h", "udp_loss_pct", "  loss, %"),
    ("udp-g2h", "exits_per_pkt", "  KVM exits per packet"),
    ("udp-g2h", "cpu_s_per_mpkt", "  VMM CPU s per million packets"),
    ("rr", "latency_p50_us", "UDP request/response p50, µs one-way"),
    ("rr", "latency_p99_us", "  p99, µs"),
    ("rr", "latency_p99_9_us", "  p99.9, µs"),
    ("rr", "exits_per_trans", "  KVM exits per transaction"),
    ("rr", "cpu_s_per_mtrans", "  VMM CPU s per million transactions"),
    ("ping", "ping_avg_ms", "ping avg RTT, ms"),
    # issue 13 point 4: TCP request/response, fixed-rate small packets
    # both ways, parallel streams, what an idle VM costs
    ("tcp-rr", "latency_p50_us", "TCP request/response p50, µs one-way"),
    ("tcp-rr", "latency_p99_us", "  p99, µs"),
    ("tcp-rr", "latency_p99_9_us", "  p99.9, µs"),
    ("tcp-rr", "exits_per_trans", "  KVM exits per transaction"),
    ("udp64-g2h", "udp_loss_pct", "UDP 64 B guest→host at a fixed rate, loss %"),
    ("udp64-g2h", "udp_pps", "  delivered packets/s"),
    ("udp64-g2h", "exits_per_pkt", "  KVM exits per packet"),
    ("udp64-h2g", "udp_loss_pct", "UDP 64 B host→guest at a fixed rate, loss %"),
    ("udp64-h2g", "udp_pps", "  delivered packets/s"),
    ("udp64-h2g", "exits_per_pkt", "  KVM exits per packet"),
    ("tcp-par", "throughput_gbps", "TCP guest→host, 2 streams, Gbit/s"),
    ("tcp-par", "cpu_s_per_gb", "  VMM CPU s per GB"),
    # issue 13 point 3: fio in the guest (blk-* run only where a
    # configuration has a test disk)
    ("blk-randread-qd1", "blk_iops", "4 KiB random read QD1, IOPS"),
    ("blk-randread-qd1", "blk_clat_p50_us", "  p50, µs"),
    ("blk-randread-qd1", "blk_clat_p99_us", "  p99, µs"),
    ("blk-randread-qd1", "blk_clat_p99_9_us", "  p99.9, µs"),
    ("blk-randread-qd1", "cpu_s_per_mio", "  VMM CPU s per million I/Os"),
    ("blk-randread-qd32", "blk_iops", "4 KiB random read QD32, IOPS"),
    ("blk-randread-qd32", "blk_clat_p99_us", "  p99, µs"),
    ("blk-randread-qd32", "exits_per_io", "  KVM exits per I/O"),
    ("blk-randwrite-qd1", "blk_iops", "4 KiB random write QD1, IOPS"),
    ("blk-randwrite-qd1", "blk_clat_p99_us", "  p99, µs"),
    ("blk-randwrite-qd32", "blk_iops", "4 KiB random write QD32, IOPS"),
    ("blk-randwrite-qd32", "blk_clat_p99_us", "  p99, µs"),
    ("blk-seqread", "blk_mb_s", "1 MiB sequential read, MB/s"),
    ("blk-seqread", "cpu_s_per_gb", "  VMM CPU s per GB"),
    ("blk-seqwrite", "blk_mb_s", "1 MiB sequential write, MB/s"),
    ("blk-seqwrite", "cpu_s_per_gb", "  VMM CPU s per GB"),
    # issue 37.4: fio in L2 on the NVMe each VMM passes through (nvme-*
    # run only where a configuration has it); the I/Os behind each run's
    # latency percentiles beside them
    ("nvme-seqread", "blk_mb_s", "NVMe passthrough: 128 KiB sequential read QD32, MB/s"),
    ("nvme-seqread", "exits_per_io", "  KVM exits per I/O"),
    ("nvme-seqread", "cpu_s_per_gb", "  VMM CPU s per GB"),
    ("nvme-randread-qd1", "blk_clat_p50_us", "NVMe passthrough: 4 KiB random read QD1 p50, µs"),
    ("nvme-randread-qd1", "blk_clat_p99_us", "  p99, µs"),
    ("nvme-randread-qd1", "blk_ios", "  I/Os per run behind them"),
    ("nvme-randread-qd1", "exits_per_io", "  KVM exits per I/O"),
    ("nvme-randread-qd1", "cpu_s_per_mio", "  VMM CPU s per million I/Os"),
    ("nvme-randread-qd32", "blk_iops", "NVMe passthrough: 4 KiB random read QD32, IOPS"),
    ("nvme-randread-qd32", "exits_per_io", "  KVM exits per I/O"),
    ("nvme-randread-qd32", "cpu_s_per_mio", "  VMM CPU s per million I/Os"),
    # issue 33.6: vsock between L1 and L2, and the balloon
    ("vsock-h2g", "vsock_mb_s", "vsock host→guest, MB/s"),
    ("vsock-h2g", "cpu_s_per_gb", "  VMM CPU s per GB"),
    ("vsock-g2h", "vsock_mb_s", "vsock guest→host, MB/s"),
    ("vsock-g2h", "cpu_s_per_gb", "  VMM CPU s per GB"),
    ("vsock-rr", "vsock_rtt_p50_us", "vsock request/response p50, µs round trip"),
    ("vsock-rr", "vsock_rtt_p99_us", "  p99, µs"),
    ("vsock-rr", "cpu_s_per_mtrans", "  VMM CPU s per million transactions"),
    ("balloon", "balloon_mib_per_s", "balloon: VMM RSS recovered, MiB/s"),
    ("balloon", "balloon_rss_drop_mib", "  VMM RSS given back, MiB"),
    ("balloon", "balloon_recover_ms", "  request → RSS settled, ms"),
    # issue 38.3: the control, a CPU-bound job with no I/O
    ("cpu", "cpu_job_ms", "CPU-bound guest job (no I/O), ms"),
    ("cpu", "kvm_exits", "  KVM exits during it"),
    ("idle", "idle_cpu_pct", "idle VM: VMM CPU, % of one CPU"),
    ("idle", "idle_exits_per_s", "  KVM exits per second"),
    ("idle", "mem_overhead_kib", "  VMM memory beyond guest RAM, KiB"),
)

MARK = {stats.VERDICT_BETTER: "+", stats.VERDICT_WORSE: "−",
        stats.VERDICT_NOISE: "≈", verdicts.NEEDS_MORE: "?",
        stats.VERDICT_NODATA: "∅"}


def config_order(doc, baseline, configs):
    """Baseline first, then the order of meta.configs (the order the user
    gave) when the results have one, else the order of first appearance."""
    given = str(doc.get("meta", {}).get("configs", "")).split(",")
    ranked = [c for c in given if c in configs]
    ranked += [c for c in configs if c not in ranked]
    return [baseline] + [c for c in ranked if c != baseline]


def summary_rows(doc, baseline, iters=10000, seed=1):
    """(config order, [(label, cells)], [unresolved comparisons])."""
    data, counts, _notes, configs = report.group(doc)
    order = config_order(doc, baseline, configs)
    tables, _n = report.comparison_table(doc, baseline, iters=iters,
                                         seed=seed)
    decided = {(w, r["metric"], r["config"]): r
               for w, rows in tables.items() for r in rows}
    rows, unresolved = [], []
    for workload, name, label in HEADLINE:
        per_cfg = data.get(workload, {}).get(name)
        if not per_cfg:
            continue
        cells = []
        for config in order:
            vals = per_cfg.get(config, [])
            if not vals:
                cells.append("—")
                continue
            cell = report.fmt(stats.median(vals))
            n_runs = counts.get(workload, {}).get(config, 0)
            row = decided.get((workload, name, config))
            if config != baseline and row and row["result"]:
                res = row["result"]
                if res["ratio"] is not None:
                    mark = MARK.get(row.get("decision"), "")
                    cell += f" ({res['ratio']:.2f}× {mark})".replace(" )", ")")
                mde = row.get("mde")
                if mde is not None and mde > verdicts.RESOLVE_PCT:
                    unresolved.append(f"{label.strip()} ({workload}), "
                                      f"{config}: {report.fmt_mde(mde)}")
            if len(vals) != n_runs or n_runs < max(
                    counts.get(workload, {}).values() or [0]):
                cell += f" n={len(vals)}"
            cells.append(cell)
        rows.append((label, cells))
    return order, rows, unresolved


def summary_markdown(doc, baseline=None, iters=10000, seed=1):
    baseline = baseline or doc.get("meta", {}).get("baseline")
    order, rows, unresolved = summary_rows(doc, baseline, iters, seed)
    out = ["| metric | " + " | ".join(
        c + (" (baseline)" if c == baseline else "") for c in order) + " |",
        "|---|" + "---|" * len(order)]
    for label, cells in rows:
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    out += ["", f"Median of the runs; (ratio to {baseline} and verdict: "
            "+ better, − worse, ≈ within noise, ? needs more runs (rank "
            "test and CI disagree), ∅ insufficient data; Mann–Whitney "
            "with Benjamini–Hochberg over every comparison of report.md "
            "and the 95% bootstrap CI of the ratio of medians must agree). "
            "n= when a configuration has fewer runs than the others. Costs "
            "are per unit of work."]
    if unresolved:
        out += ["", f"Not resolving a {verdicts.RESOLVE_PCT:g}% difference "
                "with these runs (minimal detectable effect, 80% power; "
                "\"any\": too few runs for any rank test):", ""]
        out += [f"- {u}" for u in unresolved]
    return "\n".join(out) + "\n"


def headline_plot(doc, out_dir, baseline=None):
    """DIR/headline.png (gnuplot): the summary's rows as panels, runs as
    points, medians as bars. Returns (image or None, why not)."""
    baseline = baseline or doc.get("meta", {}).get("baseline")
    data, counts, _notes, configs = report.group(doc)
    order = config_order(doc, baseline, configs)
    by_metric = {}
    hint = {True: " (↑ better)", False: " (↓ better)"}
    k = 0
    for workload, name, label in HEADLINE:
        per_cfg = data.get(workload, {}).get(name)
        if not per_cfg:
            continue
        higher = metrics.direction(name, report.work_varies(doc, workload),
                                   report.offered_rate(doc, workload))
        k += 1
        # Panels sort by name: the number keeps the table's order.
        title = (f"{k:02d} {workload} {name}"
                 f"{hint.get(higher, '')}")
        by_metric[title] = per_cfg
    if not by_metric:
        return None, "no headline metrics"
    return plot.plot_workload("headline", by_metric, order, out_dir)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results")
    ap.add_argument("--baseline")
    ap.add_argument("--out")
    ap.add_argument("--plot", metavar="DIR")
    args = ap.parse_args(argv)
    try:
        doc = report.load_results(args.results)
        text = summary_markdown(doc, args.baseline)
    except (OSError, ValueError) as e:
        print(f"summary.py: {e}", file=sys.stderr)
        return 2
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if args.plot:
        image, why = headline_plot(doc, args.plot, args.baseline)
        if image is None:
            print(f"summary.py: no headline plot: {why}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
