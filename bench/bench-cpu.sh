# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# The cpu workload (issue 38.3, sourced by bench/bench-round.sh in L1 and
# L2): the control of the world-switch table. L2 runs a fixed CPU-bound
# job, sha256 over a 1 MiB buffer in its memory BENCH_CPU_MIB times in one
# busybox process (no disk, no network while it runs), and reports the
# guest's wall time for it; L1's snapshots at L2's cpu-run and cpu-end
# console markers bound the window of its exits and VMM CPU, as fio's
# markers do for the blk-* workloads. Every VMM should tie here: the job
# never leaves the guest but for its timer.
BENCH_CPU_PORT=9997 # L2's job server: "cpu MIB" in, one SKIFF-CPU line out
# ~2-3 s in the testbed's L2 (24 MiB took 0.5 s in the 2026-12-06 first round)
BENCH_CPU_MIB=${BENCH_CPU_MIB:-128}
BENCH_CPU_BUF=/tmp/bench-cpu.buf
BENCH_CPU_CONSOLE=/dev/console # where the window markers go

# bench_cpu_run L2IP MIB BOUND: L1 asks L2's job server for MIB MiB; its
# reply on stdout.
bench_cpu_run() {
	echo "cpu $2" | timeout "$3" nc "$1" "$BENCH_CPU_PORT"
}

# bench_cpu_serve: in L2, one request of L1 (stdin and stdout are the
# connection): "cpu MIB" in, "SKIFF-CPU: mib=N ms=T sha256=HEX" out, or
# one line saying what was wrong.
bench_cpu_serve() {
	read -r cs_w cs_n || return 0
	[ "$cs_w" = cpu ] || { echo "no job $cs_w"; return 0; }
	case "$cs_n" in '' | 0* | *[!0-9]*) echo "bad amount $cs_n"; return 0 ;; esac
	[ "$cs_n" -le 4096 ] || { echo "amount $cs_n over 4096 MiB"; return 0; }
	cs_i=0
	set --
	while [ "$cs_i" -lt "$cs_n" ]; do
		set -- "$@" "$BENCH_CPU_BUF"
		cs_i=$((cs_i + 1))
	done
	echo "SKIFF-BENCH-L2: cpu-run" >>"$BENCH_CPU_CONSOLE"
	cs_t0=$(now_ns)
	sha256sum "$@" >"$BENCH_CPU_BUF.out" 2>&1
	cs_rc=$?
	cs_t1=$(now_ns)
	echo "SKIFF-BENCH-L2: cpu-end" >>"$BENCH_CPU_CONSOLE"
	cs_lines=$(wc -l <"$BENCH_CPU_BUF.out")
	if [ "$cs_rc" != 0 ] || [ "$cs_lines" != "$cs_n" ]; then
		echo "sha256sum failed (rc $cs_rc, $cs_lines of $cs_n lines): $(head -n1 "$BENCH_CPU_BUF.out")"
		return 0
	fi
	read -r cs_h _ <"$BENCH_CPU_BUF.out"
	echo "SKIFF-CPU: mib=$cs_n ms=$(((cs_t1 - cs_t0) / 1000000)) sha256=$cs_h"
}

# bench_cpu_l2: in L2, the buffer (random, in memory) and the job server.
bench_cpu_l2() {
	dd if=/dev/urandom of="$BENCH_CPU_BUF" bs=1024 count=1024 2>/dev/null ||
		{ echo "SKIFF-BENCH-L2: no cpu buffer"; return 0; }
	nc -ll -p "$BENCH_CPU_PORT" -e /bin/sh -c \
		'. /testbed/lib.sh; . /testbed/scenario.sh; . /testbed/bench-cpu.sh; bench_cpu_serve' &
}
