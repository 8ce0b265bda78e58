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

# L1 (a Linux under QEMU's software CPU, itself running KVM) has been seen
# to freeze whole, so that even timers inside it stop; the scenario then
# ends by its time bound with no result. Such a run says nothing about
# skiff: it is run once more, and the retry is reported. A scenario that
# fails with a result, or hangs twice, fails.
passed=0 failed=0 retried=""
for n in "${names[@]}"; do
	out=$(mktemp)
	rc=0
	"$TB_DIR/run-one.sh" "$n" 2>&1 | tee "$out" || rc=$?
	if [ "$rc" -ne 0 ] && grep -q "^FAIL $n: no result within" "$out"; then
		tb_say "$n: no result (frozen testbed?); running it once more"
		retried="$retried $n"
		rc=0
		"$TB_DIR/run-one.sh" "$n" || rc=$?
	fi
	rm -f "$out"
	if [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
done
[ -z "$retried" ] || echo "testbed: retried after a run without result:$retried"
echo "testbed: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
