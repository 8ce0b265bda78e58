# SPDX-License-Identifier: Apache-2.0
# Each thread role runs under its own seccomp filter: with the test-only
# SKIFF_SECCOMP_TEST=ROLE:CALL, a thread of that role attempts CALL right
# after installing its filter, and skiff must die by SIGSYS (status 159) with
# exactly the line naming the role and the call. This shows that the real
# vCPU, I/O, disk, console, API, main and controller threads each install
# their filter (a role whose thread forgot would run the guest instead).
# The main thread is "main" without an API socket and "controller" with one;
# the controller may open an existing file, so it is tried with socket(2),
# which no role allows. Then one normal boot with a disk and the control
# socket, filters on, must still work.
TIMEOUT=90
EXPECT="SKIFF-L2: init"

l1() {
	K=/l2/vmlinuz
	BAD=""
	truncate -s 4M /tmp/d0.img
	for role in vcpu io blk console api main controller; do
		rc=0 call=openat nr=257 sock=/tmp/sc.sock
		[ "$role" != controller ] || { call=socket nr=41; }
		# shellcheck disable=SC2046 # no word of it has a space
		SKIFF_SECCOMP_TEST=$role:$call timeout 60 skiff run --kernel "$K" --mem 128M \
			--disk /tmp/d0.img $([ "$role" = main ] || echo --api-sock $sock) \
			</dev/null >/tmp/sc.out 2>/tmp/sc.err || rc=$?
		want="skiff: seccomp: $role thread made forbidden system call $call ($nr)"
		echo "seccomp: $role: rc=$rc: $(head -n1 /tmp/sc.err)"
		if [ "$rc" != 159 ] || [ "$(grep -c 'skiff: seccomp' /tmp/sc.err)" != 1 ] ||
			! grep -qxF "$want" /tmp/sc.err; then
			BAD="$BAD [$role rc=$rc]"
			cat /tmp/sc.err
		fi
	done
	[ -z "$BAD" ] || { fail "roles not filtered as expected:$BAD"; return; }
	skiff_boot_l2 --cpus 2 --disk /tmp/d0.img --api-sock /tmp/sc.sock ||
		{ fail "skiff exited $VMM_RC"; cat /tmp/vmm.err; return; }
	grep -q "seccomp" /tmp/vmm.err && { fail "a filter refused a call"; return; }
	pass
}

l2() {
	dd if=/dev/vda of=/dev/null bs=64k count=16 2>/dev/null || echo "seccomp: reading vda failed"
	echo "SKIFF-L2-MARK done"
}
