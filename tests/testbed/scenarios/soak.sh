# SPDX-License-Identifier: Apache-2.0
# Soak (issue 12, point 5): one L2 boot per configuration of SOAK_CONFIGS
# (polling off and on, vhost off and on), each with a virtio-net card on
# tap0 and a virtio-blk disk (a sparse image in L1's tmpfs). L2 runs rounds
# until it has loaded its devices SOAK_BOOT_S seconds and moved at least
# SOAK_NET_MIB over the net and SOAK_BLK_MIB over the disk; a round is a
# download and an upload of one chunk (busybox nc, one connection each) and
# one chunk written to a disk region (conv=fsync) and read back with the
# page cache dropped. Every byte is checked by md5 (cheaper than sha256 in
# an emulated CPU; this is about corruption, not forgery): downloads and
# read-backs in L2 against sums it knows, uploads in L1 against the sums L2
# prints. Halfway through, L2 unbinds and rebinds virtio_net (under a
# stream of zeros) and virtio_blk: each driver's remove resets its device
# (status 0, which L2 checks), then the driver renegotiates; L2 sets its
# address again and verifies every disk region written so far.
# From L1: skiff's RSS outside guest RAM, its fds and its threads (io_uring
# workers counted apart: they come and go) when L2 is up, before the load,
# and after it; the end must be within SOAK_RSS_SLACK_KB of the start, with
# the same fds and threads. Fails below SOAK_MIN_MIB each way or
# SOAK_MIN_LOAD_S seconds of load in all. Each transfer is bounded by
# SOAK_XFER_S; a stall fails with what stalled.
# Metrics per configuration C: C_net_mib, C_blk_mib, C_net_mibps and
# C_blk_mibps (MiB/s, timed in L2 over the transfers alone), C_rounds,
# C_load_s, C_rss_kb_{start,end} (outside guest RAM), C_guest_rss_kb_*,
# C_fds_*, C_threads_*, C_iou_workers_*; totals soak_net_mib, soak_blk_mib,
# soak_load_s. Run it with `make soak`. Link-local addresses only.
TIMEOUT=3600
SLOW=1
EXPECT="SKIFF-L2-SOAK plain loaded
SKIFF-L2-SOAK poll loaded
SKIFF-L2-SOAK vhost loaded
SKIFF-L2-SOAK vhostpoll loaded"

SOAK_CONFIGS="plain poll vhost vhostpoll"
SOAK_L1=169.254.30.1
SOAK_L2=169.254.30.2
SOAK_IMG=/tmp/soak.img
SOAK_DISK_MB=512
SOAK_CHUNK_MB=16 # per transfer and per disk region
SOAK_REGIONS=32  # SOAK_DISK_MB / SOAK_CHUNK_MB
SOAK_BOOT_S=160  # load per boot at least: 4 boots, >= 10 min
SOAK_BOOT_MAX_S=720
SOAK_NET_MIB=512 # per boot, down + up
SOAK_BLK_MIB=512 # per boot, written + read back
SOAK_MIN_MIB=2048
SOAK_MIN_LOAD_S=600
SOAK_XFER_S=120 # one chunk, either way; normal is a few seconds
SOAK_SETTLE_S=8 # idle before the end sample: io_uring workers retire after 5 s
SOAK_RSS_SLACK_KB=16384
SOAK_MEM=512M
SOAK_DOWN_PORT=5100 # + the chunk's index
SOAK_UP_PORT=5002
SOAK_SINK_PORT=5003
SOAK_GO_PORT=5998
SOAK_QUIT_PORT=5999

# soak_cfg_args NAME: the devices of a configuration. vhost takes the
# net's queues from the poller, so poll= there is the combination's path.
soak_cfg_args() {
	case "$1" in
	plain) echo "--net tap=tap0 --disk $SOAK_IMG" ;;
	poll) echo "--net tap=tap0,poll=adaptive --disk $SOAK_IMG,poll=adaptive" ;;
	vhost) echo "--net tap=tap0,vhost=on --disk $SOAK_IMG" ;;
	vhostpoll) echo "--net tap=tap0,vhost=on,poll=adaptive --disk $SOAK_IMG,poll=always" ;;
	esac
}

soak_md5() { md5sum | cut -d' ' -f1; }

# soak_random FILE: one chunk of random bytes, whole.
soak_random() {
	dd if=/dev/urandom of="$1" bs=1M count="$SOAK_CHUNK_MB" 2>/dev/null &&
		[ "$(wc -c <"$1")" = $((SOAK_CHUNK_MB * 1048576)) ]
}

# ---- L1 ----

# soak_res PID: "rss_outside_guest_kb guest_rss_kb fds threads iou_workers".
# Guest RAM is the one anonymous mapping of SOAK_MEM: L2 touching it is
# not skiff growing.
soak_res() {
	rss=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status")
	guest=$(awk -v sz=$((${SOAK_MEM%M} * 1024)) '$1 ~ /^[0-9a-f]+-[0-9a-f]+$/ { m = 0 }
		$1 == "Size:" && $2 == sz { m = 1 } m && $1 == "Rss:" { print $2; exit }' "/proc/$1/smaps")
	fds=$(find "/proc/$1/fd" -mindepth 1 -maxdepth 1 | wc -l)
	thr=0 iou=0
	for t in /proc/"$1"/task/*; do
		case "$(cat "$t/comm")" in
		iou-*) iou=$((iou + 1)) ;;
		*) thr=$((thr + 1)) ;;
		esac
	done
	echo "$((rss - ${guest:-0})) ${guest:-0} $fds $thr $iou"
}

# soak_wait LINE SECONDS: waits for L2's console line starting with LINE.
# Returns 1 after SECONDS, 2 if L2 failed, 3 if skiff ended.
soak_wait() {
	sw_i=0
	while [ "$sw_i" -lt "$2" ]; do
		grep -q "^$1" /tmp/l2.log 2>/dev/null && return 0
		grep -q "SKIFF-RESULT: FAIL" /tmp/l2.log 2>/dev/null && return 2
		kill -0 "$SOAK_BPID" 2>/dev/null || return 3
		sleep 1
		sw_i=$((sw_i + 1))
	done
	return 1
}

# soak_signal PORT: one connection to L2's listener (it may not be up yet).
soak_signal() {
	ss_i=0
	while [ "$ss_i" -lt 30 ]; do
		nc -w 5 "$SOAK_L2" "$1" </dev/null >/dev/null 2>&1 && return 0
		sleep 1
		ss_i=$((ss_i + 1))
	done
	return 1
}

# soak_stop: ends a boot that went wrong.
soak_stop() {
	p=$(pidof skiff) && kill "$p" 2>/dev/null
	wait "$SOAK_BPID"
}

# soak_l2_line WORD: the rest of L2's "SKIFF-L2-SOAK CFG WORD ..." line.
soak_l2_line() {
	sed -n "s/^SKIFF-L2-SOAK $SOAK_C $1 //p" /tmp/l2.log | head -n1
}

# soak_boot NAME: one boot of configuration NAME. Sets SOAK_WHY on failure.
soak_boot() {
	SOAK_C=$1
	rm -f /tmp/soak/up.sums
	rm -f "$SOAK_IMG"
	truncate -s "${SOAK_DISK_MB}M" "$SOAK_IMG" || { SOAK_WHY="$SOAK_C: truncate"; return 1; }
	L2_CMDLINE="$SOAK_BASE soak_cfg=$SOAK_C soak_down=$SOAK_DOWN_SUMS"
	echo "soak: $SOAK_C: skiff $(soak_cfg_args "$SOAK_C")"
	# shellcheck disable=SC2046 # the configuration's words
	(skiff_boot_l2 $(soak_cfg_args "$SOAK_C")) &
	SOAK_BPID=$!
	rc=0
	soak_wait "SKIFF-L2-SOAK $SOAK_C ready" 300 || rc=$?
	[ "$rc" = 0 ] || { SOAK_WHY="$SOAK_C: L2 not ready (wait status $rc)"; soak_stop; return 1; }
	pid=$(pidof skiff) || { SOAK_WHY="$SOAK_C: no skiff process"; soak_stop; return 1; }
	r0=$(soak_res "$pid")
	echo "soak: $SOAK_C: start: $r0; threads: $(cat /proc/"$pid"/task/*/comm | sort | uniq -c | tr -s ' \n' ' ')"
	t0=$(now_ns)
	soak_signal "$SOAK_GO_PORT" || { SOAK_WHY="$SOAK_C: L2 never took the go"; soak_stop; return 1; }
	soak_wait "SKIFF-L2-SOAK $SOAK_C loaded" $((SOAK_BOOT_MAX_S + 120)) || rc=$?
	if [ "$rc" != 0 ]; then
		case "$rc" in
		1) SOAK_WHY="$SOAK_C: no end of load after $((SOAK_BOOT_MAX_S + 120)) s (a stall)" ;;
		2) SOAK_WHY="$SOAK_C: L2 failed: $(sed -n 's/.*SKIFF-RESULT: FAIL [^ ]* //p' /tmp/l2.log | head -n1)" ;;
		*) SOAK_WHY="$SOAK_C: skiff ended in the load: $(tail -n 2 /tmp/vmm.err | tr '\n' ' ')" ;;
		esac
		soak_stop
		return 1
	fi
	load_ms=$((($(now_ns) - t0) / 1000000))
	sleep "$SOAK_SETTLE_S"
	r1=$(soak_res "$pid")
	echo "soak: $SOAK_C: end:   $r1; threads: $(cat /proc/"$pid"/task/*/comm | sort | uniq -c | tr -s ' \n' ' ')"
	soak_signal "$SOAK_QUIT_PORT" || echo "soak: $SOAK_C: L2 did not take the quit"
	wait "$SOAK_BPID"
	VMM_RC=$(cat /tmp/vmm.rc 2>/dev/null || echo 255)
	[ "$VMM_RC" = 0 ] || { SOAK_WHY="$SOAK_C: skiff exited $VMM_RC"; return 1; }

	i=1
	for k in rss_kb guest_rss_kb fds threads iou_workers; do
		metric "${SOAK_C}_${k}_start" "$(echo "$r0" | cut -d' ' -f$i)"
		metric "${SOAK_C}_${k}_end" "$(echo "$r1" | cut -d' ' -f$i)"
		i=$((i + 1))
	done
	# shellcheck disable=SC2086 # five numbers each
	set -- $r0 $r1
	[ $(($6 - $1)) -le "$SOAK_RSS_SLACK_KB" ] ||
		{ SOAK_WHY="$SOAK_C: RSS outside guest RAM grew $1 -> $6 kB"; return 1; }
	[ "$8" = "$3" ] || { SOAK_WHY="$SOAK_C: fds $3 -> $8"; return 1; }
	[ "$9" = "$4" ] || { SOAK_WHY="$SOAK_C: threads $4 -> $9"; return 1; }

	for w in "reset-net ok" "reset-blk ok"; do
		grep -q "^SKIFF-L2-SOAK $SOAK_C $w" /tmp/l2.log || { SOAK_WHY="$SOAK_C: no '$w'"; return 1; }
	done
	# Uploads: L1's sums, one per connection, against the chunks L2 sent.
	sed -n "s/^SKIFF-L2-SOAK $SOAK_C up md5=//p" /tmp/l2.log | sort >/tmp/soak/up.want
	cut -d' ' -f1 /tmp/soak/up.sums 2>/dev/null | sort >/tmp/soak/up.got
	n=$(wc -l </tmp/soak/up.want)
	[ "$n" -gt 0 ] && cmp -s /tmp/soak/up.want /tmp/soak/up.got ||
		{ SOAK_WHY="$SOAK_C: uploads: $n sent, $(wc -l </tmp/soak/up.got) received, sums differ"; return 1; }

	# shellcheck disable=SC2046 # "net_mib=N blk_mib=N"
	set -- $(soak_l2_line loaded)
	net=${1#net_mib=} blk=${2#blk_mib=}
	metric "${SOAK_C}_load_s" $((load_ms / 1000))
	echo "soak: $SOAK_C: $net MiB net, $blk MiB disk, $n uploads checked, load $((load_ms / 1000)) s"
	SOAK_NET=$((SOAK_NET + net)) SOAK_BLK=$((SOAK_BLK + blk)) SOAK_MS=$((SOAK_MS + load_ms))
}

l1() {
	tap_up "$SOAK_L1" || { fail "tap0 setup failed"; return; }
	mkdir -p /tmp/soak
	SOAK_DOWN_SUMS="" pids=""
	for k in 0 1 2 3; do
		soak_random "/tmp/soak/d$k" || { fail "cannot make chunk $k"; return; }
		s=$(soak_md5 <"/tmp/soak/d$k")
		SOAK_DOWN_SUMS="$SOAK_DOWN_SUMS${SOAK_DOWN_SUMS:+,}$s"
		# One chunk per connection; -ll: for every connection.
		nc -ll -p $((SOAK_DOWN_PORT + k)) -e cat "/tmp/soak/d$k" &
		pids="$pids $!"
	done
	nc -ll -p "$SOAK_UP_PORT" -e sh -c 'md5sum >>/tmp/soak/up.sums' &
	pids="$pids $!"
	nc -ll -p "$SOAK_SINK_PORT" -e sh -c 'cat >/dev/null' &
	pids="$pids $!"
	SOAK_BASE=$L2_CMDLINE
	L2_MEM=$SOAK_MEM
	L2_TIMEOUT=$((SOAK_BOOT_MAX_S + 600))
	SOAK_NET=0 SOAK_BLK=0 SOAK_MS=0 SOAK_WHY=""
	for c in $SOAK_CONFIGS; do
		soak_boot "$c" || break
	done
	# shellcheck disable=SC2086 # a list of pids
	kill $pids 2>/dev/null
	rm -f "$SOAK_IMG"
	[ -z "$SOAK_WHY" ] || { fail "$SOAK_WHY"; return; }
	metric soak_net_mib "$SOAK_NET"
	metric soak_blk_mib "$SOAK_BLK"
	metric soak_load_s $((SOAK_MS / 1000))
	echo "soak: in all $SOAK_NET MiB net, $SOAK_BLK MiB disk, $((SOAK_MS / 1000)) s of load"
	[ "$SOAK_NET" -ge "$SOAK_MIN_MIB" ] || { fail "only $SOAK_NET MiB over the net"; return; }
	[ "$SOAK_BLK" -ge "$SOAK_MIN_MIB" ] || { fail "only $SOAK_BLK MiB over the disk"; return; }
	[ $((SOAK_MS / 1000)) -ge "$SOAK_MIN_LOAD_S" ] ||
		{ fail "only $((SOAK_MS / 1000)) s of load"; return; }
	pass
}

# ---- L2 ----

# Centiseconds of uptime.
soak_cs() { awk '{ printf "%d\n", $1 * 100 }' /proc/uptime; }

soak_say() { echo "SKIFF-L2-SOAK $SOAK_C $*"; }

soak_net_up() {
	wait_for /sys/class/net/eth0 && ip addr add "$SOAK_L2/24" dev eth0 && ip link set eth0 up
}

# soak_virtio DEVICE-ID: the virtio device (virtioN) of that type.
soak_virtio() {
	for d in /sys/bus/virtio/devices/*; do
		[ "$(cat "$d/device")" = "$1" ] && echo "${d##*/}" && return 0
	done
	return 1
}

# soak_rebind DEVICE-ID DRIVER: unbind and bind DRIVER; the driver's remove
# resets the device, after which the virtio core sets ACKNOWLEDGE alone.
soak_rebind() {
	dev=$(soak_virtio "$1") || { fail "$SOAK_C: no virtio device $1"; return 1; }
	echo "$dev" >"/sys/bus/virtio/drivers/$2/unbind" || { fail "$SOAK_C: unbind $2"; return 1; }
	st=$(cat "/sys/bus/virtio/devices/$dev/status")
	[ "$st" = 0x00000001 ] || { fail "$SOAK_C: $2: status $st after remove, not reset"; return 1; }
	echo "$dev" >"/sys/bus/virtio/drivers/$2/bind" || { fail "$SOAK_C: bind $2"; return 1; }
}

# soak_down K: downloads L1's chunk K and checks it.
soak_down() {
	want=$(echo "$SOAK_DOWN" | cut -d, -f$(($1 + 1)))
	got=$({
		timeout "$SOAK_XFER_S" nc "$SOAK_L1" $((SOAK_DOWN_PORT + $1)) </dev/null
		echo $? >/tmp/nc.rc
	} | soak_md5)
	rc=$(cat /tmp/nc.rc)
	[ "$rc" != 143 ] || { fail "$SOAK_C round $SOAK_R: download stalled (${SOAK_XFER_S} s)"; return 1; }
	[ "$got" = "$want" ] || { fail "$SOAK_C round $SOAK_R: download corrupted (md5 $got, not $want; nc $rc)"; return 1; }
}

# soak_up K: uploads L2's chunk K; L1 checks it.
soak_up() {
	rc=0
	timeout "$SOAK_XFER_S" nc "$SOAK_L1" "$SOAK_UP_PORT" <"/tmp/u$1" >/dev/null || rc=$?
	[ "$rc" = 0 ] || { fail "$SOAK_C round $SOAK_R: upload ended with $rc (143: stalled ${SOAK_XFER_S} s)"; return 1; }
	soak_say "up md5=$(sed -n "$(($1 + 1))p" /tmp/usums)"
}

# soak_region_chunk ROUND: the chunk a round writes (a region gets another
# chunk on each lap, so a lost write shows).
soak_region_chunk() { echo $((($1 + $1 / SOAK_REGIONS) % 4)); }

# soak_check REGION K: the region read back from the device holds chunk K.
soak_check() {
	echo 3 >/proc/sys/vm/drop_caches
	got=$({
		timeout "$SOAK_XFER_S" dd if=/dev/vda bs=1M skip=$(($1 * SOAK_CHUNK_MB)) count="$SOAK_CHUNK_MB" 2>/dev/null
		echo $? >/tmp/dd.rc
	} | soak_md5)
	rc=$(cat /tmp/dd.rc)
	want=$(sed -n "$(($2 + 1))p" /tmp/usums)
	[ "$rc" != 143 ] || { fail "$SOAK_C round $SOAK_R: reading region $1 stalled"; return 1; }
	[ "$got" = "$want" ] || { fail "$SOAK_C round $SOAK_R: region $1 reads md5 $got, not chunk $2's $want (dd $rc)"; return 1; }
}

# soak_disk ROUND: writes the round's region with fsync, reads it back.
soak_disk() {
	g=$(($1 % SOAK_REGIONS))
	k=$(soak_region_chunk "$1")
	rc=0
	timeout "$SOAK_XFER_S" dd if="/tmp/u$k" of=/dev/vda bs=1M seek=$((g * SOAK_CHUNK_MB)) \
		conv=notrunc,fsync 2>/dev/null || rc=$?
	[ "$rc" = 0 ] || { fail "$SOAK_C round $1: writing region $g ended with $rc"; return 1; }
	soak_check "$g" "$k"
}

# soak_reset: both devices reset and renegotiated; a stream of zeros runs
# while the net one goes; then every region written so far is checked.
soak_reset() {
	timeout 15 nc "$SOAK_L1" "$SOAK_SINK_PORT" </dev/zero >/dev/null 2>&1 &
	bg=$!
	sleep 2
	soak_rebind 0x0001 virtio_net || return 1
	soak_net_up || { fail "$SOAK_C: eth0 after rebind"; return 1; }
	kill "$bg" 2>/dev/null
	wait "$bg"
	ping -c 3 -i 0.2 -W 5 "$SOAK_L1" >/dev/null 2>&1 || { fail "$SOAK_C: no ping after the net reset"; return 1; }
	soak_say "reset-net ok"
	soak_rebind 0x0002 virtio_blk || return 1
	wait_for /dev/vda && [ -b /dev/vda ] || { fail "$SOAK_C: no /dev/vda after rebind"; return 1; }
	c0=$(soak_cs)
	g=0
	while [ "$g" -lt "$SOAK_R" ] && [ "$g" -lt "$SOAK_REGIONS" ]; do
		# The last round that wrote region g.
		last=$((g + (SOAK_R - 1 - g) / SOAK_REGIONS * SOAK_REGIONS))
		soak_check "$g" "$(soak_region_chunk "$last")" || return 1
		SOAK_BLK=$((SOAK_BLK + SOAK_CHUNK_MB))
		g=$((g + 1))
	done
	blk_cs=$((blk_cs + $(soak_cs) - c0))
	soak_say "reset-blk ok ($g regions checked)"
}

l2() {
	SOAK_C=$(sed -n 's/.*soak_cfg=\([a-z]*\).*/\1/p' /proc/cmdline)
	SOAK_DOWN=$(sed -n 's/.*soak_down=\([0-9a-f,]*\).*/\1/p' /proc/cmdline)
	wait_for /dev/vda || { fail "$SOAK_C: no /dev/vda"; return; }
	soak_net_up || { fail "$SOAK_C: eth0 setup failed"; return; }
	: >/tmp/usums
	for k in 0 1 2 3; do
		soak_random "/tmp/u$k" || { fail "$SOAK_C: cannot make chunk $k"; return; }
		soak_md5 <"/tmp/u$k" >>/tmp/usums
	done
	ping -c 3 -i 0.2 -W 5 "$SOAK_L1" >/dev/null 2>&1 || { fail "$SOAK_C: no ping"; return; }
	soak_say ready
	timeout 300 nc -l -p "$SOAK_GO_PORT" </dev/null >/dev/null
	t0=$(soak_cs)
	SOAK_R=0 SOAK_NET=0 SOAK_BLK=0 net_cs=0 blk_cs=0 reset=0
	while :; do
		el=$((($(soak_cs) - t0) / 100))
		[ "$el" -ge "$SOAK_BOOT_S" ] && [ "$SOAK_NET" -ge "$SOAK_NET_MIB" ] &&
			[ "$SOAK_BLK" -ge "$SOAK_BLK_MIB" ] && [ "$reset" = 1 ] && break
		[ "$el" -lt "$SOAK_BOOT_MAX_S" ] ||
			{ fail "$SOAK_C: ${SOAK_BOOT_MAX_S} s and only $SOAK_NET MiB net, $SOAK_BLK MiB disk"; return; }
		if [ "$reset" = 0 ] && [ "$el" -ge $((SOAK_BOOT_S / 2)) ]; then
			soak_reset || return
			reset=1
		fi
		k=$((SOAK_R % 4))
		c0=$(soak_cs)
		soak_down "$k" || return
		soak_up "$k" || return
		c1=$(soak_cs)
		soak_disk "$SOAK_R" || return
		c2=$(soak_cs)
		net_cs=$((net_cs + c1 - c0)) blk_cs=$((blk_cs + c2 - c1))
		SOAK_NET=$((SOAK_NET + 2 * SOAK_CHUNK_MB)) SOAK_BLK=$((SOAK_BLK + 2 * SOAK_CHUNK_MB))
		SOAK_R=$((SOAK_R + 1))
	done
	metric "${SOAK_C}_rounds" "$SOAK_R"
	metric "${SOAK_C}_net_mib" "$SOAK_NET"
	metric "${SOAK_C}_blk_mib" "$SOAK_BLK"
	metric "${SOAK_C}_net_mibps" "$(awk "BEGIN { printf \"%.1f\", $SOAK_NET * 100 / ($net_cs + 1) }")"
	metric "${SOAK_C}_blk_mibps" "$(awk "BEGIN { printf \"%.1f\", $SOAK_BLK * 100 / ($blk_cs + 1) }")"
	soak_say "loaded net_mib=$SOAK_NET blk_mib=$SOAK_BLK"
	timeout 300 nc -l -p "$SOAK_QUIT_PORT" </dev/null >/dev/null
}
