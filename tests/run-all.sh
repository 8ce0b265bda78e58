#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `make check` and `make test`: unit tests, the same under ASan+UBSan, the
# benchmark harness's own tests, the CLI and API tests, the fuzz targets
# briefly on their corpora (clang needed: `make deps-fuzz`), then, unless
# SKIFF_SKIP_TESTBED=1 (`make check`), the testbed scenarios. Installs
# nothing. Each part prints its own closing line; the last line sums them.
# Exit status non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
total_pass=0 total_fail=0 status=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run_part() { # NAME COMMAND...: runs a part, adds its "N passed, N failed"
	local name=$1 out rc line
	shift
	echo "=== $name"
	# tee to a file, not /dev/stderr: reopening that truncates a log file.
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	out=$(cat "$log")
	line=$(grep -E '^[a-z-]*:? ?[0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -1)
	local p f
	p=$(sed -E 's/^[^0-9]*([0-9]+) passed.*/\1/' <<<"$line")
	f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
	total_pass=$((total_pass + ${p:-0}))
	total_fail=$((total_fail + ${f:-0}))
	if [ "$rc" -ne 0 ]; then
		status=1
		[ "${f:-0}" -eq 0 ] && total_fail=$((total_fail + 1))
	fi
}

run_part unit make --no-print-directory unit
run_part unit-asan make --no-print-directory unit-asan
run_part bench-tests tests/bench/run.sh
run_part host-cli tests/cli/run.sh
run_part api tests/api/run.sh
if [ "${SKIFF_SKIP_FUZZ:-0}" != 1 ]; then
	run_part fuzz make --no-print-directory fuzz-ci
fi
if [ "${SKIFF_SKIP_TESTBED:-0}" != 1 ]; then
	run_part testbed tests/testbed/run-scenarios.sh
fi
echo "all: $total_pass passed, $total_fail failed"
exit $status
