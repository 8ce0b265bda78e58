# SPDX-License-Identifier: Apache-2.0
# The vsock and balloon workloads of bench/bench-round.sh (issue 33.6),
# sourced by it in L1 and in L2 (bench/run.sh packs this file as
# /testbed/bench-vsock.sh when a plan has a vsock configuration or the
# balloon workload, and curl into L1 for skiff's API).
#
# vsock-h2g, vsock-g2h, vsock-rr run only on the configurations with a
# vsock (bench_has_vsock), between L1 and L2: L2 serves (vsock-io serve: a
# sink, a source and an echo on ports BENCH_VSOCK_PORT+1..3), L1 measures
# with vsock-io send, recv and rr (tests/testbed/guest/vsock-bench.c). L1
# reaches L2 through AF_VSOCK to CID 3 (skiff's backend=vhost, QEMU's
# vhost-vsock-pci: L1's kernel, vhost_vsock, carries the stream) or
# through skiff's hybrid Unix socket, where it writes "CONNECT PORT" and
# skiff's own threads carry it (bench_vsock_target).
#   vsock-h2g  L1 writes for SECS s, then waits for the sink's close
#   vsock-g2h  L1 reads L2's source for SECS s
#   vsock-rr   BENCH_VSOCK_RR_COUNT round trips of BENCH_VSOCK_RR_SIZE
#              bytes to L2's echo, each one timed (vsock.txt)
# balloon (skiff and QEMU): before the window, L2 fills a tmpfs with
# BENCH_BALLOON_FILL_MIB MiB and removes it (free in L2, still resident in
# the VMM). Then L1 asks for a balloon of BENCH_BALLOON_MIB (skiff: PATCH
# /balloon amount_mib; QEMU: QMP balloon to the guest's RAM minus it) and
# samples the VMM's VmRSS every 50 ms until the VMM says the guest's
# balloon reached it (skiff: GET /balloon/statistics actual_mib; QEMU:
# query-balloon actual; each asked every 200 ms by a process of its own),
# then 5 samples more, all on /proc/uptime's clock (10 ms steps, read
# without forking): balloon.txt, which bench/skiffbench/parsers.py
# turns into the RSS drop, the time to it and MiB per second. Then it
# deflates, without waiting.
# vm_kind, BENCH_VMM_PID, BENCH_MEM_KIB, BENCH_SM_API and BENCH_SM_QMP come
# from bench_vm (bench-round.sh).
# shellcheck disable=SC2154
BENCH_VSOCK_PORT=5200 # +1 sink, +2 source, +3 echo
BENCH_VSOCK_RR_COUNT=2000
BENCH_VSOCK_RR_SIZE=64
BENCH_BALLOON_PORT=9997 # L2's fill server: "fill MIB" in, "freed MIB" out
BENCH_BALLOON_FILL_MIB=128
BENCH_BALLOON_MIB=128

# ---- L1 ----

# bench_vsock_target ARGS...: where L1 reaches a configuration's vsock: the
# hybrid's Unix socket (skiff --vsock ...,uds=PATH), else the guest's CID
# (skiff --vsock cid=N,backend=vhost; a qemu word vsock: CID 3).
bench_vsock_target() {
	vt_next='' vt_t=''
	for vt_a in "$@"; do
		if [ -n "$vt_next" ]; then
			case ",$vt_a," in
			*,uds=*)
				vt_t=${vt_a#*uds=}
				vt_t=${vt_t%%,*}
				;;
			*,cid=*)
				vt_t=${vt_a#*cid=}
				vt_t=${vt_t%%,*}
				;;
			esac
		fi
		vt_next=''
		[ "$vt_a" != --vsock ] || vt_next=1
		[ "$vt_a" != vsock ] || vt_t=$BENCH_VSOCK_CID
	done
	echo "$vt_t"
}

# bench_vsock_run W TARGET DIR SECS BOUND: one vsock workload, vsock-io's
# output in DIR/vsock.txt; its exit status.
bench_vsock_run() {
	case "$1" in
	vsock-h2g) timeout "$5" vsock-io send "$2" $((BENCH_VSOCK_PORT + 1)) "$4" ;;
	vsock-g2h) timeout "$5" vsock-io recv "$2" $((BENCH_VSOCK_PORT + 2)) "$4" ;;
	vsock-rr)
		timeout "$5" vsock-io rr "$2" $((BENCH_VSOCK_PORT + 3)) "$BENCH_VSOCK_RR_COUNT" \
			"$BENCH_VSOCK_RR_SIZE"
		;;
	*) echo "no vsock workload $1" ;;
	esac >"$3/vsock.txt" 2>&1
}

# bench_vb_api METHOD PATH [JSON]: skiff's API (BENCH_SM_API) by curl, the
# body in BENCH_DIR/balloon.body; the HTTP status on stdout.
bench_vb_api() {
	if [ -n "${3:-}" ]; then
		curl -s -o "$BENCH_DIR/balloon.body" -w '%{http_code}' -X "$1" --unix-socket "$BENCH_SM_API" \
			-H 'Content-Type: application/json' -d "$3" "http://localhost$2"
	else
		curl -s -o "$BENCH_DIR/balloon.body" -w '%{http_code}' -X "$1" --unix-socket "$BENCH_SM_API" \
			"http://localhost$2"
	fi
}

# bench_balloon_fill L2IP DIR: L2 fills and frees BENCH_BALLOON_FILL_MIB
# (before the window); an error in DIR/error if it did not.
bench_balloon_fill() {
	echo "fill $BENCH_BALLOON_FILL_MIB" | timeout 150 nc "$1" "$BENCH_BALLOON_PORT" >"$2/fill.txt" 2>&1
	grep -q "^freed $BENCH_BALLOON_FILL_MIB\$" "$2/fill.txt" ||
		echo "L2 did not fill and free its memory: $(tail -n 1 "$2/fill.txt")" >"$2/error"
}

# bench_up_ns: L1's /proc/uptime in ns (10 ms steps), read without a
# fork: the trace's clock (now_ns forks date, ~0.1 s a sample in L1).
bench_up_ns() {
	read -r bu_t _ </proc/uptime
	echo "${bu_t%.*}${bu_t#*.}0000000"
}

# bench_balloon_done WHAT: the poller's end, WHAT (bench_up_ns when the VMM
# said the balloon is at its target, or "error ..."), seen by the sampler.
bench_balloon_done() {
	echo "$1" >"$BENCH_DIR/balloon.done.tmp"
	mv "$BENCH_DIR/balloon.done.tmp" "$BENCH_DIR/balloon.done"
}

# bench_balloon_skiff: PATCH /balloon, then GET /balloon/statistics every
# 200 ms (60 s at most) until actual_mib reaches the target.
bench_balloon_skiff() {
	bk_c=$(bench_vb_api PATCH /balloon "{\"amount_mib\": $BENCH_BALLOON_MIB}")
	[ "$bk_c" = 204 ] ||
		{ bench_balloon_done "error PATCH /balloon: $bk_c $(cat "$BENCH_DIR/balloon.body")"; return; }
	bk_i=0
	while [ $bk_i -lt 300 ]; do
		bench_vb_api GET /balloon/statistics >/dev/null
		bk_a=$(sed -n 's/.*"actual_mib":\([0-9]*\).*/\1/p' "$BENCH_DIR/balloon.body")
		if [ -n "$bk_a" ] && [ "$bk_a" -ge "$BENCH_BALLOON_MIB" ]; then
			bench_balloon_done "$(bench_up_ns)"
			return
		fi
		sleep 0.2
		bk_i=$((bk_i + 1))
	done
	bench_balloon_done "error actual_mib still '$bk_a' after 60 s: $(cat "$BENCH_DIR/balloon.body")"
}

# bench_balloon_qemu: QMP balloon, then query-balloon every 200 ms on the
# same connection (60 s at most) until actual (the guest's RAM less the
# balloon, bytes) is down to the target; events (BALLOON_CHANGE) count too.
bench_balloon_qemu() {
	bq_v=$(((BENCH_MEM_KIB / 1024 - BENCH_BALLOON_MIB) * 1048576))
	{
		echo '{"execute": "qmp_capabilities"}'
		echo "{\"execute\": \"balloon\", \"arguments\": {\"value\": $bq_v}}"
		bq_i=0
		while [ ! -e "$BENCH_DIR/balloon.done" ] && [ $bq_i -lt 300 ]; do
			echo '{"execute": "query-balloon"}'
			sleep 0.2
			bq_i=$((bq_i + 1))
		done
	} | timeout 70 nc 127.0.0.1 "$BENCH_SM_QMP" 2>&1 | while IFS= read -r bq_l; do
		echo "$bq_l" >>"$BENCH_DIR/balloon.qmp"
		case "$bq_l" in
		*'"actual": '*)
			bq_a=${bq_l#*\"actual\": }
			bq_a=${bq_a%%[!0-9]*}
			[ -e "$BENCH_DIR/balloon.done" ] || [ "$bq_a" -gt "$bq_v" ] ||
				bench_balloon_done "$(bench_up_ns)"
			;;
		*'"error"'*) [ -e "$BENCH_DIR/balloon.done" ] || bench_balloon_done "error QMP: $bq_l" ;;
		esac
	done
	[ -e "$BENCH_DIR/balloon.done" ] || bench_balloon_done "error actual not at $bq_v after 60 s"
}

# bench_balloon_rss: "rss NS KIB", the VMM's VmRSS now (NS: bench_up_ns).
bench_balloon_rss() {
	read -r br_t _ </proc/uptime
	while read -r br_k br_v _; do
		[ "$br_k" = VmRSS: ] || continue
		echo "rss ${br_t%.*}${br_t#*.}0000000 $br_v"
		return
	done <"/proc/$BENCH_VMM_PID/status"
}

# bench_balloon_run DIR: the window: request, VmRSS trace, deflate. The
# trace in DIR/balloon.txt (target_mib, rss lines, t0, rss lines, then
# "actual NS" or "error ...").
bench_balloon_run() {
	[ ! -e "$1/error" ] || return 0
	bb_f=$1/balloon.txt
	rm -f "$BENCH_DIR/balloon.done" "$BENCH_DIR/balloon.qmp"
	{
		echo "target_mib $BENCH_BALLOON_MIB"
		bench_balloon_rss
		echo "t0 $(bench_up_ns)"
	} >"$bb_f"
	case "$vm_kind" in
	skiff) bench_balloon_skiff & ;;
	*) bench_balloon_qemu & ;;
	esac
	bb_poll=$!
	bb_i=0
	while [ ! -e "$BENCH_DIR/balloon.done" ] && [ $bb_i -lt 1200 ]; do
		bench_balloon_rss
		sleep 0.05
		bb_i=$((bb_i + 1))
	done >>"$bb_f"
	for bb_i in 1 2 3 4 5; do
		bench_balloon_rss
		sleep 0.05
	done >>"$bb_f"
	wait "$bb_poll"
	bb_w=$(cat "$BENCH_DIR/balloon.done" 2>/dev/null)
	case "$bb_w" in
	error*) echo "$bb_w" ;;
	'') echo "error the poller ended without an answer" ;;
	*) echo "actual $bb_w" ;;
	esac >>"$bb_f"
	[ ! -e "$BENCH_DIR/balloon.qmp" ] || mv "$BENCH_DIR/balloon.qmp" "$1/qmp.txt"
	# Back to the whole guest for what may follow (not waited for).
	case "$vm_kind" in
	skiff) bench_vb_api PATCH /balloon '{"amount_mib": 0}' >/dev/null ;;
	*)
		bench_qmp_once "{\"execute\": \"balloon\", \"arguments\": {\"value\": $((BENCH_MEM_KIB * 1024))}}"
		;;
	esac
}

# bench_qmp_once CMD: one QMP command to the running QEMU, replies ignored.
bench_qmp_once() {
	{
		echo '{"execute": "qmp_capabilities"}'
		echo "$1"
		sleep 0.3
	} | timeout 5 nc 127.0.0.1 "$BENCH_SM_QMP" >/dev/null 2>&1
}

# ---- L2 ----

# bench_vb_l2: in L2, for the devices this VM has (virtio-vsock: PCI
# device 0x1053; virtio-balloon: 0x1045, or QEMU's transitional 0x1002),
# their modules (packed apart by bench/run.sh, loaded only here: other
# boots do not pay for them) and their servers.
bench_vb_l2() {
	vl_vsock='' vl_balloon=''
	for vl_d in /sys/bus/pci/devices/*; do
		[ "$(cat "$vl_d/vendor" 2>/dev/null)" = 0x1af4 ] || continue
		case "$(cat "$vl_d/device")" in
		0x1053) vl_vsock=1 ;;
		0x1045 | 0x1002) vl_balloon=1 ;;
		esac
	done
	[ -z "$vl_vsock" ] || bench_vsock_l2
	[ -z "$vl_balloon" ] || bench_balloon_l2
}

# bench_l2_load GROUP: the modules of /lib/modules/bench-GROUP, in order.
bench_l2_load() {
	while read -r ll_m; do
		insmod "/lib/modules/bench-$1/$ll_m.ko" || echo "SKIFF-BENCH-L2: insmod $ll_m failed"
	done <"/lib/modules/bench-$1/order"
}

bench_vsock_l2() {
	bench_l2_load vsock
	wait_for /dev/vsock || { echo "SKIFF-BENCH-L2: no /dev/vsock"; return; }
	vsock-io serve $((BENCH_VSOCK_PORT + 1)) sink &
	vsock-io serve $((BENCH_VSOCK_PORT + 2)) source &
	vsock-io serve $((BENCH_VSOCK_PORT + 3)) echo &
	echo "SKIFF-BENCH-L2: vsock servers on ports $((BENCH_VSOCK_PORT + 1))-$((BENCH_VSOCK_PORT + 3))"
}

bench_balloon_l2() {
	bench_l2_load balloon
	nc -ll -p "$BENCH_BALLOON_PORT" -e /bin/sh -c \
		'. /testbed/lib.sh; . /testbed/scenario.sh; . /testbed/bench-vsock.sh; bench_balloon_serve' &
	echo "SKIFF-BENCH-L2: balloon fill server on port $BENCH_BALLOON_PORT"
}

# bench_balloon_serve: one request of L1 (stdin and stdout are the
# connection): "fill MIB" in; MIB MiB written into a tmpfs and removed,
# then "freed MIB" out, or one line saying what failed.
bench_balloon_serve() {
	read -r bs_w bs_mib || return 0
	case "$bs_w:$bs_mib" in fill:[1-9]*) ;; *) echo "bad request '$bs_w $bs_mib'"; return 0 ;; esac
	case "$bs_mib" in *[!0-9]*) echo "bad size '$bs_mib'"; return 0 ;; esac
	mkdir -p /run/fill && mount -t tmpfs -o "size=$((bs_mib + 16))m" tmpfs /run/fill ||
		{ echo "no tmpfs"; return 0; }
	bs_ok=0
	dd if=/dev/zero of=/run/fill/f bs=1M count="$bs_mib" 2>/dev/null && bs_ok=1
	rm -f /run/fill/f
	umount /run/fill
	if [ "$bs_ok" = 1 ]; then echo "freed $bs_mib"; else echo "dd of $bs_mib MiB failed"; fi
}
