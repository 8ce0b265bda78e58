# L1 alone: the testbed itself works (kvm-amd gives /dev/kvm, a tap can be
# made with a link-local address). When this fails, skiff scenarios cannot
# pass: look at the testbed, not at skiff.
TIMEOUT=180

l1() {
	[ -c /dev/kvm ] || { fail "no /dev/kvm"; return; }
	grep -q '^kvm_amd ' /proc/modules || { fail "kvm_amd not loaded"; return; }
	tap_up 169.254.10.1 || { fail "tap0 setup failed"; return; }
	metric l1_nproc "$(nproc)"
	pass
}
