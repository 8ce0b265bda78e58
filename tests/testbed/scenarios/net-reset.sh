# SPDX-License-Identifier: Apache-2.0
# virtio-net reset under traffic: while data streams both ways (L2 sends
# zeros to an echo server in L1), L2 unbinds and rebinds the virtio_net
# driver three times (each a device reset, then renegotiation); the new
# eth0 must work again (ping) and skiff must exit cleanly. Notification
# coalescing is on before every round (ethtool -C), so each reset lands
# with interrupts held.
TIMEOUT=900
SLOW=1
EXPECT="SKIFF-L2: init
SKIFF-L2-MARK net-reset-done"

NET_L1=169.254.10.1
NET_L2=169.254.10.2

l1() {
	tap_up "$NET_L1" || { fail "tap0 setup failed"; return; }
	# A persistent echo server: what L2 sends comes back (both queues).
	nc -ll -p 5003 -e cat &
	echo_pid=$!
	rc=0
	skiff_boot_l2 --net tap=tap0 || rc=$?
	kill "$echo_pid" 2>/dev/null
	[ "$rc" = 0 ] || { fail "skiff exited $VMM_RC"; return; }
	l2_saw "SKIFF-L2-MARK net-reset-done" || { fail "L2 did not finish its checks"; return; }
	pass
}

net_reset_up() {
	ip addr add "$NET_L2/24" dev eth0 && ip link set eth0 up &&
		ethtool -C eth0 rx-usecs 300 rx-frames 32 tx-usecs 300 tx-frames 32
}

net_reset_ping() {
	ping -c 3 -i 0.2 -W 5 "$NET_L1" >/tmp/ping.txt 2>&1
	cat /tmp/ping.txt
	grep -q " 0% packet loss" /tmp/ping.txt
}

l2() {
	net_reset_up || { fail "eth0 setup failed"; return; }
	net_reset_ping || { fail "ping before any reset lost packets"; return; }
	dev=
	for d in /sys/bus/virtio/devices/*; do
		[ "$(cat "$d/device")" = 0x0001 ] && dev=${d##*/}
	done
	[ -n "$dev" ] || { fail "no virtio-net device in /sys"; return; }
	drv=/sys/bus/virtio/drivers/virtio_net
	for round in 1 2 3; do
		# Bounded: the connection dies with the interface.
		timeout 10 nc "$NET_L1" 5003 </dev/zero >/dev/null 2>&1 &
		pid=$!
		sleep 2
		echo "$dev" >"$drv/unbind" || { fail "unbind $round failed"; return; }
		echo "$dev" >"$drv/bind" || { fail "bind $round failed"; return; }
		net_reset_up || { fail "eth0 setup after rebind $round failed"; return; }
		kill "$pid" 2>/dev/null
		wait "$pid"
		net_reset_ping || { fail "ping after rebind $round lost packets"; return; }
		echo "net-reset: round $round done"
	done
	echo "SKIFF-L2-MARK net-reset-done"
}
