#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Events per 100 trials with a 95% Wilson score interval.

usage: tests/testbed/wilson.py K N
Prints "K in N: P per 100 (95% CI LO-HI)" (one decimal each); exit 2 with
a one-line error unless 0 <= K <= N and N > 0. The Wilson interval stays
inside 0..100 and is honest for the small counts the testbed gives (0
freezes in 30 lives is not a rate of 0); tests/testbed/freeze-count.sh
uses it for issue 39.1."""
import math
import sys

Z = 1.959963984540054  # the normal distribution's 97.5th percentile


def wilson(k, n, z=Z):
    """(low, high) of the 95% interval for a proportion k/n."""
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, mid - half), min(1.0, mid + half)


def main(argv):
    try:
        k, n = int(argv[1]), int(argv[2])
        if len(argv) != 3 or n <= 0 or not 0 <= k <= n:
            raise ValueError
    except (IndexError, ValueError):
        print("usage: wilson.py K N (whole numbers, 0 <= K <= N, N > 0)", file=sys.stderr)
        return 2
    lo, hi = wilson(k, n)
    print(f"{k} in {n}: {100 * k / n:.1f} per 100 (95% CI {100 * lo:.1f}-{100 * hi:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
