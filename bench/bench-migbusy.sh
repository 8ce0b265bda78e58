# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# The migrate-busy workload (issue 34.5, sourced by bench/bench-round.sh in
# L1 and L2; bench/run.sh packs it when planned): the migrate workload of
# bench/bench-snapmig.sh while L2 rewrites a fixed working set of its
# memory, so pre-copy has pages to chase ("the same guest under the same
# load" for skiff and QEMU).
#
# The load is the guest's own and the same under every VMM: L2's job
# server (port BENCH_MB_PORT) rewrites a BENCH_MB_MIB file in a tmpfs in
# place, pass after pass, until L1 stops it or its own bound ends. A pass
# writes BENCH_MB_CHUNK_MIB at a time with BENCH_MB_PAUSE_MS after each
# chunk: a bounded dirty rate, spread over the pass rather than one burst
# and a long pause (a VMM whose short rounds fell into the pause would
# dodge the load; in the first try, one 32 MiB write of ~70 ms then 500
# ms of pause, skiff's last rounds took 17 and 4 ms). The data is random
# (a 1 MiB buffer written again and again): zero pages would cost QEMU a
# few bytes each (it sends them as markers) and skiff's later rounds a
# full page, an asymmetry no real guest's writes have. Each pass's start
# and end (L2's uptime, 10 ms) go into a log the stop request returns, so
# the host can tell how fast the guest wrote during the migration (guest
# time) and before it (bench/skiffbench/dirtyjob.py).
BENCH_MB_PORT=9996 # "start SECS" | "mark" | "stop" in, SKIFF-DIRTY lines out
BENCH_MB_MIB=${BENCH_MB_MIB:-32}
BENCH_MB_CHUNK_MIB=${BENCH_MB_CHUNK_MIB:-4} # written at once, BENCH_MB_MIB a multiple
BENCH_MB_PAUSE_MS=${BENCH_MB_PAUSE_MS:-60}  # after each chunk
BENCH_MB_DIR=${BENCH_MB_DIR:-/run/dirty} # L2's tmpfs for the working set
BENCH_MB_WARM_S=4    # passes before the migration: the unhindered rate's window
BENCH_MB_BOUND_S=300 # the load's own end, past QEMU's 120 s migration wait

# ---- L2 ----

# bench_mb_now: L2's uptime in centiseconds into mb_now (builtins only:
# the loop reads it twice per pass). Linux prints two decimals; the 1
# prefix keeps "0.08" from reading as octal.
bench_mb_now() {
	read -r mn_u _ </proc/uptime
	mb_now=$((${mn_u%.*} * 100 + 1${mn_u#*.} - 100))
}

# bench_mb_loop SECS: passes until DIR/stop exists or SECS are over. Each
# pass: "pass N START END" in DIR/log; the last line "end N REASON UP".
bench_mb_loop() {
	ml_d=$BENCH_MB_DIR ml_secs=$1
	set -- # a chunk: the buffer BENCH_MB_CHUNK_MIB times
	ml_i=0
	while [ "$ml_i" -lt "$BENCH_MB_CHUNK_MIB" ]; do
		set -- "$@" "$ml_d/buf"
		ml_i=$((ml_i + 1))
	done
	bench_mb_now
	ml_end=$((mb_now + ml_secs * 100))
	ml_n=0 ml_why=stop
	ml_pause=$((BENCH_MB_PAUSE_MS / 1000)).$(printf %03d $((BENCH_MB_PAUSE_MS % 1000)))
	while [ ! -e "$ml_d/stop" ]; do
		bench_mb_now
		[ "$mb_now" -lt "$ml_end" ] || { ml_why=bound; break; }
		ml_a=$mb_now
		# fd 3 opened without truncation at the file's start, and each
		# chunk written at its offset: every pass rewrites the same
		# page-cache pages in place.
		exec 3<>"$ml_d/ws"
		ml_c=0
		while [ "$ml_c" -lt "$BENCH_MB_MIB" ]; do
			[ "$ml_c" = 0 ] || sleep "$ml_pause"
			cat "$@" >&3 || { ml_why=write-failed; break; }
			ml_c=$((ml_c + BENCH_MB_CHUNK_MIB))
		done
		exec 3>&-
		[ "$ml_why" = stop ] || break
		bench_mb_now
		ml_n=$((ml_n + 1))
		echo "pass $ml_n $ml_a $mb_now" >>"$ml_d/log"
		sleep "$ml_pause"
	done
	bench_mb_now
	echo "end $ml_n $ml_why $mb_now" >>"$ml_d/log"
	rm -f "$ml_d/running"
}

# bench_mb_wait FILE there|gone SECS: wait until FILE exists or is gone,
# SECS at most.
bench_mb_wait() {
	mw_i=0
	while [ $mw_i -lt $(($3 * 20)) ]; do
		case "$2:$([ -e "$1" ] && echo y)" in there:y | gone:) return 0 ;; esac
		sleep 0.05
		mw_i=$((mw_i + 1))
	done
	return 1
}

bench_mb_start() {
	case "$1" in '' | 0* | *[!0-9]*) echo "bad bound '$1'"; return 0 ;; esac
	[ "$1" -le 600 ] || { echo "bound $1 over 600 s"; return 0; }
	[ $((BENCH_MB_MIB % BENCH_MB_CHUNK_MIB)) = 0 ] ||
		{ echo "$BENCH_MB_MIB MiB is no multiple of $BENCH_MB_CHUNK_MIB MiB chunks"; return 0; }
	[ ! -e "$BENCH_MB_DIR/running" ] || { echo "a load runs already"; return 0; }
	rm -f "$BENCH_MB_DIR/stop" "$BENCH_MB_DIR/log" "$BENCH_MB_DIR/ws"
	dd if=/dev/urandom of="$BENCH_MB_DIR/buf" bs=1024 count=1024 2>/dev/null ||
		{ echo "no buffer in $BENCH_MB_DIR"; return 0; }
	: >"$BENCH_MB_DIR/running"
	# exec: a redirection on the call itself would leave ash a saved
	# copy of the connection in the loop's shell, and L1 would wait for
	# its end.
	(
		exec </dev/null >/dev/null 2>&1
		bench_mb_loop "$1"
	) &
	# The reply once the first pass made the file: L1's warm-up starts
	# on a working set that exists.
	if ! bench_mb_wait "$BENCH_MB_DIR/log" there 60; then
		echo "no pass within 60 s"
		return 0
	fi
	bench_mb_now
	echo "SKIFF-DIRTY: start mib=$BENCH_MB_MIB chunk_mib=$BENCH_MB_CHUNK_MIB pause_ms=$BENCH_MB_PAUSE_MS up=$mb_now"
}

bench_mb_stop() {
	[ -e "$BENCH_MB_DIR/log" ] || { echo "no load runs"; return 0; }
	: >"$BENCH_MB_DIR/stop"
	bench_mb_wait "$BENCH_MB_DIR/running" gone 60 || { echo "the load did not stop within 60 s"; return 0; }
	sed 's/^/SKIFF-DIRTY: /' "$BENCH_MB_DIR/log"
	rm -f "$BENCH_MB_DIR/stop" "$BENCH_MB_DIR/log" "$BENCH_MB_DIR/ws" "$BENCH_MB_DIR/buf"
}

# bench_mb_serve: in L2, one request of L1 (stdin and stdout are the
# connection): "start SECS" (start the load, bounded by SECS; the reply
# after its first pass), "mark" (L2's uptime and the passes so far: the
# migration's start in guest time) or "stop" (stop it; every pass's
# times); anything else gets one line saying what is wrong.
bench_mb_serve() {
	read -r ms_w ms_a || return 0
	case "$ms_w" in
	start) bench_mb_start "$ms_a" ;;
	mark)
		[ -e "$BENCH_MB_DIR/running" ] || { echo "no load runs"; return 0; }
		bench_mb_now
		echo "SKIFF-DIRTY: mark up=$mb_now passes=$(grep -c '^pass' "$BENCH_MB_DIR/log")"
		;;
	stop) bench_mb_stop ;;
	*) echo "no job '$ms_w'" ;;
	esac
}

# bench_mb_l2: in L2, the working set's tmpfs and the job server.
bench_mb_l2() {
	mkdir -p "$BENCH_MB_DIR"
	if ! mount -t tmpfs -o "size=$((BENCH_MB_MIB + 8))m" tmpfs "$BENCH_MB_DIR"; then
		echo "SKIFF-BENCH-L2: no tmpfs for the dirtying load"
		return 0
	fi
	nc -ll -p "$BENCH_MB_PORT" -e /bin/sh -c \
		'. /testbed/lib.sh; . /testbed/scenario.sh; . /testbed/bench-migbusy.sh; bench_mb_serve' &
	echo "SKIFF-BENCH-L2: dirtying load server on port $BENCH_MB_PORT"
}

# ---- L1 ----

# bench_mb_ask REQUEST BOUND: one request to L2's job server; its reply.
bench_mb_ask() {
	echo "$1" | timeout "$2" nc "$BENCH_L2_IP" "$BENCH_MB_PORT"
}

# bench_mb_mark: the migration starts now: L2's uptime into the load's
# file (BENCH_SM_LOAD), and L1's time into mb_mark_ns for the window's end.
bench_mb_mark() {
	bench_mb_ask mark 20 >>"$BENCH_SM_LOAD" 2>&1
	mb_mark_ns=$(now_ns)
}

# bench_mb_window TN: the migration, as L1 saw it, ended at TN (ns): its
# length from the mark, for the guest's rate during it.
bench_mb_window() {
	echo "SKIFF-DIRTY: window ms=$((($1 - mb_mark_ns) / 1000000))" >>"$BENCH_SM_LOAD"
}

# bench_mb_run KIND DIR: the load started, BENCH_MB_WARM_S of it, the
# migrate workload under it (bench_sm_mig_KIND marks its start and end
# when BENCH_SM_LOAD is set), the load stopped; L2's replies in
# DIR/dirty.txt.
bench_mb_run() {
	mr_f=$2/dirty.txt
	bench_mb_ask "start $BENCH_MB_BOUND_S" 90 >"$mr_f" 2>&1
	if ! grep -q '^SKIFF-DIRTY: start ' "$mr_f"; then
		echo "the load did not start: $(head -n1 "$mr_f")" >"$2/error"
		return
	fi
	sleep "$BENCH_MB_WARM_S"
	BENCH_SM_LOAD=$mr_f
	bench_sm_mig_"$1" "$2"
	BENCH_SM_LOAD=
	bench_mb_ask stop 90 >>"$mr_f" 2>&1
}
