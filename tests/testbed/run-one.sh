#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
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
TB_L0_FILE_PATHS=""
# shellcheck disable=SC2086 # a list of paths
trap 'rm -f "$INITRD" "$INITRD.2" ${DISK:+"$DISK"} $TB_L0_FILE_PATHS; [ -z "${TAIL_PID:-}" ] || kill "$TAIL_PID" 2>/dev/null || true' EXIT

[ -x "$TB_SKIFF" ] || tb_say "warning: no $TB_SKIFF; scenarios that run skiff will fail"
tb_build_run_initrd "$NAME" "$INITRD"

: >"$LOG"
if [ "${TB_VERBOSE:-0}" = 1 ]; then
	tail -n +1 -f "$LOG" &
	TAIL_PID=$!
fi

# judge TEXT RC NEED_PASS: prints why the console TEXT (\r removed) of one
# L0 run that exited RC failed, or nothing. A FAIL line always fails it;
# NEED_PASS=1 also wants the PASS line (a phase ended by a kill has none).
judge() {
	local text=$1 rc=$2 need_pass=$3 failline why="" stuck
	if failline=$(grep -m1 'SKIFF-RESULT: FAIL' <<<"$text"); then
		why=${failline#*SKIFF-RESULT: FAIL }
		why=${why#"$NAME "}
	elif [ "$need_pass" = 1 ] && ! grep -qF "SKIFF-RESULT: PASS $NAME" <<<"$text"; then
		if stuck=$(grep -m1 '^testbed: L1 stuck' <<<"$text"); then
			why="${stuck#testbed: }; L0 stopped early"
			[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || why="${stuck#testbed: }; killed at ${S_TIMEOUT}s"
		elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
			why="no result within ${S_TIMEOUT}s (killed)"
		elif ! grep -q 'SKIFF-L1: ready' <<<"$text"; then
			why="L1 never became ready (qemu exit $rc)"
		else
			why="no result line (qemu exit $rc)"
		fi
	fi
	printf '%s' "$why"
}

# One trial: phase 1, the scenario's l1 (or an L0 killed on L0_KILL_AFTER),
# then with L1_PHASE2 phase 2: a fresh L0 with the same disk runs that
# function, phase 1's console in /testbed/phase1.log. Appends the consoles
# to LOG and the metrics to TMETRICS; sets TWHY (empty if it passed).
PLOG=$TB_LOGS/$NAME.phase.log
TMETRICS=$TB_LOGS/$NAME.trial.metrics
run_trial() {
	local t=$1 l0args=$S_L0_ARGS append rc=0 text work
	TWHY="" DISK=""
	: >"$TMETRICS"
	if [ -n "$S_DISK_MB" ]; then
		DISK=$(mktemp "$TB_CACHE/run.$NAME.disk.XXXXXX")
		truncate -s "${S_DISK_MB}M" "$DISK"
		l0args="$l0args -drive file=$DISK,if=virtio,format=raw,cache=writeback"
	fi
	# The scenario's own files for L0 (NVMe images, a memory backend).
	if [ -n "$S_L0_FILES" ]; then
		tb_l0_files "$NAME" "$S_L0_FILES" "$l0args"
		l0args=$TB_L0_ARGS
	fi
	append="${S_L1_APPEND:+$S_L1_APPEND }testbed.trial=$t"
	[ "$S_TRIALS" = 1 ] || echo "=== testbed: $NAME trial $t phase 1 ===" >>"$LOG"
	tb_boot_l0 "$INITRD" "$PLOG" "$S_TIMEOUT" "$l0args" "$append" \
		"$S_KILL_AFTER" "$S_KILL_DELAY_MS" || rc=$?
	cat "$PLOG" >>"$LOG"
	text=$(tr -d '\r' <"$PLOG")
	if [ -z "$S_KILL_AFTER" ]; then
		TWHY=$(judge "$text" "$rc" 1)
	else
		TWHY=$(judge "$text" "$rc" 0)
		if [ -z "$TWHY" ] && [ "$TB_L0_KILLED" != 1 ]; then
			TWHY="phase 1: L0 ended (qemu exit $rc) before a line matched /$S_KILL_AFTER/"
		fi
		if [ "$TB_L0_KILLED" = 1 ]; then
			echo "l0_kill_delay_ms=$TB_L0_KILL_MS" >>"$TMETRICS"
			echo "=== testbed: L0 killed $TB_L0_KILL_MS ms after /$S_KILL_AFTER/ ===" >>"$LOG"
		fi
	fi
	grep -o 'SKIFF-METRIC: [^ ]*=[^ ]*' <<<"$text" | sed 's/^SKIFF-METRIC: //' >>"$TMETRICS" || true
	if [ -n "$S_PHASE2" ] && [ -z "$TWHY" ]; then
		work=$(mktemp -d "$TB_CACHE/run.XXXXXX")
		mkdir -p "$work/testbed"
		cp "$PLOG" "$work/testbed/phase1.log"
		tb_wrapper "$NAME" "$S_PHASE2" >"$work/scenario-l1.sh"
		chmod 755 "$work/scenario-l1.sh"
		tb_concat_initrd "$INITRD.2" "$INITRD" "$work"
		rm -rf "$work"
		echo "=== testbed: $NAME trial $t phase 2 ($S_PHASE2) ===" >>"$LOG"
		rc=0
		tb_boot_l0 "$INITRD.2" "$PLOG" "$S_TIMEOUT" "$l0args" "$append" || rc=$?
		rm -f "$INITRD.2"
		cat "$PLOG" >>"$LOG"
		text=$(tr -d '\r' <"$PLOG")
		TWHY=$(judge "$text" "$rc" 1)
		[ -z "$TWHY" ] || TWHY="phase 2: $TWHY"
		grep -o 'SKIFF-METRIC: [^ ]*=[^ ]*' <<<"$text" | sed 's/^SKIFF-METRIC: //' >>"$TMETRICS" || true
	fi
	rm -f "$PLOG"
	[ -z "$DISK" ] || rm -f "$DISK"
	DISK=""
	# shellcheck disable=SC2086 # a list of paths
	[ -z "$TB_L0_FILE_PATHS" ] || rm -f $TB_L0_FILE_PATHS
	TB_L0_FILE_PATHS=""
}

start=$(date +%s)
: >"$METRICS"
why="" first_why="" nfailed=0
for ((t = 1; t <= S_TRIALS; t++)); do
	run_trial "$t"
	if [ "$S_TRIALS" = 1 ]; then
		cat "$TMETRICS" >>"$METRICS"
	else
		# Per trial, keyed tN.; a failed trial does not stop the others.
		sed "s/^/t$t./" "$TMETRICS" >>"$METRICS"
		echo "  trial $t/$S_TRIALS: ${TWHY:-ok}"
	fi
	if [ -n "$TWHY" ]; then
		nfailed=$((nfailed + 1))
		[ -n "$first_why" ] || first_why="trial $t: $TWHY"
		why=$TWHY
	fi
done
[ "$nfailed" = 0 ] || [ "$S_TRIALS" = 1 ] || why="$nfailed of $S_TRIALS trials failed; $first_why"
rm -f "$TMETRICS"
secs=$(($(date +%s) - start))
if [ -n "${TAIL_PID:-}" ]; then
	sleep 0.2
	kill "$TAIL_PID" 2>/dev/null || true
	TAIL_PID=
fi

# Serial consoles end lines with \r\n.
clean=$(tr -d '\r' <"$LOG")
l1_up=$(sed -n 's/.*SKIFF-L1: ready uptime=\([0-9.]*\).*/\1/p' <<<"$clean" | head -n1)
[ -z "$l1_up" ] || echo "l1_uptime_at_ready_s=$l1_up" >>"$METRICS"
if [ "$S_TRIALS" != 1 ]; then
	# Totals over the trials of each integer metric.
	awk -F= '{ k = $1; sub(/^t[0-9]+\./, "", k) }
		k != $1 && $2 ~ /^[0-9]+$/ { if (!(k in s)) o[n++] = k; s[k] += $2 }
		END { for (i = 0; i < n; i++) print "sum." o[i] "=" s[o[i]] }' "$METRICS" >"$METRICS.sum"
	cat "$METRICS.sum" >>"$METRICS"
	rm -f "$METRICS.sum"
fi

if [ -z "$why" ]; then
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
# L1's console up to where L0's monitor dumps begin (they are appended at
# the end and would fill the tail): what L1 and L2 said last.
echo "--- last 40 console lines of ${LOG#"$TB_ROOT"/} (before L0's monitor dumps) ---"
# Without L0's harmless warnings about CPU features TCG lacks.
grep -v "TCG doesn't support requested feature" <<<"$clean" |
	sed -n '/^QEMU [0-9.]* monitor - type/q;/^=== testbed: L[01]/q;p' | tail -n 40
# What the stall recorders saw (guest/lib.sh's watcher, tb_l0_dump), which
# the tail may have cut: the VMM's threads, then each L1 CPU's RIP, flags
# and halt state and its LAPIC timer and pending interrupts.
rec=$(grep -E '^l2-watch: (L2 silent|task|kvm)|=== testbed: L[01]|^testbed: L1 stuck|RIP=|^(Timer|LVTT|ISR|IRR)|^VM status' <<<"$clean" |
	head -n 80)
[ -z "$rec" ] || printf -- '--- stall recorders ---\n%s\n' "$rec"
# A full disk stops L0's VM (and fails writes in L1): say how full it is.
echo "--- free space where the testbed writes: $(df -h --output=avail,pcent "$TB_CACHE" 2>/dev/null | tail -n1)"
echo "---"
exit 1
