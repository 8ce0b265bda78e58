# SPDX-License-Identifier: Apache-2.0
# The MP table alone: L2 boots with acpi=off, so Linux takes its CPUs, its
# IOAPIC and its IRQ routing from skiff's MP table (spec 1.4) instead of the
# MADT and _PRT. With --cpus 2 it must report 2 CPUs, and the console (COM1,
# ISA IRQ 4 through the IOAPIC) must work. Without ACPI there is no
# poweroff, so L2 ends with a reboot (reboot=k: the i8042 reset skiff
# catches). SLOW=1: it checks a fallback that Linux does not use by default.
TIMEOUT=400
SLOW=1
EXPECT="SKIFF-L2: init
SKIFF-L2-MARK nproc=2"

l1() {
	L2_CMDLINE="$L2_CMDLINE acpi=off"
	L2_TIMEOUT=120
	skiff_boot_l2 --cpus 2 || { fail "skiff exited $VMM_RC"; return; }
	l2_saw "SKIFF-L2-MARK nproc=2" || { fail "L2 did not report nproc=2"; return; }
	grep -q "Intel MultiProcessor Specification v1.4" /tmp/l2.log ||
		{ fail "L2 did not read the MP table"; return; }
	pass
}

l2() {
	dmesg | grep -E "MP-table|MultiProcessor|Processor #|IOAPIC\[|IRQ[0-9]+ |Brought up|ACPI" |
		head -n 30 | sed 's/^/SKIFF-L2-DMESG /'
	# The grep above echoes the spec line into the console for l1 to see.
	dmesg | grep -o "Intel MultiProcessor Specification v1.[0-9]"
	echo "SKIFF-L2-MARK nproc=$(nproc)"
	reboot -f
}
