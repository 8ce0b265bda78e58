# SPDX-License-Identifier: Apache-2.0
# Host→guest TCP with vhost=on against the built-in path, in one L1 boot,
# and the guest's received packets per MB: a tap without offloads hands the
# guest MTU-sized frames (the host segments and checksums every one: ~730
# per MB, which made vhost receive 0.4x kvmtool's), with them GSO frames
# (~20 per MB). Asserted: data moved both ways, and vhost receives no more
# packets per MB than twice the built-in path. Throughputs are reported,
# never asserted. VR_ROUNDS=N repeats the pair (default 1).
TIMEOUT=120
EXPECT="SKIFF-L2: init"

VR_L1=169.254.12.1
VR_L2=169.254.12.2

vr_boot() { # NAME SKIFF-ARGS...
	name=$1
	shift
	killall iperf3 2>/dev/null
	iperf3 -s >"/tmp/iperf3-$name.log" 2>&1 &
	skiff_boot_l2 "$@" || { echo "vhost-rx $name: skiff exited $VMM_RC"; return 1; }
	for k in down_mbps up_mbps down_pkts_per_mb; do
		v=$(sed -n "s/^SKIFF-L2-MARK $k=//p" /tmp/l2.log | head -n1)
		echo "vhost-rx $name: $k ${v:-none}"
		[ -n "$v" ] && [ "$v" != 0 ] || return 1
		metric "vr_${name}_$k" "$v"
		eval "VR_${name}_$k=$v"
	done
}

l1() {
	tap_up "$VR_L1" || { fail "tap0 setup failed"; return; }
	ok=1
	r=0
	while [ "$r" -lt "${VR_ROUNDS:-1}" ]; do
		r=$((r + 1))
		vr_boot "vhost$r" --net tap=tap0,vhost=on || ok=0
		vr_boot "builtin$r" --net tap=tap0 || ok=0
	done
	killall iperf3 2>/dev/null
	[ "$ok" = 1 ] || { fail "a boot moved no data"; return; }
	[ "$VR_vhost1_down_pkts_per_mb" -le $((2 * VR_builtin1_down_pkts_per_mb)) ] ||
		{ fail "vhost receives MTU-sized frames: the tap has no offloads"; return; }
	pass
}

l2() {
	ip addr add "$VR_L2/24" dev eth0 && ip link set eth0 up || { echo "SKIFF-L2-MARK eth0 failed"; return; }
	ping -c 3 -i 0.2 -W 5 "$VR_L1" >/dev/null 2>&1
	p0=$(cat /sys/class/net/eth0/statistics/rx_packets)
	iperf3 -c "$VR_L1" -R -t 4 -J >/tmp/down.json 2>&1
	p1=$(cat /sys/class/net/eth0/statistics/rx_packets)
	iperf3 -c "$VR_L1" -t 4 -J >/tmp/up.json 2>&1
	for d in down up; do
		bps=$(awk '/"sum_received"/ { f = 1 } f && /"bits_per_second"/ { v = $2; sub(/,.*/, "", v); printf "%.0f\n", v / 1e6; exit }' "/tmp/$d.json")
		echo "SKIFF-L2-MARK ${d}_mbps=${bps:-0}"
	done
	bytes=$(awk '/"sum_received"/ { f = 1 } f && /"bytes"/ { v = $2; sub(/,.*/, "", v); print v; exit }' /tmp/down.json)
	mb=$((${bytes:-0} / 1048576))
	[ "$mb" -gt 0 ] && echo "SKIFF-L2-MARK down_pkts_per_mb=$(((p1 - p0) / mb))"
}
