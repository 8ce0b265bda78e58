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

passed=0 failed=0
for n in "${names[@]}"; do
	if "$TB_DIR/run-one.sh" "$n"; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
done
echo "testbed: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
