# SPDX-License-Identifier: Apache-2.0
# Several devices through one VFIO container (issue 37.3, 37.5, 37.6): L0
# gives L1 an IOMMU (intremap=off, first), an e1000e below a PCIe root port
# (as vfio.sh), two NVMe controllers (1b36:0010) behind a PCIe-to-PCI
# bridge, whose requester IDs alias to the bridge so both share one IOMMU
# group, an ivshmem-plain (1af4:1110) whose BAR2 is 8 GiB, 64-bit and
# prefetchable (a sparse file under .cache/testbed), and L1's own
# virtio-net on the hub. L1 binds the four functions to vfio-pci; giving
# one NVMe of the group alone must exit 2 with one line naming the other;
# then one skiff run passes all four to one L2 (mmap=on), which pings L1
# through the e1000e and moves VFIO_XFER_MB MiB each way through it
# (sha256), writes 4 MiB of random data to each NVMe namespace
# with O_DIRECT and reads it back after dropping caches (sha256), reads
# 16 MiB with O_DIRECT (nvme_read_mbps: a testbed number), checks that
# BAR2 sits at or above 4 GiB with 8 GiB and writes a pattern at 7 GiB
# through its sysfs resource file. After skiff exits, L1 finds the pattern
# in its own BAR2, binds the NVMe back to nvme (and reads what L2 wrote,
# by sha256: the image behind each) and the NIC back to e1000e (ping).
# The NVMe images (16 MiB) and the 8 GiB backing file are L0_FILES: made
# per run, sparse, removed after. Bound: four passes alone took 96, 132
# (beside a make unit), 98 and 77 s; 240 s is 1.8x the slowest.
# vfio-multi-qemu builds on this file: the same L0, L1 and L2 sides, with
# QEMU as L2's VMM (vmulti_life's BOOT).
SCENARIO_BASE=vfio
TIMEOUT=240
SLOW=0
EXPECT="SKIFF-L2-MARK vmulti-done"
L0_FILES="nv0:16M nv1:16M ivm:8G"
L0_EXTRA_ARGS="-device intel-iommu,intremap=off
	-device pcie-root-port,id=rp0,bus=pcie.0,chassis=1,slot=1
	-netdev hubport,id=h0,hubid=0 -device e1000e,netdev=h0,bus=rp0
	-device pcie-pci-bridge,id=ppb,bus=pcie.0
	-drive file=@nv0@,if=none,id=nv0,format=raw
	-device nvme,serial=vm0,drive=nv0,bus=ppb,addr=1
	-drive file=@nv1@,if=none,id=nv1,format=raw
	-device nvme,serial=vm1,drive=nv1,bus=ppb,addr=2
	-object memory-backend-file,id=ivm,mem-path=@ivm@,size=8G,share=on
	-device ivshmem-plain,memdev=ivm
	-netdev hubport,id=h1,hubid=0 -device virtio-net-pci,netdev=h1"
# The NVMe modules in dependency order (crc64-rocksoft finds its generic
# implementation by name at load time, so not through modinfo's depends).
VMULTI_NVME_MODULES="crct10dif_common crct10dif_generic crc-t10dif crc64 crc64-rocksoft
	crc64_rocksoft_generic t10-pi nvme-core nvme"
L1_EXTRA_MODULES="vfio vfio_iommu_type1 vfio_virqfd vfio-pci-core vfio-pci virtio_pci
	virtio_net e1000e $VMULTI_NVME_MODULES"
L2_EXTRA_MODULES="e1000e $VMULTI_NVME_MODULES"

VMULTI_MB=4
VMULTI_READ_MB=16
# Through the e1000e, each way, checked by sha256 (issue 32.4's transfer:
# the quick form of vfio's, whose scenario is SLOW).
VFIO_XFER_MB=4
# 7 GiB into the 8 GiB BAR: above any 32-bit window, in the BAR's last GiB.
VMULTI_OFF=$((7 << 30))

# vmulti_find VENDOR DEVICE: every PCI function with these ids, in
# address order.
vmulti_find() {
	for vf_d in /sys/bus/pci/devices/*; do
		[ "$(cat "$vf_d/vendor")" = "$1" ] && [ "$(cat "$vf_d/device")" = "$2" ] &&
			echo "${vf_d##*/}"
	done
}

vmulti_group() { vg_g=$(readlink "/sys/bus/pci/devices/$1/iommu_group") && echo "${vg_g##*/}"; }

# vmulti_take: the four functions on vfio-pci, the NVMe pair checked to
# share one IOMMU group (sets nv0 nv1 ivs).
vmulti_take() {
	# shellcheck disable=SC2046 # two addresses
	set -- $(vmulti_find 0x1b36 0x0010)
	[ $# = 2 ] || { VFIO_WHY="want 2 NVMe controllers in L1, found $#"; return 1; }
	nv0=$1 nv1=$2
	ivs=$(pci_find 0x1af4 0x1110) || { VFIO_WHY="no ivshmem in L1"; return 1; }
	vfio_take "$addr" || return 1
	for d in "$nv0" "$nv1" "$ivs"; do
		pci_bind "$d" vfio-pci || { VFIO_WHY="cannot bind $d to vfio-pci"; return 1; }
	done
	for d in "$addr" "$nv0" "$nv1" "$ivs"; do
		g=$(vmulti_group "$d")
		members=""
		for m in "/sys/kernel/iommu_groups/$g/devices/"*; do members="$members ${m##*/}"; done
		echo "vmulti: $d ($(cat "/sys/bus/pci/devices/$d/device")) in IOMMU group $g:$members"
	done
	[ "$(vmulti_group "$nv0")" = "$(vmulti_group "$nv1")" ] ||
		{ VFIO_WHY="the two NVMe behind the bridge are in different IOMMU groups"; return 1; }
	echo "vmulti: /dev/vfio:" /dev/vfio/*
}

# vmulti_ivshmem_check PATTERN: ivshmem off vfio-pci, its memory decoding
# on (no host driver does it), and PATTERN at VMULTI_OFF of BAR2.
vmulti_ivshmem_check() {
	d=/sys/bus/pci/devices/$ivs
	echo "$ivs" >"$d/driver/unbind" && echo >"$d/driver_override" && echo 1 >"$d/enable" ||
		{ VFIO_WHY="cannot release the ivshmem from vfio-pci"; return 1; }
	got=$(pci-mem "$d/resource2" "$VMULTI_OFF") || { VFIO_WHY="L1 cannot map BAR2"; return 1; }
	echo "vmulti: L1 reads $got at $VMULTI_OFF of its ivshmem BAR2 (want $1)"
	[ "$got" = "$1" ] || { VFIO_WHY="the pattern L2 wrote is not in L1's BAR2 ($got)"; return 1; }
}

# vmulti_nvme_back: both NVMe on nvme again; each namespace's first
# VMULTI_MB MiB are what L2 wrote (L2's sha256 per serial).
vmulti_nvme_back() {
	for d in "$nv0" "$nv1"; do
		pci_bind "$d" nvme || { VFIO_WHY="cannot bind $d back to nvme"; return 1; }
	done
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c" ] || { VFIO_WHY="no NVMe controller in L1 after rebinding"; return 1; }
		sn=$(tr -d ' ' <"$c/serial")
		wait_for "/dev/${c##*/}n1" || { VFIO_WHY="no /dev/${c##*/}n1 in L1"; return 1; }
		got=$(dd if="/dev/${c##*/}n1" bs=1M count="$VMULTI_MB" iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)
		want=$(vfio_l2_value "nvme_sha_$sn")
		echo "vmulti: L1 ${c##*/} ($sn): $got, L2 wrote ${want:-nothing}"
		[ -n "$want" ] && [ "$got" = "$want" ] ||
			{ VFIO_WHY="$sn: L1 does not read back what L2 wrote"; return 1; }
	done
}

# vmulti_life BOOT: one L2 life with the four functions, booted by the
# function BOOT (skiff here, QEMU in vfio-multi-qemu), then what L1 checks
# of it: L2 done, the e1000e's transfer each way, the pattern in BAR2, the
# NVMe data on nvme and the NIC on e1000e again. VFIO_WHY says why not.
vmulti_life() {
	pattern=0x5ca1ab1e$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')
	L2_MEM=512M
	L2_CMDLINE="console=ttyS0 quiet panic=-1 vmulti_pattern=$pattern"
	vfio_xfer_serve
	vl_rc=0
	"$1" || vl_rc=$?
	kill "$down_pid" "$up_pid" 2>/dev/null
	[ "$vl_rc" = 0 ] || return 1
	l2_saw "SKIFF-L2-MARK vmulti-done" || { VFIO_WHY="L2 did not finish"; return 1; }
	vfio_xfer_check "the e1000e" || return 1
	mbps=$(vfio_l2_value nvme_read_mbps)
	[ -z "$mbps" ] || metric nvme_read_mbps "$mbps"
	vmulti_ivshmem_check "$pattern" || return 1
	vmulti_nvme_back || return 1
	vfio_give_back "$addr"
}

# vmulti_boot_skiff: L2 (2 vCPUs) under skiff with the four functions,
# the e1000e's BARs mapped, and skiff's lines about them.
vmulti_boot_skiff() {
	rc=0
	skiff_boot_l2 --cpus 2 --vfio-pci "$addr,mmap=on" --vfio-pci "$nv0" --vfio-pci "$nv1" \
		--vfio-pci "$ivs" --stats || rc=$?
	echo "vmulti: skiff's passthrough lines:"
	grep -i "vfio\|BAR\|MSI-X\|window" /tmp/vmm.err | head -n 30
	[ "$rc" = 0 ] || { VFIO_WHY="skiff exited $VMM_RC"; return 1; }
}

l1() {
	VFIO_WHY=""
	vfio_setup || { fail "$VFIO_WHY"; return; }
	vmulti_take || { fail "$VFIO_WHY"; return; }
	# 37.6: a group handed over in part.
	BAD=""
	expect_usage_error "one NVMe of the group" "$nv1" run --kernel "$L2_KERNEL" \
		--vfio-pci "$nv0"
	vmulti_life vmulti_boot_skiff || { fail "$VFIO_WHY"; return; }
	[ -z "$BAD" ] || { fail "bad input:$BAD"; return; }
	pass
}

# ---- L2 ----

# vmulti_nvme DEV: VMULTI_MB MiB of random data written to DEV and read
# back with O_DIRECT after the caches are dropped; prints its sha256 per
# controller serial for L1.
vmulti_nvme() {
	ctl=${1%n1}
	sn=$(tr -d ' ' <"/sys/class/nvme/$ctl/serial")
	dd if=/dev/urandom of=/tmp/w.bin bs=1M count="$VMULTI_MB" 2>/dev/null
	want=$(sha256sum </tmp/w.bin | cut -d' ' -f1)
	dd if=/tmp/w.bin of="/dev/$1" bs=1M oflag=direct 2>/dev/null || return 1
	sync
	echo 3 >/proc/sys/vm/drop_caches
	got=$(dd if="/dev/$1" bs=1M count="$VMULTI_MB" iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)
	echo "vmulti: L2 $1 ($sn): wrote $want, read $got"
	[ "$got" = "$want" ] || return 1
	echo "SKIFF-L2-MARK nvme_sha_$sn=$want"
	grep "$ctl" /proc/interrupts | head -n 4
}

# vmulti_bar2: the ivshmem's BAR2 at or above 4 GiB, 8 GiB, 64-bit
# prefetchable (sysfs resource line: start end flags); the pattern
# written at VMULTI_OFF and read back.
vmulti_bar2() {
	a=$(pci_find 0x1af4 0x1110) || { echo "vmulti: no ivshmem"; return 1; }
	# shellcheck disable=SC2046 # three numbers
	set -- $(sed -n 3p "/sys/bus/pci/devices/$a/resource")
	echo "vmulti: L2 ivshmem $a BAR2: $1-$2 flags $3"
	[ $(($1)) -ge $((1 << 32)) ] && [ $(($2 - $1 + 1)) = $((8 << 30)) ] &&
		[ $(($3 & 0x100000)) != 0 ] && [ $(($3 & 0x2000)) != 0 ] || return 1
	echo 1 >"/sys/bus/pci/devices/$a/enable"
	p=$(sed -n 's/.*vmulti_pattern=\([0-9a-fx]*\).*/\1/p' /proc/cmdline)
	got=$(pci-mem "/sys/bus/pci/devices/$a/resource2" "$VMULTI_OFF" "$p") || return 1
	echo "vmulti: L2 wrote $p at $VMULTI_OFF of BAR2, read $got"
	[ "$got" = "$(printf '0x%016x' "$p")" ]
}

l2() {
	eth=$(pci_netif e1000e) || { fail "no e1000e interface in L2"; return; }
	ip addr add "$VFIO_L2/24" dev "$eth" && ip link set "$eth" up ||
		{ fail "$eth setup failed"; return; }
	mode=multi
	i=0
	while [ "$(cat "/sys/class/net/$eth/carrier" 2>/dev/null)" != 1 ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	vfio_ping || { fail "ping through the e1000e failed"; return; }
	timeout 60 nc "$VFIO_L1" 5001 </dev/null >/tmp/down.bin ||
		{ vfio_stalled "$eth" download; return; }
	echo "SKIFF-L2-MARK down_sha=$(vfio_sha /tmp/down.bin)"
	rm -f /tmp/down.bin
	dd if=/dev/urandom of=/tmp/up.bin bs=1M count="$VFIO_XFER_MB" 2>/dev/null
	echo "SKIFF-L2-MARK up_sha=$(vfio_sha /tmp/up.bin)"
	timeout 60 nc "$VFIO_L1" 5002 </tmp/up.bin || { vfio_stalled "$eth" upload; return; }
	# e1000e names its vectors <if>-rx-0, -tx-0 only on MSI-X: a fall
	# back to MSI or INTx would move the data too (issue 32.4).
	grep -qE "MSI.* $eth-rx-0\$" /proc/interrupts ||
		{ fail "the e1000e is not on MSI-X: $(grep "$eth" /proc/interrupts | tr -s ' ' | tr '\n' ';')"; return; }
	n=0
	for b in /sys/block/nvme*n1; do
		[ -e "$b" ] || break
		vmulti_nvme "${b##*/}" || { fail "${b##*/}: data read back differs"; return; }
		n=$((n + 1))
	done
	[ "$n" = 2 ] || { fail "L2 sees $n NVMe namespaces, not 2"; return; }
	t0=$(now_ns)
	dd if=/dev/nvme0n1 of=/dev/null bs=1M count="$VMULTI_READ_MB" iflag=direct 2>/dev/null
	t1=$(now_ns)
	echo "SKIFF-L2-MARK nvme_read_mbps=$(awk "BEGIN { d = ($t1 - $t0) / 1e9; if (d < 0.01) d = 0.01;
		printf \"%.1f\", $VMULTI_READ_MB * 1.048576 / d }")"
	vmulti_bar2 || { fail "the ivshmem's 8 GiB BAR2 is not right"; return; }
	echo "SKIFF-L2-MARK vmulti-done"
}
