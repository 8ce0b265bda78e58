# SPDX-License-Identifier: Apache-2.0
# virtio-net with --no-ioeventfd: queue kicks trap to the vCPU thread, so
# TX runs there while RX runs on the I/O thread. L2 pings L1 and runs
# iperf3 both ways (metrics as in net.sh, with a _trap suffix), then once
# more with transmit coalescing on: the vCPU thread arms its timer, under
# the vCPU's seccomp filter.
TIMEOUT=900
SLOW=1
EXPECT="SKIFF-L2: init
SKIFF-L2-MARK net-trap-done"

NET_L1=169.254.10.1
NET_L2=169.254.10.2

l1() {
	tap_up "$NET_L1" || { fail "tap0 setup failed"; return; }
	iperf3 -s >/tmp/iperf3-server.log 2>&1 &
	iperf_pid=$!
	rc=0
	skiff_boot_l2 --no-ioeventfd --net tap=tap0 || rc=$?
	kill "$iperf_pid" 2>/dev/null
	[ "$rc" = 0 ] || { fail "skiff exited $VMM_RC"; return; }
	l2_saw "SKIFF-L2-MARK net-trap-done" || { fail "L2 did not finish its checks"; return; }
	pass
}

# Receiver goodput of an iperf3 -J report, in Mbit/s.
net_trap_mbps() {
	awk '/"sum_received"/ { f = 1 }
	f && /"bits_per_second"/ { v = $2; sub(/,.*/, "", v); printf "%.1f\n", v / 1e6; exit }' "$1"
}

l2() {
	if ! ip addr add "$NET_L2/24" dev eth0 || ! ip link set eth0 up; then
		fail "eth0 setup failed"
		return
	fi
	ping -c 10 -i 0.2 -W 5 "$NET_L1" >/tmp/ping.txt 2>&1
	cat /tmp/ping.txt
	grep -q " 0% packet loss" /tmp/ping.txt || { fail "ping lost packets"; return; }
	avg=$(sed -n 's#.*min/avg/max = [0-9.]*/\([0-9.]*\)/.*#\1#p' /tmp/ping.txt)
	metric ping_avg_ms_trap "$avg"
	for dir in up down coal; do
		flag=
		[ "$dir" = down ] && flag=-R
		if [ "$dir" = coal ] && ! ethtool -C eth0 tx-usecs 500 tx-frames 32; then
			fail "ethtool -C refused transmit coalescing"
			return
		fi
		iperf3 -c "$NET_L1" -t 3 -J $flag >"/tmp/$dir.json" 2>&1
		mbps=$(net_trap_mbps "/tmp/$dir.json")
		[ -n "$mbps" ] || { tail -n 20 "/tmp/$dir.json"; fail "iperf3 $dir failed"; return; }
		metric "throughput_${dir}_mbps_trap" "$mbps"
	done
	echo "SKIFF-L2-MARK net-trap-done"
}
