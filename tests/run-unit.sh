#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Runs the cmocka unit-test binaries given as arguments and prints one
# closing line with the totals. Exit status: non-zero if any test failed.
# Each binary runs under a bound (SKIFF_UNIT_TIMEOUT_S, default 300 s: the
# slowest, under ASan, takes well under a minute): a hang fails as
# "test_X: timed out after N s".
set -uo pipefail
# shellcheck source=tests/timeout.sh
. "$(dirname "$0")/timeout.sh"
secs=${SKIFF_UNIT_TIMEOUT_S:-300}
passed=0 failed=0 status=0
for t in "$@"; do
	out=$(bounded "${t##*/}" "$secs" "$t" 2>&1)
	rc=$?
	echo "$out"
	# A binary may run several groups: each prints its own totals.
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' <<<"$out" | awk '{ s += $1 } END { if (NR) print s }')
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' <<<"$out" | awk '{ s += $1 } END { if (NR) print s }')
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	if [ "$rc" -ne 0 ]; then
		status=1
		# A crash prints no FAILED line: count the binary as one failure.
		[ -z "$f" ] && failed=$((failed + 1))
	fi
done
echo "unit: $passed passed, $failed failed"
exit $status
