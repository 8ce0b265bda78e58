# SPDX-License-Identifier: Apache-2.0
# --net refuses bad input before the guest starts: exit status 2 and one
# line on stderr about the problem. Cases: empty tap=, a tap that does not
# exist, a tun (not tap) device, a tap already in use, a malformed MAC, a
# multicast MAC, a MAC given to two devices, an unknown option, queues=
# out of range, queues=2 on a tap made without multi_queue, queues= on an
# e1000.
TIMEOUT=90


l1() {
	command -v skiff >/dev/null || { fail "no skiff in L1"; return; }
	ip tuntap add tap0 mode tap || { fail "ip tuntap add tap0 failed"; return; }
	ip tuntap add tap1 mode tap || { fail "ip tuntap add tap1 failed"; return; }
	ip tuntap add tun0 mode tun || { fail "ip tuntap add tun0 failed"; return; }
	BAD=""
	M=02:11:22:33:44:55
	expect_usage_error "empty tap" "tap" run --kernel /l2/vmlinuz --mem 256M --net tap=
	expect_usage_error "no tap option" "tap=NAME is required" run --kernel /l2/vmlinuz --mem 256M --net mac=$M
	expect_usage_error "missing tap" "no network interface 'nosuch0'" run --kernel /l2/vmlinuz --mem 256M --net tap=nosuch0
	expect_usage_error "tun, not tap" "not a tap" run --kernel /l2/vmlinuz --mem 256M --net tap=tun0
	expect_usage_error "lo, not tap" "not a tap" run --kernel /l2/vmlinuz --mem 256M --net tap=lo
	expect_usage_error "tap in use" "in use" run --kernel /l2/vmlinuz --mem 256M --net tap=tap0 --net tap=tap0
	expect_usage_error "malformed mac" "malformed mac" run --kernel /l2/vmlinuz --mem 256M --net tap=tap0,mac=02:11:22:33:44
	expect_usage_error "multicast mac" "multicast" run --kernel /l2/vmlinuz --mem 256M --net tap=tap0,mac=01:00:5e:00:00:01
	expect_usage_error "duplicate mac" "already used" run --kernel /l2/vmlinuz --mem 256M \
		--net tap=tap0,mac=$M --net tap=tap1,mac=$M
	expect_usage_error "unknown option" "unknown option 'colour'" run --kernel /l2/vmlinuz --mem 256M --net tap=tap0,colour=blue
	expect_usage_error "queues out of range" "use 1 to 8" run --kernel /l2/vmlinuz --mem 256M --net tap=tap0,queues=9
	expect_usage_error "queues on a single-queue tap" "created without multi_queue" run --kernel /l2/vmlinuz --mem 256M --net tap=tap0,queues=2
	expect_usage_error "queues on an e1000" "queues= is for model=virtio" run --kernel /l2/vmlinuz --mem 256M --net tap=tap0,model=e1000,queues=2
	# Nothing may be left behind: a refused attach must not create taps.
	[ -e /sys/class/net/nosuch0 ] && BAD="$BAD [nosuch0 was created]"
	if [ -n "$BAD" ]; then fail "wrong handling:$BAD"; else pass; fi
}
