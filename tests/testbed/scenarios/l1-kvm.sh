# SPDX-License-Identifier: Apache-2.0
# L1 alone: the testbed itself works (kvm-amd gives /dev/kvm, a tap can be
# made with a link-local address, guest/kvm-hold.c holds its VM and vCPU so
# VMM starts and stops do not make L1 patch its own text: the SLOW
# l1-textpatch scenario counts that). When this fails, skiff scenarios
# cannot pass: look at the testbed, not at skiff.
TIMEOUT=90 # about 8 s measured

l1() {
	[ -c /dev/kvm ] || { fail "no /dev/kvm"; return; }
	grep -q '^kvm_amd ' /proc/modules || { fail "kvm_amd not loaded"; return; }
	hold=$(pidof kvm-hold) || { fail "kvm-hold is not running"; return; }
	ls -d /sys/kernel/debug/kvm/"$hold"-*/vcpu0 >/dev/null 2>&1 ||
		{ fail "kvm-hold holds no vCPU"; return; }
	tap_up 169.254.10.1 || { fail "tap0 setup failed"; return; }
	metric l1_nproc "$(nproc)"
	pass
}
