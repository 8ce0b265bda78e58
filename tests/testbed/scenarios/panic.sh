# SPDX-License-Identifier: Apache-2.0
# A guest kernel panic ends skiff with status 1 and one line saying so
# (the guest's pvpanic driver reports it), even with panic=-1, which would
# otherwise look like a reboot.
TIMEOUT=90
EXPECT="SKIFF-L2: init"

l1() {
	skiff_boot_l2 --cpus 1
	[ "$VMM_RC" = 1 ] || { fail "skiff exited $VMM_RC, want 1"; return; }
	grep -q "^skiff: guest kernel panicked" /tmp/vmm.err || { fail "no panic line on stderr"; return; }
	pass
}

l2() {
	# sysrq-c crashes the kernel on purpose
	echo c >/proc/sysrq-trigger
}
