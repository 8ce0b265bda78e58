# SPDX-License-Identifier: Apache-2.0
# virtio-net multiqueue: L1 makes tap0 multi_queue and boots L2 with
# --cpus 2 and no queues= (so a pair per vCPU), once with the built-in data
# path and once with vhost=on. L2 sees MQ and CTRL_VQ negotiated and two
# queue pairs (/sys/class/net/eth0/queues/rx-0,1 and tx-0,1), then runs two
# iperf3 streams at once to two servers in L1, pinned to CPU 0 and CPU 1
# (-A): the driver's XPS sends CPU i's packets on tx i, and the tap steers
# each flow's replies to the queue it came from, so both pairs carry
# traffic both ways. Proof, per pair: L2's interrupts per queue
# (virtioN-input.P, virtioN-output.P in /proc/interrupts), and, with the
# built-in path, skiff's --stats (q2 pushed: rx1, q3 popped: tx1; vhost
# moves the packets itself, so its rings' counters stay at 0 there).
# Then L2 unbinds and rebinds the driver (a device reset with both pairs
# enabled: skiff detaches tap queue 1 on the vCPU thread, under seccomp,
# and vhost gives back all four rings; the new driver enables the pair
# again on the control queue), and a stream pinned to CPU 1 must again
# interrupt on input.1 and output.1.
# Metrics: mq_{user,vhost}_{in,out}{0,1}_irqs, mq_{user,vhost}_mbps (the
# two streams' sum), mq_user_q{0,1,2,3}_{pushed,popped}.
TIMEOUT=150
EXPECT="SKIFF-L2: init
SKIFF-L2-MARK mq-done"

MQ_L1=169.254.14.1
MQ_L2=169.254.14.2
MQ_IPERF_S=3

# The value L2 reported as "SKIFF-L2-MARK KEY=VALUE" (last boot's log).
mq_l2_value() {
	sed -n "s/^SKIFF-L2-MARK $1=//p" /tmp/l2.log | head -n1
}

# mq_stat NAME: skiff's --stats counter "virtio-net0 NAME" of the last boot.
mq_stat() {
	sed -n "s/^ *virtio-net0 $1  *\([0-9][0-9]*\)$/\1/p" /tmp/vmm.err /tmp/l2.log | head -n1
}

# mq_boot MODE SKIFF-NET-SPEC: one boot; checks what L2 reported.
mq_boot() {
	mode=$1
	killall iperf3 2>/dev/null
	iperf3 -s -p 5201 >/tmp/iperf3-a.log 2>&1 &
	iperf3 -s -p 5202 >/tmp/iperf3-b.log 2>&1 &
	L2_CMDLINE="console=ttyS0 quiet panic=-1 skiff_mq=$mode"
	skiff_boot_l2 --cpus 2 --stats --net "$2" || { echo "net-mq $mode: skiff exited $VMM_RC"; return 1; }
	killall iperf3 2>/dev/null
	l2_saw "SKIFF-L2-MARK mq-done" || { echo "net-mq $mode: L2 did not finish"; return 1; }
	bad=$(mq_l2_value bad)
	[ -z "$bad" ] || { echo "net-mq $mode: L2 says: $bad"; return 1; }
	for k in in0 out0 in1 out1; do
		v=$(mq_l2_value "irq_$k")
		echo "net-mq $mode: L2 interrupts on $k: ${v:-none}"
		metric "mq_${mode}_${k}_irqs" "${v:-0}"
		[ "${v:-0}" -gt 0 ] || { echo "net-mq $mode: no interrupts on $k"; return 1; }
	done
	metric "mq_${mode}_mbps" "$(mq_l2_value mbps)"
	ok=$(mq_stat "ctrl ok")
	[ "${ok:-0}" -ge 1 ] || { echo "net-mq $mode: no control command acked (ctrl ok ${ok:-none})"; return 1; }
	[ "$mode" = user ] || return 0
	for q in 0 1 2 3; do
		for c in pushed popped; do
			v=$(mq_stat "q$q $c")
			metric "mq_user_q${q}_$c" "${v:-0}"
			eval "MQ_q${q}_$c=${v:-0}"
		done
	done
	# shellcheck disable=SC2154 # set by the eval above
	if [ "$MQ_q2_pushed" -eq 0 ] || [ "$MQ_q3_popped" -eq 0 ] || [ "$MQ_q0_pushed" -eq 0 ] ||
		[ "$MQ_q1_popped" -eq 0 ]; then
		echo "net-mq user: a queue moved nothing: rx0 $MQ_q0_pushed tx0 $MQ_q1_popped" \
			"rx1 $MQ_q2_pushed tx1 $MQ_q3_popped"
		return 1
	fi
}

l1() {
	{ ip tuntap add tap0 mode tap multi_queue && ip addr add "$MQ_L1/24" dev tap0 &&
		ip link set tap0 up; } || { fail "tap0 (multi_queue) setup failed"; return; }
	mq_boot user tap=tap0 || { fail "built-in data path"; return; }
	mq_boot vhost tap=tap0,vhost=on || { fail "vhost=on"; return; }
	pass
}

# ---- L2 ----

# mq_irqs NAME: interrupts of the MSI-X vector whose action is virtio*-NAME,
# summed over the CPUs.
mq_irqs() {
	awk -v n="$1" '$NF ~ ("^virtio[0-9]+-" n "$") {
		for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i
	} END { print s + 0 }' /proc/interrupts
}

# The driver's feature bits, as /sys shows them: one character per bit.
mq_features() {
	for d in /sys/bus/virtio/devices/*; do
		[ "$(cat "$d/device")" = 0x0001 ] && cat "$d/features" && return
	done
}

# mq_count GLOB: how many paths match.
mq_count() {
	n=0
	for d in "$@"; do [ -e "$d" ] && n=$((n + 1)); done
	echo "$n"
}

# mq_rebind: unbinds and rebinds virtio_net from the card; eth0 comes back
# with two pairs.
mq_rebind() {
	dev=""
	for d in /sys/bus/virtio/devices/*; do
		[ "$(cat "$d/device")" = 0x0001 ] && dev=${d##*/}
	done
	drv=/sys/bus/virtio/drivers/virtio_net
	[ -n "$dev" ] && echo "$dev" >"$drv/unbind" && echo "$dev" >"$drv/bind" &&
		wait_for /sys/class/net/eth0/queues/rx-1 && ip addr add "$MQ_L2/24" dev eth0 &&
		ip link set eth0 up && ping -c 3 -i 0.2 -W 5 "$MQ_L1" >/dev/null 2>&1
}

# mq_iperf_mbps FILE: receiver goodput of an iperf3 -J report, in Mbit/s.
mq_iperf_mbps() {
	awk '/"sum_received"/ { f = 1 }
	f && /"bits_per_second"/ { v = $2; sub(/,.*/, "", v); printf "%.0f\n", v / 1e6; exit }' "$1"
}

l2() {
	bad=""
	feat=$(mq_features)
	# CTRL_VQ (17) and MQ (22).
	[ "$(echo "$feat" | cut -c18)" = 1 ] && [ "$(echo "$feat" | cut -c23)" = 1 ] ||
		bad="$bad [MQ/CTRL_VQ not negotiated: $feat]"
	rx=$(mq_count /sys/class/net/eth0/queues/rx-*)
	tx=$(mq_count /sys/class/net/eth0/queues/tx-*)
	echo "SKIFF-L2-MARK queues rx=$rx tx=$tx"
	[ "$rx" = 2 ] && [ "$tx" = 2 ] || bad="$bad [queues rx=$rx tx=$tx]"
	if ip addr add "$MQ_L2/24" dev eth0 && ip link set eth0 up &&
		ping -c 3 -i 0.2 -W 5 "$MQ_L1" >/dev/null 2>&1; then
		iperf3 -c "$MQ_L1" -p 5201 -A 0 -t "$MQ_IPERF_S" -J >/tmp/a.json 2>&1 &
		a=$!
		iperf3 -c "$MQ_L1" -p 5202 -A 1 -t "$MQ_IPERF_S" -J >/tmp/b.json 2>&1 &
		b=$!
		wait "$a" "$b"
		ma=$(mq_iperf_mbps /tmp/a.json)
		mb=$(mq_iperf_mbps /tmp/b.json)
		echo "net-mq: iperf3 on CPU 0: ${ma:-failed} Mbit/s, CPU 1: ${mb:-failed} Mbit/s"
		[ -n "$ma" ] && [ -n "$mb" ] || bad="$bad [iperf3 failed]"
		echo "SKIFF-L2-MARK mbps=$((${ma:-0} + ${mb:-0}))"
	else
		bad="$bad [eth0 setup or ping failed]"
	fi
	grep virtio /proc/interrupts
	for p in 0 1; do
		echo "SKIFF-L2-MARK irq_in$p=$(mq_irqs "input.$p")"
		echo "SKIFF-L2-MARK irq_out$p=$(mq_irqs "output.$p")"
	done
	if mq_rebind; then
		i1=$(mq_irqs input.1) o1=$(mq_irqs output.1)
		iperf3 -c "$MQ_L1" -p 5202 -A 1 -t 1 >/dev/null 2>&1 || bad="$bad [iperf3 after rebind]"
		echo "net-mq: after rebind input.1 $i1 -> $(mq_irqs input.1)," \
			"output.1 $o1 -> $(mq_irqs output.1)"
		[ "$(mq_irqs input.1)" -gt "$i1" ] && [ "$(mq_irqs output.1)" -gt "$o1" ] ||
			bad="$bad [pair 1 idle after rebind]"
	else
		bad="$bad [driver rebind failed]"
	fi
	[ -z "$bad" ] || echo "SKIFF-L2-MARK bad=$bad"
	echo "SKIFF-L2-MARK mq-done"
}
