#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Append one run's sample to a results JSON, parsing the raw tool outputs.

usage: bench/collect.py RESULTS.json --config C --workload W --rep K
         [--iperf3 FILE] [--sockperf FILE] [--ping FILE] [--fio FILE]
         [--vsock FILE] [--balloon FILE] [--cpu FILE] [--dirty FILE]
         [--console FILE]...
         [--metric KEY=VALUE]... [--duration SECONDS] [--meta KEY=VALUE]...

--console files are scanned for `SKIFF-METRIC: key=value` markers. The file
is created when missing; --meta keys are added to meta unless already set. If a tool output does not parse, the sample is still recorded, with
an "error" field and no metrics, and the exit status is 3: a failed run
stays visible in the report instead of silently shrinking n.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from skiffbench import cpujob, dirtyjob, metrics, parsers  # noqa: E402


def _kv(text):
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def sample_metrics(args):
    out = {}
    readers = (("iperf3", parsers.parse_iperf3_json, metrics.from_iperf3),
               ("sockperf", parsers.parse_sockperf, metrics.from_sockperf),
               ("ping", parsers.parse_ping, metrics.from_ping),
               ("fio", parsers.parse_fio_json, metrics.from_fio),
               ("vsock", parsers.parse_vsock_io, metrics.from_vsock),
               ("balloon", parsers.parse_balloon, metrics.from_balloon),
               ("cpu", cpujob.parse_cpu_job, cpujob.from_cpu_job),
               ("dirty", dirtyjob.parse_dirty, dirtyjob.from_dirty))
    for attr, parse, to_metrics in readers:
        path = getattr(args, attr)
        if path:
            with open(path, errors="replace") as f:
                out.update(to_metrics(parse(f.read())))
    for path in args.console:
        with open(path, errors="replace") as f:
            out.update(parsers.parse_metrics(f.read()))
    for key, value in args.metric:
        out[key] = parsers.number_or_text(value)
    return metrics.derive(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results")
    ap.add_argument("--config", required=True)
    ap.add_argument("--workload", required=True)
    ap.add_argument("--rep", type=int, required=True)
    ap.add_argument("--iperf3")
    ap.add_argument("--sockperf")
    ap.add_argument("--ping")
    ap.add_argument("--fio")
    ap.add_argument("--vsock")
    ap.add_argument("--balloon")
    ap.add_argument("--cpu")
    ap.add_argument("--dirty", help="migrate-busy's load (dirty.txt)")
    ap.add_argument("--console", action="append", default=[])
    ap.add_argument("--metric", action="append", type=_kv, default=[])
    ap.add_argument("--meta", action="append", type=_kv, default=[])
    ap.add_argument("--duration", type=float)
    ap.add_argument("--raw-dir", help="the run's raw directory, relative to "
                    "the results (rawcheck.py: an extra round's is raw/rR-mK)")
    args = ap.parse_args(argv)

    sample = {"config": args.config, "workload": args.workload,
              "rep": args.rep, "metrics": {}}
    status = 0
    try:
        sample["metrics"] = sample_metrics(args)
    except (OSError, ValueError, KeyError) as e:
        sample["error"] = str(e)
        print(f"bench/collect.py: {args.config} {args.workload} rep "
              f"{args.rep}: {e}", file=sys.stderr)
        status = 3
    if args.duration is not None:
        sample["duration_s"] = args.duration
    raw = {k: getattr(args, k) for k in ("iperf3", "sockperf", "ping", "fio",
                                         "vsock", "balloon", "cpu",
                                         "dirty")
           if getattr(args, k)}
    if args.console:
        raw["console"] = args.console
    if raw:
        sample["raw"] = raw
    if args.raw_dir:
        sample["raw_dir"] = args.raw_dir

    if os.path.exists(args.results):
        with open(args.results) as f:
            doc = json.load(f)
    else:
        doc = {"schema": 1, "meta": {}, "samples": []}
    for key, value in args.meta:
        doc["meta"].setdefault(key, parsers.number_or_text(value))
    doc["samples"].append(sample)
    # Write-then-rename: an interrupted bench never leaves half a JSON file.
    tmp = args.results + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, args.results)
    return status


if __name__ == "__main__":
    sys.exit(main())
