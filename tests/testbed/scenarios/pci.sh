# SPDX-License-Identifier: Apache-2.0
# skiff's PCI bus and virtio-pci transport as L2 sees them, in two boots
# with a small virtio-blk disk:
#  1. default: the ACPI PNP0A03 root (\_SB.PCI0) leads Linux to bus 0, the
#     host bridge 00:00.0 answers type-1 config cycles, the ACPI tables load
#     without errors (full kernel log on the console), the disk uses MSI-X
#     and moves data (queue kicks through ioeventfds);
#  2. pci=nomsi: the disk falls back to INTx through _PRT and the IOAPIC.
# The disk only carries the transport's traffic here; disk.sh tests it.
TIMEOUT=90
EXPECT="SKIFF-L2: init
SKIFF-L2-MARK pci-host-bridge=0x1b36:0x0008:0x060000
SKIFF-L2-MARK acpi-errors=0"

# The value L2 reported as "SKIFF-L2-MARK KEY=VALUE" in the last boot.
pci_l2_value() {
	sed -n "s/^SKIFF-L2-MARK $1=//p" /tmp/l2.log | head -n1
}

# pci_check WHAT IRQ-MODE: the last boot's disk used IRQ-MODE and its I/O
# came back intact, with interrupts counted.
pci_check() {
	[ "$(pci_l2_value virtio-irq)" = "$2" ] ||
		{ fail "$1: virtio interrupts are '$(pci_l2_value virtio-irq)', not $2"; return 1; }
	[ "$(pci_l2_value disk-io)" = ok ] || { fail "$1: disk I/O failed"; return 1; }
	[ "$(pci_l2_value virtio-irq-count)" -gt 0 ] 2>/dev/null ||
		{ fail "$1: no virtio interrupts counted"; return 1; }
}

l1() {
	truncate -s 8M /tmp/pci.img
	L2_CMDLINE="console=ttyS0 panic=-1"
	skiff_boot_l2 --disk /tmp/pci.img || { fail "skiff exited $VMM_RC"; return; }
	l2_saw "SKIFF-L2-MARK pci-host-bridge=0x1b36:0x0008:0x060000" ||
		{ fail "L2 did not see the host bridge"; return; }
	l2_saw "SKIFF-L2-MARK acpi-errors=0" || { fail "L2 logged ACPI errors"; return; }
	l2_saw "SKIFF-L2-MARK pci-root=PNP0A03" || { fail "no ACPI PCI root in L2"; return; }
	pci_check ioeventfd msix || return

	L2_CMDLINE="console=ttyS0 quiet panic=-1"
	skiff_boot_l2 --disk /tmp/pci.img --no-ioeventfd ||
		{ fail "skiff --no-ioeventfd exited $VMM_RC"; return; }
	pci_check no-ioeventfd msix || return

	L2_CMDLINE="console=ttyS0 quiet panic=-1 pci=nomsi"
	skiff_boot_l2 --disk /tmp/pci.img || { fail "skiff (INTx) exited $VMM_RC"; return; }
	pci_check intx intx || return
	pass
}

l2() {
	d=/sys/bus/pci/devices/0000:00:00.0
	if [ -d "$d" ]; then
		echo "SKIFF-L2-MARK pci-host-bridge=$(cat "$d/vendor"):$(cat "$d/device"):$(cat "$d/class")"
	else
		echo "SKIFF-L2-MARK pci-host-bridge=missing"
	fi
	for h in /sys/bus/acpi/devices/PNP0A03:*; do
		[ -e "$h" ] && echo "SKIFF-L2-MARK pci-root=PNP0A03"
	done
	echo "SKIFF-L2-MARK acpi-errors=$(dmesg | grep -c -E 'ACPI (BIOS )?Error')"
	ls /sys/bus/pci/devices

	head -c 65536 /dev/urandom >/tmp/w.bin
	dd if=/tmp/w.bin of=/dev/vda bs=65536 count=1 conv=fsync 2>/dev/null
	echo 3 >/proc/sys/vm/drop_caches
	dd if=/dev/vda of=/tmp/r.bin bs=65536 count=1 2>/dev/null
	if cmp -s /tmp/w.bin /tmp/r.bin; then
		echo "SKIFF-L2-MARK disk-io=ok"
	else
		echo "SKIFF-L2-MARK disk-io=bad"
	fi
	grep virtio /proc/interrupts
	if grep -q 'MSI.*virtio0' /proc/interrupts; then
		echo "SKIFF-L2-MARK virtio-irq=msix"
	elif grep -q 'IO-APIC.*virtio0' /proc/interrupts; then
		echo "SKIFF-L2-MARK virtio-irq=intx"
	else
		echo "SKIFF-L2-MARK virtio-irq=none"
	fi
	echo "SKIFF-L2-MARK virtio-irq-count=$(awk '/virtio0/ { s += $2 } END { print s + 0 }' /proc/interrupts)"
}
