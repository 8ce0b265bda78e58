#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Unit tests of the benchmark harness (bench/skiffbench): statistics,
# parsers, schedule, report. Python standard library only; gnuplot is
# optional (the plot test is skipped without it).
# Last line: "bench: N passed, N failed"; exit status non-zero on failure.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
export PYTHONDONTWRITEBYTECODE=1
exec python3 "$here/runner.py"
