#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Run one testbed scenario: tests/testbed/run-one.sh NAME
#
# Builds the base images if needed, packs this run's overlay (skiff, the
# scenario's scripts, the L2 initrd), boots L0 with the console saved to
# .cache/testbed/logs/NAME.log, kills it after the scenario's TIMEOUT, then
# judges the log: PASS needs "SKIFF-RESULT: PASS NAME", no "SKIFF-RESULT:
# FAIL" and every line of the scenario's EXPECT. Prints "PASS NAME (Ns)" and
# the metrics, or "FAIL NAME: why" and the console's last 40 lines; exits 0
# on PASS, 1 on FAIL. Metrics also go to .cache/testbed/logs/NAME.metrics.
# TB_VERBOSE=1 also streams the console to stdout while it runs.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ $# -eq 1 ] || tb_die "usage: $0 SCENARIO"
NAME=$1
eval "$(tb_scenario_settings "$NAME")"

"$TB_DIR/build-images.sh"
mkdir -p "$TB_LOGS"
LOG=$TB_LOGS/$NAME.log
METRICS=$TB_LOGS/$NAME.metrics
INITRD=$(mktemp "$TB_CACHE/run.$NAME.XXXXXX")
trap 'rm -f "$INITRD"; [ -z "${TAIL_PID:-}" ] || kill "$TAIL_PID" 2>/dev/null || true' EXIT

[ -x "$TB_SKIFF" ] || tb_say "warning: no $TB_SKIFF; scenarios that run skiff will fail"
tb_build_run_initrd "$NAME" "$INITRD"

: >"$LOG"
if [ "${TB_VERBOSE:-0}" = 1 ]; then
	tail -n +1 -f "$LOG" &
	TAIL_PID=$!
fi
start=$(date +%s)
rc=0
tb_boot_l0 "$INITRD" "$LOG" "$S_TIMEOUT" "$S_L0_ARGS" "$S_L1_APPEND" || rc=$?
secs=$(($(date +%s) - start))
if [ -n "${TAIL_PID:-}" ]; then
	sleep 0.2
	kill "$TAIL_PID" 2>/dev/null || true
	TAIL_PID=
fi

# Serial consoles end lines with \r\n.
clean=$(tr -d '\r' <"$LOG")
grep -o 'SKIFF-METRIC: [^ ]*=[^ ]*' <<<"$clean" | sed 's/^SKIFF-METRIC: //' >"$METRICS" || true
l1_up=$(sed -n 's/.*SKIFF-L1: ready uptime=\([0-9.]*\).*/\1/p' <<<"$clean" | head -n1)
[ -z "$l1_up" ] || echo "l1_uptime_at_ready_s=$l1_up" >>"$METRICS"

why=""
if failline=$(grep -m1 'SKIFF-RESULT: FAIL' <<<"$clean"); then
	why=${failline#*SKIFF-RESULT: FAIL }
	why=${why#"$NAME "}
elif ! grep -qF "SKIFF-RESULT: PASS $NAME" <<<"$clean"; then
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		why="no result within ${S_TIMEOUT}s (killed)"
	elif [ -z "$l1_up" ]; then
		why="L1 never became ready (qemu exit $rc)"
	else
		why="no result line (qemu exit $rc)"
	fi
else
	while IFS= read -r want; do
		[ -n "$want" ] || continue
		if ! grep -qF -- "$want" <<<"$clean"; then
			why="expected marker missing: $want"
			break
		fi
	done <<<"$S_EXPECT"
fi

if [ -z "$why" ]; then
	echo "PASS $NAME (${secs}s)"
	sed 's/^/  /' "$METRICS"
	exit 0
fi
echo "FAIL $NAME: $why (${secs}s)"
echo "--- last 40 lines of ${LOG#"$TB_ROOT"/} ---"
# Without L0's harmless warnings about CPU features TCG lacks.
grep -v "TCG doesn't support requested feature" <<<"$clean" | tail -n 40
echo "---"
exit 1
