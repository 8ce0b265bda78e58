# skiff refuses bad input cleanly: exit status 2 and exactly one line on
# stderr, for each case below. Runs in L1 where /dev/kvm is real, so a
# check that skiff skips would show up as a guest starting (bounded by
# timeout) rather than as a crash of the host's software KVM.
TIMEOUT=300

# expect_usage_error DESC WHAT SKIFF-ARGS...: one case. Appends DESC to BAD
# unless skiff exits 2 with exactly one stderr line that matches the
# extended regex WHAT (case-insensitive; "" for any): the line must be about
# what the case breaks, or the case tests nothing.
expect_usage_error() {
	desc=$1 what=$2
	shift 2
	rc=0
	timeout 60 skiff "$@" </dev/null >/tmp/bad.out 2>/tmp/bad.err || rc=$?
	lines=$(wc -l </tmp/bad.err)
	echo "badinput: $desc: rc=$rc stderr_lines=$lines: $(head -n1 /tmp/bad.err)"
	if [ "$rc" != 2 ] || [ "$lines" != 1 ]; then
		BAD="$BAD [$desc: rc=$rc lines=$lines]"
	elif ! grep -qiE -- "$what" /tmp/bad.err; then
		BAD="$BAD [$desc: message not about /$what/]"
	fi
}

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
