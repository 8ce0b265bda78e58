#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turn a benchmark results JSON into DIR/report.md, DIR/<workload>.png
(gnuplot) and a byte-for-byte copy DIR/results.json.

usage: bench/report.py RESULTS.json --out DIR [--baseline CONFIG]
The results schema is described in bench/skiffbench/report.py.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from skiffbench import report  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", help="results JSON")
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--baseline", help="config to compare against "
                    "(default: meta.baseline in the results)")
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--iters", type=int, default=10000,
                    help="bootstrap resamples")
    ap.add_argument("--seed", type=int, default=1, help="bootstrap seed")
    ap.add_argument("--no-plots", action="store_true")
    args = ap.parse_args(argv)
    try:
        doc = report.load_results(args.results)
        report.build_report(doc, args.out, baseline=args.baseline,
                            conf=args.confidence, iters=args.iters,
                            seed=args.seed, plots=not args.no_plots,
                            raw_path=args.results)
    except (OSError, ValueError) as e:
        print(f"bench/report.py: {e}", file=sys.stderr)
        return 2
    print(f"bench/report.py: wrote {os.path.join(args.out, 'report.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
