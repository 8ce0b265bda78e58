# SPDX-License-Identifier: Apache-2.0
# skiff refuses bad input cleanly: exit status 2 and exactly one line on
# stderr, for each case below. Runs in L1 where /dev/kvm is real, so a
# check that skiff skips would show up as a guest starting (bounded by
# timeout) rather than as a crash of the host's software KVM.
TIMEOUT=90 # 9-10 s measured


l1() {
	command -v skiff >/dev/null || { fail "no skiff in L1"; return; }
	BAD=""
	K=/l2/vmlinuz
	head -c 4096 "$K" >/tmp/truncated
	dd if=/dev/zero of=/tmp/big bs=1M count=160 2>/dev/null
	expect_usage_error "missing kernel" "kernel" run --kernel /nonexistent/vmlinuz --mem 64M
	expect_usage_error "not a bzImage" "kernel|bzImage" run --kernel /bin/busybox --mem 64M
	expect_usage_error "truncated bzImage" "kernel|bzImage" run --kernel /tmp/truncated --mem 64M
	# RAM large enough for the kernel itself (it needs ~80 MiB), not the initrd.
	expect_usage_error "initrd > RAM" "initrd" run --kernel "$K" --initrd /tmp/big --mem 128M
	expect_usage_error "mem 0" "mem" run --kernel "$K" --mem 0
	expect_usage_error "mem 12Q" "mem" run --kernel "$K" --mem 12Q
	expect_usage_error "cpus 0" "cpus" run --kernel "$K" --cpus 0
	expect_usage_error "unknown flag" "no-such-flag" run --kernel "$K" --no-such-flag
	rm -f /tmp/big /tmp/truncated
	if [ -n "$BAD" ]; then fail "wrong handling:$BAD"; else pass; fi
}
