# SPDX-License-Identifier: Apache-2.0
# PCI passthrough: L0 gives L1 an IOMMU (intremap=off) and two NICs on one
# hub: an e1000e (8086:10d3), alone below a PCIe root port, that L1 binds
# to vfio-pci and skiff passes to L2, and a virtio-net that L1 keeps (169.254.20.1/24). L2 drives the
# e1000e with Debian's e1000e driver (169.254.20.2/24): ping, iperf3 both
# ways, VFIO_XFER_MB MiB each way checked by sha256. Boots: MSI-X with the
# BARs mapped (mmap=on), MSI-X with every BAR access trapped (mmap=off,
# ping and iperf3 only), INTx (L2 with pci=nomsi). Before and between, bad
# --vfio-pci input must exit 2 with one line; at the end L1 binds the NIC
# back to e1000e and pings L1's other NIC through it (two namespaces, or
# the kernel would short-cut).
# Reset: QEMU's e1000e has no FLR, and the PM reset Linux would pick first
# does nothing in QEMU 7.2, so a device on the root bus kept its last
# user's receive ring running into the next guest's memory (DMA faults,
# corrupt kernels, stalled transfers from the second boot on). Below a
# root port, L1 selects the secondary bus reset, which QEMU does perform.
# Metrics per boot MODE (msix, trap, intx): ping_{min,avg,max}_ms_MODE,
# throughput_{up,down}_mbps_MODE, throughput_nc_{down,up}_mbps_MODE; and
# L1 itself on the e1000e at the end: ping_avg_ms_native,
# throughput_{up,down}_mbps_native.
TIMEOUT=1800
SLOW=1
EXPECT="SKIFF-L2-MARK vfio-done-msix
SKIFF-L2-MARK vfio-done-trap
SKIFF-L2-MARK vfio-done-intx"
L0_EXTRA_ARGS="-device intel-iommu,intremap=off
	-device pcie-root-port,id=rp0,bus=pcie.0,chassis=1,slot=1
	-netdev hubport,id=h0,hubid=0 -device e1000e,netdev=h0,bus=rp0
	-netdev hubport,id=h1,hubid=0 -device virtio-net-pci,netdev=h1"
L1_EXTRA_APPEND="intel_iommu=on iommu=pt"
L1_EXTRA_MODULES="vfio vfio_iommu_type1 vfio_virqfd vfio-pci-core vfio-pci virtio_pci
	virtio_net e1000e"
L2_EXTRA_MODULES="e1000e"

VFIO_L1=169.254.20.1
VFIO_L2=169.254.20.2
VFIO_XFER_MB=64
VFIO_IPERF_S=4

vfio_sha() { sha256sum <"$1" | cut -d' ' -f1; }

vfio_l2_value() { sed -n "s/^SKIFF-L2-MARK $1=//p" /tmp/l2.log | head -n1; }

# vfio_xfer_serve: L1's side of L2's VFIO_XFER_MB MiB each way: a file
# to send on port 5001 (its sha256 in down_sha), what comes on 5002 into
# /tmp/up.bin; down_pid and up_pid to kill after the boot.
vfio_xfer_serve() {
	dd if=/dev/urandom of=/tmp/down.bin bs=1M count="$VFIO_XFER_MB" 2>/dev/null
	down_sha=$(vfio_sha /tmp/down.bin)
	rm -f /tmp/up.bin
	nc -l -p 5001 -e cat /tmp/down.bin &
	down_pid=$!
	nc -l -p 5002 -e sh -c 'cat >/tmp/up.bin' &
	up_pid=$!
}

# vfio_xfer_check WHAT: L2's sha256 of each way against L1's (VFIO_WHY).
vfio_xfer_check() {
	[ "$(vfio_l2_value down_sha)" = "$down_sha" ] ||
		{ VFIO_WHY="$1: download corrupted"; return 1; }
	[ "$(vfio_l2_value up_sha)" = "$(vfio_sha /tmp/up.bin 2>/dev/null)" ] ||
		{ VFIO_WHY="$1: upload corrupted"; return 1; }
}

# vfio_boot MODE SPEC [CMDLINE...]: one L2 boot with --vfio-pci SPEC.
vfio_boot() {
	mode=$1 spec=$2
	shift 2
	vfio_xfer_serve
	L2_CMDLINE="console=ttyS0 quiet panic=-1 vfio_mode=$mode $*"
	rc=0
	skiff_boot_l2 --vfio-pci "$spec" --stats || rc=$?
	kill "$down_pid" "$up_pid" 2>/dev/null
	echo "vfio: $mode: L1's side:"
	ip -s link show "$nic"
	echo "vfio: $mode: skiff's exit accounting:"
	grep -i "vfio\|BAR\|MSI-X" /tmp/vmm.err | head -n 20
	[ "$rc" = 0 ] || { VFIO_WHY="$mode: skiff exited $VMM_RC"; return 1; }
	l2_saw "SKIFF-L2-MARK vfio-done-$mode" || { VFIO_WHY="$mode: L2 did not finish"; return 1; }
	[ "$mode" = trap ] && return 0
	vfio_xfer_check "$mode"
}

vfio_bad_input() {
	BAD=""
	expect_usage_error "malformed address" "malformed PCI address" run --kernel "$L2_KERNEL" \
		--vfio-pci 0000:zz:00.0
	expect_usage_error "absent device" "no PCI device" run --kernel "$L2_KERNEL" \
		--vfio-pci 0000:7f:1f.7
	expect_usage_error "bad option" "invalid mmap=sometimes" run --kernel "$L2_KERNEL" \
		--vfio-pci "$1,mmap=sometimes"
	expect_usage_error "not bound to vfio-pci" "not vfio-pci" run --kernel "$L2_KERNEL" \
		--vfio-pci "$1"
	[ -z "$BAD" ]
}

# vfio_setup: L1's side (sets addr, the e1000e, and nic, L1's virtio-net
# at VFIO_L1). VFIO_WHY says why not. Shared with vfio-quick.
vfio_setup() {
	echo Y >/sys/module/vfio_iommu_type1/parameters/allow_unsafe_interrupts ||
		{ VFIO_WHY="cannot allow unsafe interrupts"; return 1; }
	addr=$(pci_find 0x8086 0x10d3) || { VFIO_WHY="no e1000e in L1"; return 1; }
	nic=$(pci_netif virtio_net) || { VFIO_WHY="no virtio-net NIC in L1"; return 1; }
	if ! { ip addr add "$VFIO_L1/24" dev "$nic" && ip link set "$nic" up; }; then
		VFIO_WHY="L1's NIC setup failed"
		return 1
	fi
}

# vfio_take ADDR: ADDR bound to vfio-pci with the bus reset selected;
# sets group.
vfio_take() {
	echo bus >"/sys/bus/pci/devices/$1/reset_method" ||
		{ VFIO_WHY="cannot select the bus reset for $1"; return 1; }
	pci_bind "$1" vfio-pci || { VFIO_WHY="cannot bind $1 to vfio-pci"; return 1; }
	group=$(readlink "/sys/bus/pci/devices/$1/iommu_group")
	group=${group##*/}
	echo "vfio: $1 in IOMMU group $group: $(ls /dev/vfio)"
}

# vfio_give_back ADDR: ADDR bound to e1000e again, and L1 pings its other
# NIC through it from a namespace (sets eth).
vfio_give_back() {
	pci_bind "$1" e1000e || { VFIO_WHY="cannot bind $1 back to e1000e"; return 1; }
	sleep 1
	eth=$(pci_netif e1000e) || { VFIO_WHY="e1000e has no interface after rebinding"; return 1; }
	if ! { ip netns add side && ip link set "$eth" netns side &&
		ip netns exec side ip addr add "$VFIO_L2/24" dev "$eth" &&
		ip netns exec side ip link set "$eth" up; }; then
		VFIO_WHY="netns setup failed"
		return 1
	fi
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		ip netns exec side ping -c 1 -W 2 "$VFIO_L1" >/dev/null 2>&1 && return 0
	done
	VFIO_WHY="the e1000e does not work in L1 after skiff"
	return 1
}

l1() {
	VFIO_WHY=""
	vfio_setup || { fail "$VFIO_WHY"; return; }
	vfio_bad_input "$addr" || { fail "bad input:$BAD"; return; }
	vfio_take "$addr" || { fail "$VFIO_WHY"; return; }
	# The group held open elsewhere: skiff must say so, not hang.
	BAD=""
	exec 3<>"/dev/vfio/$group"
	expect_usage_error "group in use" "already in use" run --kernel "$L2_KERNEL" \
		--vfio-pci "$addr"
	exec 3>&-
	[ -z "$BAD" ] || { fail "bad input:$BAD"; return; }
	iperf3 -s >/tmp/iperf3-server.log 2>&1 &
	iperf_pid=$!
	L2_MEM=512M
	vfio_boot msix "$addr" &&
		vfio_boot trap "$addr,mmap=off" &&
		vfio_boot intx "$addr" pci=nomsi
	kill "$iperf_pid" 2>/dev/null
	[ -z "$VFIO_WHY" ] || { fail "$VFIO_WHY"; return; }
	vfio_give_back "$addr" || { fail "$VFIO_WHY"; return; }
	vfio_native
	pass
}

# The ceiling: L1 itself on the e1000e (in its namespace) against its
# virtio-net, the same path L2 took. Metrics *_native; not asserted.
vfio_native() {
	iperf3 -s >/tmp/iperf3-server.log 2>&1 &
	iperf_pid=$!
	sleep 1
	ip netns exec side ping -c 10 -i 0.2 -W 5 "$VFIO_L1" >/tmp/ping.txt 2>&1
	rtt=$(sed -n 's#.*min/avg/max = \([0-9.]*\)/\([0-9.]*\)/\([0-9.]*\).*#\2#p' /tmp/ping.txt)
	[ -n "$rtt" ] && metric ping_avg_ms_native "$rtt"
	for dir in up down; do
		r=
		[ "$dir" = down ] && r=-R
		# shellcheck disable=SC2086 # no option or one
		ip netns exec side iperf3 -c "$VFIO_L1" -t "$VFIO_IPERF_S" -J $r >"/tmp/n$dir.json" 2>&1
		mbps=$(vfio_iperf_mbps "/tmp/n$dir.json")
		[ -n "$mbps" ] && metric "throughput_${dir}_mbps_native" "$mbps"
	done
	kill "$iperf_pid" 2>/dev/null
}

# ---- L2 ----

vfio_iperf_mbps() {
	awk '/"sum_received"/ { f = 1 }
	f && /"bits_per_second"/ { v = $2; sub(/,.*/, "", v); printf "%.1f\n", v / 1e6; exit }' "$1"
}

vfio_rate() {
	awk "BEGIN { d = $2 - $1; if (d < 0.01) d = 0.01;
		printf \"%.1f\n\", $VFIO_XFER_MB * 8.388608 / d }"
}

vfio_ping() {
	ping -c 10 -i 0.2 -W 5 "$VFIO_L1" >/tmp/ping.txt 2>&1
	cat /tmp/ping.txt
	rtt=$(sed -n 's#.*min/avg/max = \([0-9.]*\)/\([0-9.]*\)/\([0-9.]*\).*#\1 \2 \3#p' /tmp/ping.txt)
	[ -n "$rtt" ] || return 1
	# shellcheck disable=SC2086 # three numbers
	set -- $rtt
	metric "ping_min_ms_$mode" "$1"
	metric "ping_avg_ms_$mode" "$2"
	metric "ping_max_ms_$mode" "$3"
	grep -q " 0% packet loss" /tmp/ping.txt
}

vfio_iperf() {
	name=$1
	shift
	iperf3 -c "$VFIO_L1" -t "$VFIO_IPERF_S" -J "$@" >"/tmp/$name.json" 2>&1
	mbps=$(vfio_iperf_mbps "/tmp/$name.json")
	[ -n "$mbps" ] || { tail -n 20 "/tmp/$name.json"; return 1; }
	metric "throughput_${name}_mbps_$mode" "$mbps"
}

# A transfer that stalled: what the NIC and its interrupts did, then fail.
vfio_stalled() {
	echo "vfio: $mode: $2 stalled; interrupts and counters:"
	grep "$1" /proc/interrupts
	ip -s link show "$1"
	fail "$mode: $2 stalled (90 s)"
}

l2() {
	mode=$(sed -n 's/.*vfio_mode=\([a-z]*\).*/\1/p' /proc/cmdline)
	eth=$(pci_netif e1000e) || { fail "$mode: no e1000e interface in L2"; return; }
	if ! { ip addr add "$VFIO_L2/24" dev "$eth" && ip link set "$eth" up; }; then
		fail "$mode: $eth setup failed"
		return
	fi
	i=0
	while [ "$(cat "/sys/class/net/$eth/carrier" 2>/dev/null)" != 1 ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	vfio_ping || { fail "$mode: ping failed"; return; }
	grep "$eth" /proc/interrupts
	irqs=$(grep "$eth" /proc/interrupts)
	case "$mode:$irqs" in
	intx:*IO-APIC*) ;;
	msix:*MSI* | trap:*MSI*) ;;
	*) { fail "$mode: wrong interrupt kind: $irqs"; return; } ;;
	esac
	vfio_iperf up || { fail "$mode: iperf3 L2 to L1 failed"; return; }
	vfio_iperf down -R || { fail "$mode: iperf3 L1 to L2 failed"; return; }
	if [ "$mode" != trap ]; then
		t0=$(cut -d' ' -f1 /proc/uptime)
		timeout 90 nc "$VFIO_L1" 5001 </dev/null >/tmp/down.bin ||
			{ vfio_stalled "$eth" download; return; }
		t1=$(cut -d' ' -f1 /proc/uptime)
		echo "SKIFF-L2-MARK down_sha=$(vfio_sha /tmp/down.bin)"
		rm -f /tmp/down.bin
		dd if=/dev/urandom of=/tmp/up.bin bs=1M count="$VFIO_XFER_MB" 2>/dev/null
		echo "SKIFF-L2-MARK up_sha=$(vfio_sha /tmp/up.bin)"
		t2=$(cut -d' ' -f1 /proc/uptime)
		timeout 90 nc "$VFIO_L1" 5002 </tmp/up.bin || { vfio_stalled "$eth" upload; return; }
		t3=$(cut -d' ' -f1 /proc/uptime)
		metric "throughput_nc_down_mbps_$mode" "$(vfio_rate "$t0" "$t1")"
		metric "throughput_nc_up_mbps_$mode" "$(vfio_rate "$t2" "$t3")"
	fi
	echo "SKIFF-L2-MARK vfio-done-$mode"
}
