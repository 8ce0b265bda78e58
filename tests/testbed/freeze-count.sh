#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR
# How often the testbed itself fails (issue 39.1): N bare L1 boots, each
# with one L2 life (boot, ping, 16 MiB each way checked by sha256,
# poweroff: the e1000-quick scenario, or --scenario NAME), under the L0
# QEMU given (--qemu PATH, else qemu-system-x86_64).
#   tests/testbed/freeze-count.sh N [--qemu PATH] [--scenario NAME]
# TB_L0_ACCEL, TB_L0_CPU, TB_L0_SMP (lib.sh) try issue 39.3's levers; a
# lever's lives are counted apart (it is written beside the version).
# Each life is run by run-one.sh and its outcome classified by
# classify-failure.py: ok, a testbed signature (l1-stuck, l1-never-ready,
# l1-irq-after-vmrun, l2-double-fault) or skiff's. One line per life is
# appended to .cache/testbed/freeze-count.tsv (date, L0's QEMU version,
# scenario, outcome, signature, seconds), so counts add up across
# sessions; a failed life's log is kept as logs/freeze-count-DATE.log
# (with L0's monitor dump, where L1 froze). Last, over every line of that file with
# this QEMU and scenario: testbed failures per 100 lives with a 95% Wilson
# interval (wilson.py), and the other failures. Exit 0 once it has run.
# It runs L0 N times (minutes each): for the lead, not for CI. TB_RUN_ONE
# replaces run-one.sh, as for run-scenarios.sh (its tests use a fake).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() { tb_die "usage: $0 N [--qemu PATH] [--scenario NAME]"; }
[ $# -ge 1 ] || usage
N=$1
shift
[[ "$N" =~ ^[1-9][0-9]*$ ]] || usage
life=e1000-quick
while [ $# -gt 0 ]; do
	case "$1" in
	--qemu) [ $# -ge 2 ] || usage; export TB_QEMU=$2; shift 2 ;;
	--scenario) [ $# -ge 2 ] || usage; life=$2; shift 2 ;;
	*) usage ;;
	esac
done
command -v "${TB_QEMU:-qemu-system-x86_64}" >/dev/null ||
	tb_die "no QEMU ${TB_QEMU:-qemu-system-x86_64}"
qver=$("${TB_QEMU:-qemu-system-x86_64}" --version | head -n1 | sed 's/^QEMU emulator version //')
# A lever of issue 39.3 (lib.sh's TB_L0_ACCEL, TB_L0_CPU, TB_L0_SMP) set
# away from its default is counted apart: it joins the version.
for lever in "accel=$TB_L0_ACCEL:tcg" "cpu=$TB_L0_CPU:EPYC,+svm" "smp=$TB_L0_SMP:2"; do
	[ "${lever%:*}" = "${lever%%=*}=${lever##*:}" ] || qver="$qver ${lever%:*}"
done
RESULTS=$TB_CACHE/freeze-count.tsv
mkdir -p "$TB_LOGS"
out=$(mktemp)
trap 'rm -f "$out"' EXIT

for ((i = 1; i <= N; i++)); do
	t0=$SECONDS rc=0
	"${TB_RUN_ONE:-$TB_DIR/run-one.sh}" "$life" >"$out" 2>&1 || rc=$?
	secs=$((SECONDS - t0))
	outcome=ok sig=""
	if [ "$rc" -ne 0 ]; then
		sig=$(python3 "$TB_DIR/classify-failure.py" "$TB_LOGS/$life.log" \
			"$(grep -m1 "^FAIL $life:" "$out" || true)" 2>&1) || true
		outcome=${sig%%:*}
		kept=$TB_LOGS/freeze-count-$(date +%Y%m%dT%H%M%S).log
		cp "$TB_LOGS/$life.log" "$kept" 2>/dev/null || true
		sig="${sig#*: } (log: ${kept#"$TB_ROOT"/})"
	fi
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$qver" "$life" "$outcome" \
		"${sig//$'\t'/ }" "$secs" >>"$RESULTS"
	echo "freeze-count: life $i/$N: $outcome${sig:+: $sig} (${secs}s)"
done

# Over every recorded life with this QEMU and scenario.
read -r lives tb other < <(awk -F'\t' -v q="$qver" -v s="$life" '
	$2 == q && $3 == s { n++; if ($4 == "testbed") t++; else if ($4 != "ok") o++ }
	END { print n + 0, t + 0, o + 0 }' "$RESULTS")
echo "freeze-count: QEMU $qver, $life: testbed failures $(python3 "$TB_DIR/wilson.py" "$tb" "$lives")"
awk -F'\t' -v q="$qver" -v s="$life" '$2 == q && $3 == s && $4 == "testbed" {
	k = $5; sub(/:.*/, "", k); c[k]++ } END { for (k in c) print "freeze-count:   " k ": " c[k] }' "$RESULTS"
echo "freeze-count: other failures (skiff's or unrecognised): $other in $lives; all lives in ${RESULTS#"$TB_ROOT"/}"
