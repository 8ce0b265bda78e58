# SPDX-License-Identifier: Apache-2.0
# QEMU (microvm) as the VMM in L1 instead of skiff: a reference for the
# boot scenarios and a check of the testbed's L2 path that does not depend
# on skiff. Not in the default set (SLOW=1): run it by name.
TIMEOUT=400
SLOW=1
PEERS=qemu # run-one.sh packs QEMU and its firmware into L1
EXPECT="SKIFF-L2: init
SKIFF-L2-MARK nproc=1"

l1() {
	vmm_boot_l2 qemu-system-x86_64 -M microvm -enable-kvm -cpu host \
		-m "$L2_MEM" -smp 1 -L /usr/share/qemu -nodefaults -no-user-config \
		-nographic -serial stdio -no-reboot \
		-kernel "$L2_KERNEL" -initrd "$L2_INITRD" -append "$L2_CMDLINE" ||
		{ fail "qemu exited $VMM_RC"; return; }
	l2_saw "SKIFF-L2-MARK nproc=1" || { fail "L2 did not report nproc=1"; return; }
	pass
}

l2() {
	echo "SKIFF-L2-MARK nproc=$(nproc)"
}
