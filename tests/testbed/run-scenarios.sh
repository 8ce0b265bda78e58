#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Run testbed scenarios one after another (one L0 at a time: 2 cores).
#   tests/testbed/run-scenarios.sh [NAME...]
# Without names: every scenarios/*.sh that does not set SLOW=1. Prints each
# scenario's PASS/FAIL (run-one.sh's output) and a final line
# "testbed: N passed, N failed"; exits non-zero if any failed.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
	for f in "$TB_DIR"/scenarios/*.sh; do
		n=$(basename "$f" .sh)
		eval "$(tb_scenario_settings "$n")"
		[ "$S_SLOW" = 1 ] || names+=("$n")
	done
fi

# Once here rather than in each run-one.sh (which then finds them current).
"$TB_DIR/build-images.sh"

# A failed scenario is run once more, and the retry is reported; it fails
# only if it fails twice. Two kinds of one-off failures are known: L1 (a
# Linux on QEMU's software CPU, itself running KVM) has been seen to freeze
# whole, even its timers, and L2 has been seen to triple-fault, rarely and
# at random points, under disk or network load — a bug not yet found (see
# the issue notes). The retry keeps the first from failing a run and keeps
# the second visible without making every run a coin toss.
passed=0 failed=0 retried=""
for n in "${names[@]}"; do
	rc=0
	"$TB_DIR/run-one.sh" "$n" || rc=$?
	if [ "$rc" -ne 0 ]; then
		# The retry writes the log again: keep the failure's.
		cp "$TB_CACHE/logs/$n.log" "$TB_CACHE/logs/$n.failed.log" 2>/dev/null || true
		tb_say "$n failed once (its log kept as ${TB_CACHE#"$TB_ROOT"/}/logs/$n.failed.log); running it once more"
		retried="$retried $n"
		rc=0
		"$TB_DIR/run-one.sh" "$n" || rc=$?
	fi
	if [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
done
[ -z "$retried" ] || echo "testbed: retried after a failure:$retried"
echo "testbed: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
