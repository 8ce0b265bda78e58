# L1 alone: the testbed itself works (kvm-amd gives /dev/kvm, a tap can be
# made with a link-local address). When this fails, skiff scenarios cannot
# pass: look at the testbed, not at skiff.
TIMEOUT=180

l1() {
	[ -c /dev/kvm ] || { fail "no /dev/kvm"; return; }
	grep -q '^kvm_amd ' /proc/modules || { fail "kvm_amd not loaded"; return; }
	ip tuntap add tap0 mode tap || { fail "ip tuntap add failed"; return; }
	if ! ip addr add 169.254.10.1/24 dev tap0 || ! ip link set tap0 up; then
		fail "tap0 setup failed"
		return
	fi
	metric l1_nproc "$(nproc)"
	pass
}
