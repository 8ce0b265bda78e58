# SPDX-License-Identifier: Apache-2.0
# A guest reboot ends skiff with status 0 and one line saying it treated the
# reboot as a shutdown (skiff does not restart guests).
TIMEOUT=90
EXPECT="SKIFF-L2: init"

l1() {
	skiff_boot_l2 --cpus 1 || { fail "skiff exited $VMM_RC, want 0"; return; }
	grep -q "^skiff: guest requested a reboot; exiting" /tmp/vmm.err ||
		{ fail "no reboot line on stderr"; return; }
	pass
}

l2() {
	reboot -f
}
