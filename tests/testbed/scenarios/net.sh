# SPDX-License-Identifier: Apache-2.0
# virtio-net over a tap: L1 makes tap0 (169.254.10.1/24) and boots L2 with
# --net tap=tap0; L2 (169.254.10.2/24) checks the negotiated features and
# the default MAC, pings L1, runs iperf3 both ways, and moves NET_XFER_MB
# MiB each way with busybox nc, checked by sha256 on both ends. The nc
# transfers run with notification coalescing on (ethtool -C: rx-usecs,
# tx-usecs and their frame counts), so they also check that held
# notifications lose nothing; skiff's counters must show it held some.
# Metrics: ping_{min,avg,max}_ms, ping_loss_pct, throughput_up_mbps (iperf3
# L2 to L1: the guest's TX), throughput_down_mbps (iperf3 L1 to L2: the
# guest's RX), throughput_nc_{down,up}_mbps (the nc transfers, timed in L2).
# Link-local addresses only, and only inside L1/L2.
TIMEOUT=150
EXPECT="SKIFF-L2: init
SKIFF-L2-MARK net-done"

NET_L1=169.254.10.1
NET_L2=169.254.10.2
NET_XFER_MB=32
NET_IPERF_S=4
NET_MAC=02:73:6b:69:66:00 # skiff's default for the first --net

# The value L2 reported as "SKIFF-L2-MARK KEY=VALUE" (last boot's log).
net_l2_value() {
	sed -n "s/^SKIFF-L2-MARK $1=//p" /tmp/l2.log | head -n1
}

net_sha() {
	sha256sum <"$1" | cut -d' ' -f1
}

# net_random FILE: NET_XFER_MB MiB of random bytes (busybox head has no
# size suffixes).
net_random() {
	dd if=/dev/urandom of="$1" bs=1M count="$NET_XFER_MB" 2>/dev/null &&
		[ "$(wc -c <"$1")" = $((NET_XFER_MB * 1048576)) ]
}

l1() {
	tap_up "$NET_L1" || { fail "tap0 setup failed"; return; }
	net_random /tmp/down.bin || { fail "cannot make /tmp/down.bin"; return; }
	down_sha=$(net_sha /tmp/down.bin)
	# Servers for L2: iperf3 for both directions, one nc connection each
	# way. nc -e: the data's end closes the connection (busybox nc
	# would otherwise stop at its own stdin's EOF).
	iperf3 -s >/tmp/iperf3-server.log 2>&1 &
	iperf_pid=$!
	nc -l -p 5001 -e cat /tmp/down.bin &
	down_pid=$!
	nc -l -p 5002 -e sh -c 'cat >/tmp/up.bin' &
	up_pid=$!

	rc=0
	skiff_boot_l2 --net tap=tap0 --stats-json /tmp/net-stats.json || rc=$?
	kill "$iperf_pid" "$down_pid" "$up_pid" 2>/dev/null
	echo "net: tap0 counters in L1:"
	ip -s link show tap0
	[ "$rc" = 0 ] || { fail "skiff exited $VMM_RC"; return; }
	l2_saw "SKIFF-L2-MARK net-done" || { fail "L2 did not finish its checks"; return; }
	[ "$(net_l2_value mac)" = "$NET_MAC" ] ||
		{ fail "L2's MAC is '$(net_l2_value mac)', not $NET_MAC"; return; }
	[ "$(net_l2_value down_sha)" = "$down_sha" ] ||
		{ fail "download corrupted: L2 got $(net_l2_value down_sha)"; return; }
	up_size=$(wc -c </tmp/up.bin 2>/dev/null)
	up_sha=$(net_sha /tmp/up.bin 2>/dev/null)
	if [ "$up_size" != $((NET_XFER_MB * 1048576)) ] ||
		[ "$(net_l2_value up_sha)" != "$up_sha" ]; then
		fail "upload corrupted: L1 got ${up_size:-no} bytes, sha ${up_sha:-none}"
		return
	fi
	for d in rx tx; do
		held=$(sed -n "s/^ *\"virtio-net0 $d notifications held\": \([0-9]*\).*/\1/p" \
			/tmp/net-stats.json | head -n1)
		echo "net: $d notifications held: ${held:-none}"
		[ "${held:-0}" -gt 0 ] || { fail "coalescing held no $d notification"; return; }
	done
	pass
}

# ---- L2 ----

# Receiver goodput of an iperf3 -J report, in Mbit/s.
net_iperf_mbps() {
	awk '/"sum_received"/ { f = 1 }
	f && /"bits_per_second"/ { v = $2; sub(/,.*/, "", v); printf "%.1f\n", v / 1e6; exit }' "$1"
}

# The driver's feature bits, as /sys shows them: one character per bit.
net_features() {
	for d in /sys/bus/virtio/devices/*; do
		[ "$(cat "$d/device")" = 0x0001 ] && cat "$d/features" && return
	done
}

# net_has_bits FEATURES BIT...: every BIT is 1 in the string.
net_has_bits() {
	f=$1
	shift
	for b in "$@"; do
		[ "$(echo "$f" | cut -c$((b + 1)))" = 1 ] || return 1
	done
}

net_ping() {
	ping -c 10 -i 0.2 -W 5 "$NET_L1" >/tmp/ping.txt 2>&1
	cat /tmp/ping.txt
	loss=$(sed -n 's/.* \([0-9.]*\)% packet loss.*/\1/p' /tmp/ping.txt)
	rtt=$(sed -n 's#.*min/avg/max = \([0-9.]*\)/\([0-9.]*\)/\([0-9.]*\).*#\1 \2 \3#p' /tmp/ping.txt)
	[ -n "$loss" ] && metric ping_loss_pct "$loss"
	[ -n "$rtt" ] || return 1
	# shellcheck disable=SC2086 # three numbers
	set -- $rtt
	metric ping_min_ms "$1"
	metric ping_avg_ms "$2"
	metric ping_max_ms "$3"
	[ "$loss" = 0 ]
}

# net_rate T0 T1: Mbit/s for NET_XFER_MB MiB between two uptimes.
net_rate() {
	awk "BEGIN { d = $2 - $1; if (d < 0.01) d = 0.01;
		printf \"%.1f\n\", $NET_XFER_MB * 8.388608 / d }"
}

# net_iperf NAME [ARGS...]: a TCP stream for NET_IPERF_S seconds.
net_iperf() {
	name=$1
	shift
	iperf3 -c "$NET_L1" -t "$NET_IPERF_S" -J "$@" >"/tmp/$name.json" 2>&1
	mbps=$(net_iperf_mbps "/tmp/$name.json")
	[ -n "$mbps" ] || { tail -n 20 "/tmp/$name.json"; return 1; }
	metric "throughput_${name}_mbps" "$mbps"
}

l2() {
	[ -e /sys/class/net/eth0 ] || { fail "L2 has no eth0"; return; }
	echo "SKIFF-L2-MARK mac=$(cat /sys/class/net/eth0/address)"
	feat=$(net_features)
	echo "SKIFF-L2-MARK features=$feat"
	# CSUM, GUEST_CSUM, MAC, GUEST_TSO4/6, HOST_TSO4/6, MRG_RXBUF, STATUS,
	# CTRL_VQ, RING_EVENT_IDX, VERSION_1, NOTF_COAL.
	net_has_bits "$feat" 0 1 5 7 8 11 12 15 16 17 29 32 53 ||
		{ fail "features not negotiated: $feat"; return; }
	if ! ip addr add "$NET_L2/24" dev eth0 || ! ip link set eth0 up; then
		fail "eth0 setup failed"
		return
	fi
	net_ping || { fail "ping failed"; return; }
	net_iperf up || { fail "iperf3 L2 to L1 failed"; return; }
	net_iperf down -R || { fail "iperf3 L1 to L2 failed"; return; }
	# tx-frames must stay non-zero: Linux 6.1 reads 0 as "TX NAPI off",
	# which it cannot switch while the link is up.
	ethtool -C eth0 rx-usecs 200 rx-frames 16 tx-usecs 200 tx-frames 16 ||
		{ fail "ethtool -C refused the coalescing parameters"; return; }
	ethtool -c eth0 | tee /tmp/coal.txt
	grep -q "^rx-usecs: *200" /tmp/coal.txt || { fail "ethtool -c: rx-usecs is not 200"; return; }
	t0=$(cut -d' ' -f1 /proc/uptime)
	nc "$NET_L1" 5001 </dev/null >/tmp/down.bin
	t1=$(cut -d' ' -f1 /proc/uptime)
	echo "net: downloaded $(wc -c </tmp/down.bin) bytes"
	echo "SKIFF-L2-MARK down_sha=$(net_sha /tmp/down.bin)"
	rm -f /tmp/down.bin
	net_random /tmp/up.bin || { fail "cannot make /tmp/up.bin"; return; }
	echo "SKIFF-L2-MARK up_sha=$(net_sha /tmp/up.bin)"
	t2=$(cut -d' ' -f1 /proc/uptime)
	nc "$NET_L1" 5002 </tmp/up.bin
	t3=$(cut -d' ' -f1 /proc/uptime)
	echo "net: nc ${NET_XFER_MB} MiB down in $(awk "BEGIN { print $t1 - $t0 }") s," \
		"up in $(awk "BEGIN { print $t3 - $t2 }") s"
	metric throughput_nc_down_mbps "$(net_rate "$t0" "$t1")"
	metric throughput_nc_up_mbps "$(net_rate "$t2" "$t3")"
	echo "SKIFF-L2-MARK net-done"
}
