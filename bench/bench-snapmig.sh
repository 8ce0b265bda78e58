# SPDX-License-Identifier: Apache-2.0
# The snap and migrate workloads of bench/bench-round.sh (issue 34 point 5),
# sourced by it in L1 (bench/run.sh packs this file as
# /testbed/bench-snapmig.sh, with curl for skiff's API). Both replace the
# running VMM, so bench_vm runs them last, snap before migrate (a plan
# with both migrates the restored guest); kvmtool has neither (one line,
# bench_sm_applies) and native configurations skip them as VM_ONLY.
# migrate-busy (bench/bench-migbusy.sh) is migrate under a load in L2,
# after it.
#
# snap: L2 answering ping; pause and save a Full snapshot (skiff: PATCH
# /vm Paused + PUT /snapshot/create; QEMU: QMP stop + migrate to
# "exec:cat > FILE", how QEMU 7.2's users save a VM: it has no file: URI),
# SIGKILL the VMM, start a fresh one and restore (skiff: `skiff run
# --api-sock` + PUT /snapshot/load, resume_vm true; QEMU: the same command
# line + -incoming "exec:cat FILE", then cont). Asymmetries: skiff's clock
# starts at the load request (its fresh process already serves the API);
# QEMU's at its process start (its restore is its start), so QEMU's
# includes its process and device setup; "running" is skiff's 204 (the
# guest resumed) and QEMU's query-status "running" after cont. The first ping reply is from L1's ping at 50 ms intervals,
# started before the restore, polled every 20 ms.
#
# migrate: a second VMM in L1 receives over a Unix socket (skiff: PUT
# /migration/receive + /migration/send; QEMU: target with -incoming
# unix:PATH, source QMP migrate, max-bandwidth raised from QEMU's 32 MiB/s
# default as a local migration's user would), with L1 pinging L2 every
# 50 ms throughout. Total time is each VMM's own (skiff's send reply;
# QEMU's query-migrate). Downtime is the guest's: skiff's from its pause
# to its target's RUNNING (its send reply), QEMU's from the source's STOP
# to the target's RESUME event; mig_downtime_sent_ms is each counted
# QEMU's way, to the source's last byte (skiff's downtime_sent_ms, QEMU's
# query-migrate downtime). skiff hands tap0 over to its target;
# two QEMUs cannot hold the single-queue tap0 at once, so QEMU's target
# gets tap1 and L1's address moves to it once the source quit (and back
# after the VM ends: bench_sm_untap).
# vm_kind, vm_c and BENCH_SM_CMD come from bench_vm (bench-round.sh).
# shellcheck disable=SC2154,SC2153
BENCH_SM_QMP=4444 # the running QEMU's QMP (TCP on L1's loopback: no socat)
BENCH_SM_QMP2=4445
BENCH_SM_API=$BENCH_DIR/api.sock

# bench_qmp PORT CMD...: QMP commands (JSON) to QEMU on PORT, replies on
# stdout. The sleep keeps stdin open for the replies.
bench_qmp() {
	qm_p=$1
	shift
	{
		echo '{"execute": "qmp_capabilities"}'
		for qm_c in "$@"; do echo "$qm_c"; done
		sleep 0.3
	} | timeout 5 nc 127.0.0.1 "$qm_p" 2>/dev/null
}

# bench_sm_api SOCK METHOD PATH JSON BODYFILE: skiff's API by curl; the
# HTTP status on stdout.
bench_sm_api() {
	curl -s -o "$5" -w '%{http_code}' -X "$2" --unix-socket "$1" \
		-H 'Content-Type: application/json' -d "$4" "http://localhost$3"
}

# bench_sm_net FILE WHEN: L1's addresses and routes into FILE (what the
# pinger saw, for a failed run).
bench_sm_net() {
	{
		echo "== $2"
		ip -br addr
		ip route
	} >>"$1" 2>&1
}

# bench_sm_ping FILE: ping L2 every 50 ms into FILE until bench_sm_run
# ends it (a stop file): pings of 20, again and again, as busybox's ping
# gives up on a send error (tap0 without its VMM) and each one ends alone.
bench_sm_ping() {
	bench_sm_net "${1%/*}/net.txt" "ping start"
	rm -f "$BENCH_DIR/ping.stop"
	(until [ -e "$BENCH_DIR/ping.stop" ]; do
		ping -c 20 -i 0.05 -W 1 "$BENCH_L2_IP" || sleep 0.05
	done) >"$1" 2>&1 &
	sm_ping=$!
}

# bench_sm_first_reply FILE SECS: now_ns once FILE has a reply, or nothing.
bench_sm_first_reply() {
	fr_i=0
	while [ $fr_i -lt $(($2 * 50)) ]; do
		grep -q 'bytes from' "$1" 2>/dev/null && { now_ns; return 0; }
		sleep 0.02
		fr_i=$((fr_i + 1))
	done
	return 1
}

# bench_sm_qemu_wait PORT SECS: QEMU's migration on PORT completed; its
# query-migrate reply in sm_q.
bench_sm_qemu_wait() {
	qw_i=0
	while [ $qw_i -lt $(($2 * 20)) ]; do
		sm_q=$(bench_qmp "$1" '{"execute": "query-migrate"}')
		case "$sm_q" in
		*'"status": "completed"'*) return 0 ;;
		*'"status": "failed"'* | *'"status": "cancelled"'*) return 1 ;;
		esac
		sleep 0.05
		qw_i=$((qw_i + 1))
	done
	return 1
}

# bench_qmp_hold PORT OUT DONE CMD...: as bench_qmp, but the connection
# stays, silent (no polling QEMU's main loop during the migration), until
# the file DONE exists (120 s at most), then asks query-migrate once:
# replies and events (STOP, RESUME, MIGRATION with QEMU's timestamps) in
# OUT. A QMP socket takes one client, so this is the only one meanwhile.
bench_qmp_hold() {
	qh_p=$1 qh_o=$2 qh_d=$3
	shift 3
	{
		echo '{"execute": "qmp_capabilities"}'
		for qh_c in "$@"; do echo "$qh_c"; done
		qh_i=0
		while [ ! -e "$qh_d" ] && [ $qh_i -lt 2400 ]; do
			sleep 0.05
			qh_i=$((qh_i + 1))
		done
		echo '{"execute": "query-migrate"}'
		sleep 0.3
	} | timeout 125 nc 127.0.0.1 "$qh_p" >"$qh_o" 2>/dev/null
}

# bench_qmp_event_us FILE EVENT: the first EVENT's timestamp in FILE, us.
bench_qmp_event_us() {
	# (awk prints the two numbers: its %d may be 32 bits)
	qe_t=$(awk -v e="\"event\": \"$2\"" 'index($0, e) {
		s = $0; sub(/.*"seconds": */, "", s); sub(/[^0-9].*/, "", s)
		u = $0; sub(/.*"microseconds": */, "", u); sub(/[^0-9].*/, "", u)
		print s, u; exit
	}' "$1")
	[ -n "$qe_t" ] || return 0
	# shellcheck disable=SC2086
	set -- $qe_t
	echo $(($1 * 1000000 + $2))
}

# bench_sm_json KEY TEXT: the first number after "KEY": in TEXT.
bench_sm_json() {
	printf '%s\n' "$2" | awk -v k="\"$1\":" '{
		n = split($0, f, /[,{}]/)
		for (i = 1; i <= n; i++) if (index(f[i], k)) { sub(/.*: */, "", f[i]); print f[i] + 0; exit }
	}'
}

# bench_sm_run W DIR: the workload W (snap, migrate, migrate-busy) on the running
# VMM (BENCH_VMM_PID, kind vm_kind, command line BENCH_SM_CMD); metrics
# in DIR/metrics.extra, a failure in DIR/error. The new VMM becomes
# BENCH_VMM_PID.
bench_sm_run() {
	sm_d=$2
	case "$1:$vm_kind" in
	snap:skiff) bench_sm_snap_skiff "$sm_d" ;;
	snap:qemu) bench_sm_snap_qemu "$sm_d" ;;
	migrate:skiff) bench_sm_mig_skiff "$sm_d" ;;
	migrate:qemu) bench_sm_mig_qemu "$sm_d" ;;
	# the same migration under a load in L2 (bench/bench-migbusy.sh)
	migrate-busy:skiff | migrate-busy:qemu)
		if command -v bench_mb_run >/dev/null; then
			bench_mb_run "$vm_kind" "$sm_d"
		else
			echo "bench-migbusy.sh was not packed" >"$sm_d/error"
		fi
		;;
	*) echo "$1 does not apply to $vm_kind" >"$sm_d/error" ;;
	esac
	if [ -n "${sm_ping:-}" ]; then
		: >"$BENCH_DIR/ping.stop"
		wait "$sm_ping"
	fi
	sm_ping=
}

# bench_sm_size STATE MEM DIR: the snapshot's size, apparent and on disk.
bench_sm_size() {
	sz_b=0
	for sz_f in "$1" "$2"; do
		[ -e "$sz_f" ] && sz_b=$((sz_b + $(stat -c %s "$sz_f")))
	done
	echo "snap_bytes=$sz_b" >>"$3/metrics.extra"
	# shellcheck disable=SC2046 # two numbers
	echo "snap_disk_kib=$(du -k "$1" "$2" 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')" >>"$3/metrics.extra"
}

# bench_sm_restored DIR T0 T_RUNNING PID: the restore's metrics and the
# new VMM.
bench_sm_restored() {
	echo "snap_restore_running_ms=$((($3 - $2) / 1000000))" >>"$1/metrics.extra"
	if sr_t=$(bench_sm_first_reply "$1/ping-load.txt" 60); then
		echo "snap_restore_ping_ms=$(((sr_t - $2) / 1000000))" >>"$1/metrics.extra"
	else
		echo "no ping reply from L2 within 60 s of the restore" >"$1/error"
	fi
	BENCH_VMM_PID=$4
}

bench_sm_snap_skiff() {
	ss_st=$BENCH_DIR/snap.state ss_mem=$BENCH_DIR/snap.mem
	# Under its seccomp filter skiff writes only files that exist.
	: >"$ss_st"
	: >"$ss_mem"
	ss_t0=$(now_ns)
	ss_c=$(bench_sm_api "$BENCH_SM_API" PATCH /vm '{"state": "Paused"}' "$1/api.body")
	[ "$ss_c" = 204 ] || { echo "pause: $ss_c $(cat "$1/api.body")" >"$1/error"; return; }
	ss_c=$(bench_sm_api "$BENCH_SM_API" PUT /snapshot/create \
		"{\"snapshot_type\": \"Full\", \"snapshot_path\": \"$ss_st\", \"mem_file_path\": \"$ss_mem\"}" "$1/api.body")
	[ "$ss_c" = 204 ] || { echo "create: $ss_c $(cat "$1/api.body")" >"$1/error"; return; }
	echo "snap_create_ms=$((($(now_ns) - ss_t0) / 1000000))" >>"$1/metrics.extra"
	bench_sm_size "$ss_st" "$ss_mem" "$1"
	kill -9 "$BENCH_VMM_PID"
	wait "$BENCH_VMM_PID" 2>/dev/null
	rm -f "$BENCH_SM_API"
	skiff run --api-sock "$BENCH_SM_API" </dev/null >"$1/l2-restored.log" 2>"$1/vmm.err" &
	ss_pid=$!
	wait_sock "$BENCH_SM_API" || { echo "restored skiff: no API socket" >"$1/error"; return; }
	bench_sm_ping "$1/ping-load.txt"
	ss_t0=$(now_ns)
	ss_c=$(bench_sm_api "$BENCH_SM_API" PUT /snapshot/load \
		"{\"snapshot_path\": \"$ss_st\", \"mem_backend\": {\"backend_type\": \"File\", \"backend_path\": \"$ss_mem\"}, \"resume_vm\": true}" "$1/api.body")
	ss_t1=$(now_ns)
	[ "$ss_c" = 204 ] || { echo "load: $ss_c $(cat "$1/api.body")" >"$1/error"; return; }
	bench_sm_restored "$1" "$ss_t0" "$ss_t1" "$ss_pid"
	BENCH_SM_ERR=$1/vmm.err
	# The memory file is mapped privately by the restored VM: removing
	# its name frees nothing until that VM ends, but leaves no litter.
	rm -f "$ss_st" "$ss_mem"
}

bench_sm_snap_qemu() {
	sq_d=$1 # $1 goes to the eval
	sq_f=$BENCH_DIR/snap.qemu
	rm -f "$sq_f"
	sq_t0=$(now_ns)
	bench_qmp "$BENCH_SM_QMP" '{"execute": "stop"}' \
		"{\"execute\": \"migrate\", \"arguments\": {\"uri\": \"exec:cat > $sq_f\"}}" >"$sq_d/qmp.out"
	bench_sm_qemu_wait "$BENCH_SM_QMP" 120 || { echo "save: $sm_q" >"$sq_d/error"; return; }
	echo "snap_create_ms=$((($(now_ns) - sq_t0) / 1000000))" >>"$sq_d/metrics.extra"
	bench_sm_size "$sq_f" "" "$sq_d"
	kill -9 "$BENCH_VMM_PID"
	wait "$BENCH_VMM_PID" 2>/dev/null
	bench_sm_net "$sq_d/net.txt" "QEMU killed"
	ip link set tap0 up
	ip addr replace "$BENCH_L1_IP/24" dev tap0
	bench_sm_ping "$sq_d/ping-load.txt"
	sq_t0=$(now_ns)
	eval "set -- $BENCH_SM_CMD"
	"$@" -incoming "exec:cat $sq_f" </dev/null >"$sq_d/l2-restored.log" 2>"$sq_d/vmm.err" &
	sq_pid=$!
	# The saved VM was stopped, so QEMU leaves the loaded one paused: cont
	# (during the load it only asks QEMU to start after it), then QEMU's
	# own "running" from query-status.
	sq_i=0
	until bench_qmp "$BENCH_SM_QMP" '{"execute": "cont"}' '{"execute": "query-status"}' |
		grep -q '"status": "running"'; do
		sq_i=$((sq_i + 1))
		if [ $sq_i -ge 1200 ] || ! kill -0 "$sq_pid" 2>/dev/null; then
			echo "restored QEMU not running after cont" >"$sq_d/error"
			return
		fi
		sleep 0.05
	done
	bench_sm_restored "$sq_d" "$sq_t0" "$(now_ns)" "$sq_pid"
	bench_sm_net "$sq_d/net.txt" "restored"
	rm -f "$sq_f"
}

# bench_sm_mig_done DIR T0 TOTAL DOWNTIME SENT [TN]: the migration's
# metrics (SENT: the downtime to the source's last byte, QEMU's own
# definition; TN: when L1 saw it complete, now if not given).
bench_sm_mig_done() {
	md_tn=${6:-$(now_ns)}
	[ -z "${BENCH_SM_LOAD:-}" ] || bench_mb_window "$md_tn"
	[ -n "$5" ] && echo "mig_downtime_sent_ms=$5" >>"$1/metrics.extra"
	echo "mig_request_ms=$(((md_tn - $2) / 1000000))" >>"$1/metrics.extra"
	[ -n "$3" ] && echo "mig_total_ms=$3" >>"$1/metrics.extra"
	[ -n "$4" ] && echo "mig_downtime_ms=$4" >>"$1/metrics.extra"
	[ -n "$3" ] && [ -n "$4" ] || echo "no total or downtime in the VMM's answer" >"$1/error"
}

# bench_sm_skiff_rounds ERRFILE: skiff's pre-copy rounds, from its log
# ("migration: round N sent ..."; the switch's last pages are not one).
bench_sm_skiff_rounds() {
	grep -c 'migration: round [0-9]* sent' "$1" 2>/dev/null || true
}

# bench_sm_qemu_counts QUERY: QEMU's pages sent and pre-copy rounds from
# its query-migrate reply, as skiff's: "normal" pages (zero ones go as
# markers, as skiff leaves them out of its first round) and dirty-sync-count
# less its last sync (in the downtime, skiff's switch): the first sync
# starts QEMU's pass over all of RAM, skiff's round 0.
bench_sm_qemu_counts() {
	qc_n=$(bench_sm_json normal "$1")
	qc_s=$(bench_sm_json dirty-sync-count "$1")
	[ -z "$qc_n" ] || echo "mig_pages=$qc_n"
	[ -z "$qc_s" ] || echo "mig_precopy_rounds=$((qc_s - 1))"
}

bench_sm_mig_skiff() {
	ms_t=$BENCH_DIR/tgt.sock ms_u=$BENCH_DIR/mig.sock
	rm -f "$ms_t" "$ms_u"
	skiff run --api-sock "$ms_t" </dev/null >"$1/l2-target.log" 2>"$1/vmm.err" &
	ms_pid=$!
	wait_sock "$ms_t" || { echo "target skiff: no API socket" >"$1/error"; return; }
	(bench_sm_api "$ms_t" PUT /migration/receive "{\"receiver_url\": \"unix:$ms_u\"}" "$1/recv.body" >"$1/recv.code") &
	ms_recv=$!
	wait_sock "$ms_u" || { echo "target skiff does not listen" >"$1/error"; return; }
	bench_sm_ping "$1/ping-load.txt"
	sleep 1
	[ -z "${BENCH_SM_LOAD:-}" ] || bench_mb_mark
	ms_t0=$(now_ns)
	ms_c=$(bench_sm_api "$BENCH_SM_API" PUT /migration/send "{\"destination_url\": \"unix:$ms_u\"}" "$1/api.body")
	[ "$ms_c" = 200 ] || { echo "send: $ms_c $(cat "$1/api.body")" >"$1/error"; return; }
	ms_b=$(cat "$1/api.body")
	bench_sm_mig_done "$1" "$ms_t0" "$(bench_sm_json total_ms "$ms_b")" "$(bench_sm_json downtime_ms "$ms_b")" \
		"$(bench_sm_json downtime_sent_ms "$ms_b")"
	wait "$BENCH_VMM_PID" 2>/dev/null
	wait "$ms_recv"
	# Why the downtime is what it is: the pages sent and the pre-copy
	# rounds (the source's log lines, written before it exited).
	ms_n=$(bench_sm_json pages "$ms_b") ms_r=$(bench_sm_skiff_rounds "$BENCH_SM_ERR")
	[ -z "$ms_n" ] || echo "mig_pages=$ms_n" >>"$1/metrics.extra"
	[ -z "$ms_r" ] || echo "mig_precopy_rounds=$ms_r" >>"$1/metrics.extra"
	BENCH_VMM_PID=$ms_pid
	BENCH_SM_API=$ms_t BENCH_SM_ERR=$1/vmm.err
	sleep 1
}

bench_sm_mig_qemu() {
	mq_d=$1 # $1 goes to the eval
	mq_u=$BENCH_DIR/qmig.sock
	rm -f "$mq_u"
	ip tuntap add tap1 mode tap 2>/dev/null
	ip link set tap1 up
	eval "set -- $(echo "$BENCH_SM_CMD" | sed "s/ifname=tap0,/ifname=tap1,/; s/:$BENCH_SM_QMP,/:$BENCH_SM_QMP2,/")"
	"$@" -incoming "unix:$mq_u" </dev/null >"$mq_d/l2-target.log" 2>"$mq_d/vmm.err" &
	mq_pid=$!
	wait_sock "$mq_u" || { echo "target QEMU does not listen" >"$mq_d/error"; return; }
	ip link set tap0 up
	ip addr replace "$BENCH_L1_IP/24" dev tap0
	bench_sm_ping "$mq_d/ping-load.txt"
	sleep 1
	# QEMU's downtime ends at its source's last byte; the guest is down
	# from the source's STOP to the target's RESUME (both QMP events, one
	# clock): that is mig_downtime_ms, as skiff's runs to its target's
	# RUNNING. Each QMP connection is held throughout to see its events,
	# and asks nothing until the end (no query-migrate polling).
	mq_done=$mq_d/qmp.done
	rm -f "$mq_done"
	bench_qmp_hold "$BENCH_SM_QMP2" "$mq_d/qmp-target.out" "$mq_done" &
	mq_h2=$!
	sleep 0.3
	[ -z "${BENCH_SM_LOAD:-}" ] || bench_mb_mark
	mq_t0=$(now_ns)
	bench_qmp_hold "$BENCH_SM_QMP" "$mq_d/qmp.out" "$mq_done" \
		'{"execute": "migrate-set-capabilities", "arguments": {"capabilities": [{"capability": "events", "state": true}]}}' \
		'{"execute": "migrate-set-parameters", "arguments": {"max-bandwidth": 10000000000}}' \
		"{\"execute\": \"migrate\", \"arguments\": {\"uri\": \"unix:$mq_u\"}}" &
	mq_h1=$!
	# The end: the source's MIGRATION event (the events capability).
	mq_i=0 mq_e=
	while [ $mq_i -lt 2400 ] && [ -z "$mq_e" ]; do
		sleep 0.05
		mq_e=$(grep -E '"event": "MIGRATION".*"status": "(completed|failed|cancelled)"' \
			"$mq_d/qmp.out" | head -n1)
		mq_i=$((mq_i + 1))
	done
	mq_tn=$(now_ns)
	mq_i=0
	while [ $mq_i -lt 100 ] && ! grep -q '"event": "RESUME"' "$mq_d/qmp-target.out"; do
		sleep 0.05
		mq_i=$((mq_i + 1))
	done
	touch "$mq_done"
	wait "$mq_h1" "$mq_h2"
	case "$mq_e" in
	*'"status": "completed"'*) ;;
	*) echo "migrate: ${mq_e:-no completion in 120 s}" >"$mq_d/error"; return ;;
	esac
	sm_q=$(grep '"return": {.*"status": "completed"' "$mq_d/qmp.out" | tail -n1)
	mq_stop=$(bench_qmp_event_us "$mq_d/qmp.out" STOP)
	mq_resume=$(bench_qmp_event_us "$mq_d/qmp-target.out" RESUME)
	[ -n "$mq_stop" ] && [ -n "$mq_resume" ] ||
		{ echo "migrate: no STOP ('$mq_stop') or RESUME ('$mq_resume') event" >"$mq_d/error"; return; }
	bench_sm_mig_done "$mq_d" "$mq_t0" "$(bench_sm_json total-time "$sm_q")" \
		$(((mq_resume - mq_stop) / 1000)) "$(bench_sm_json downtime "$sm_q")" "$mq_tn"
	bench_sm_qemu_counts "$sm_q" >>"$mq_d/metrics.extra"
	bench_qmp "$BENCH_SM_QMP" '{"execute": "quit"}' >/dev/null
	wait "$BENCH_VMM_PID" 2>/dev/null
	BENCH_VMM_PID=$mq_pid
	BENCH_SM_QMP=$BENCH_SM_QMP2
	ip addr del "$BENCH_L1_IP/24" dev tap0
	ip addr add "$BENCH_L1_IP/24" dev tap1
	BENCH_SM_UNTAP=1
	sleep 1
}

# bench_sm_untap: after the VM ended, L1's address back on tap0 (for the
# next configuration) and the QEMU target's tap1 gone.
bench_sm_untap() {
	[ -n "${BENCH_SM_UNTAP:-}" ] || return 0
	ip addr del "$BENCH_L1_IP/24" dev tap1 2>/dev/null
	ip addr add "$BENCH_L1_IP/24" dev tap0
	ip link del tap1 2>/dev/null
	BENCH_SM_UNTAP=
}
