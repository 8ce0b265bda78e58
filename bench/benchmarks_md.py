#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Write BENCHMARKS.md from the committed runs docs/bench/HEADLINE.json
names (bench/skiffbench/headline.py).

usage: bench/benchmarks_md.py [--repo DIR] [--out FILE]   (make benchmarks-md)
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from skiffbench import headline  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", default=os.path.dirname(HERE))
    ap.add_argument("--out", help="default: REPO/BENCHMARKS.md; - for stdout")
    args = ap.parse_args(argv)
    try:
        text = headline.render(args.repo)
    except (OSError, ValueError, KeyError) as e:
        print(f"benchmarks_md.py: {e}", file=sys.stderr)
        return 2
    if args.out == "-":
        sys.stdout.write(text)
        return 0
    out = args.out or os.path.join(args.repo, "BENCHMARKS.md")
    with open(out, "w") as f:
        f.write(text)
    print(f"benchmarks_md.py: wrote {out} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
