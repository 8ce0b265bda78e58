#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Runs the libFuzzer targets built by `make fuzz-build` (tests/fuzz/README.md).
#   run.sh --secs N NAME...   each target N seconds (make fuzz SECS=N)
#   run.sh --ci NAME...       each target briefly on its committed corpus
#   run.sh --runs N --secs S NAME...  up to N executions, at most S seconds
# New inputs go to build/fuzz/corpus/NAME (the committed corpus in
# tests/fuzz/corpus/NAME is only read); crashes to build/fuzz/crashes/.
# Prints one line per target with executions and coverage, then
# "fuzz: N passed, N failed". Exit status 1 if any target crashed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2

secs=60 runs=-1 ci=0
while [ $# -gt 0 ]; do
	case $1 in
	--secs) secs=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--ci) ci=1 secs=${FUZZ_CI_SECS:-8}; shift ;;
	*) break ;;
	esac
done
if [ $# -eq 0 ]; then
	echo "usage: run.sh [--ci | --secs N] [--runs N] NAME..." >&2
	exit 2
fi

out=build/fuzz
mkdir -p "$out/crashes" "$out/logs"
pass=0 fail=0
for name in "$@"; do
	bin=$out/fuzz_$name seeds=tests/fuzz/corpus/$name work=$out/corpus/$name
	log=$out/logs/$name.log
	# CI starts from the committed corpus alone, every time.
	[ "$ci" -eq 1 ] && work=$(mktemp -d)
	mkdir -p "$work"
	# -close_fd_mask=2: the target's own stderr (skiff's capped log lines
	# about broken queues) is dropped; libFuzzer's and the sanitizers'
	# reports still come through.
	"$bin" -max_total_time="$secs" -runs="$runs" -timeout=10 -rss_limit_mb=2048 \
		-close_fd_mask=2 -print_final_stats=1 \
		-artifact_prefix="$out/crashes/$name-" "$work" "$seeds" >"$log" 2>&1
	rc=$?
	[ "$ci" -eq 1 ] && rm -rf "$work"
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -E '^#[0-9]+' "$log" | tail -1 | grep -oE 'cov: [0-9]+ ft: [0-9]+' || true)
	if [ "$rc" -eq 0 ]; then
		pass=$((pass + 1))
		echo "fuzz_$name: ok, ${execs:-?} executions, ${cov:-cov: ?} ($secs s max)"
	else
		fail=$((fail + 1))
		echo "fuzz_$name: FAILED (exit $rc), see $log"
		grep -E 'ERROR: |invariant failed|runtime error|SUMMARY' "$log" | head -5
		for c in "$out/crashes/$name-"*; do [ -e "$c" ] && echo "$c"; done
	fi
done
echo "fuzz: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
