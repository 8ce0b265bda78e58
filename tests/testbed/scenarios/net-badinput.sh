# --net refuses bad input before the guest starts: exit status 2 and one
# line on stderr about the problem. Cases: empty tap=, a tap that does not
# exist, a tun (not tap) device, a tap already in use, a malformed MAC, a
# multicast MAC, a MAC given to two devices, an unknown option.
TIMEOUT=300

# net_expect_usage_error DESC WHAT SKIFF-RUN-ARGS...: skiff run must exit 2
# with one stderr line matching the extended regex WHAT; else DESC is
# added to BAD.
net_expect_usage_error() {
	desc=$1 what=$2
	shift 2
	rc=0
	timeout 60 skiff run --kernel /l2/vmlinuz --mem 256M "$@" </dev/null \
		>/tmp/bad.out 2>/tmp/bad.err || rc=$?
	lines=$(wc -l </tmp/bad.err)
	echo "net-badinput: $desc: rc=$rc stderr_lines=$lines: $(head -n1 /tmp/bad.err)"
	if [ "$rc" != 2 ] || [ "$lines" != 1 ]; then
		BAD="$BAD [$desc: rc=$rc lines=$lines]"
	elif ! grep -qiE -- "$what" /tmp/bad.err; then
		BAD="$BAD [$desc: message not about /$what/]"
	fi
}

l1() {
	command -v skiff >/dev/null || { fail "no skiff in L1"; return; }
	ip tuntap add tap0 mode tap || { fail "ip tuntap add tap0 failed"; return; }
	ip tuntap add tap1 mode tap || { fail "ip tuntap add tap1 failed"; return; }
	ip tuntap add tun0 mode tun || { fail "ip tuntap add tun0 failed"; return; }
	BAD=""
	M=02:11:22:33:44:55
	net_expect_usage_error "empty tap" "tap" --net tap=
	net_expect_usage_error "no tap option" "tap=NAME is required" --net mac=$M
	net_expect_usage_error "missing tap" "no network interface 'nosuch0'" --net tap=nosuch0
	net_expect_usage_error "tun, not tap" "not a tap" --net tap=tun0
	net_expect_usage_error "lo, not tap" "not a tap" --net tap=lo
	net_expect_usage_error "tap in use" "in use" --net tap=tap0 --net tap=tap0
	net_expect_usage_error "malformed mac" "malformed mac" --net tap=tap0,mac=02:11:22:33:44
	net_expect_usage_error "multicast mac" "multicast" --net tap=tap0,mac=01:00:5e:00:00:01
	net_expect_usage_error "duplicate mac" "already used" \
		--net tap=tap0,mac=$M --net tap=tap1,mac=$M
	net_expect_usage_error "unknown option" "unknown option 'queues'" --net tap=tap0,queues=4
	# Nothing may be left behind: a refused attach must not create taps.
	[ -e /sys/class/net/nosuch0 ] && BAD="$BAD [nosuch0 was created]"
	if [ -n "$BAD" ]; then fail "wrong handling:$BAD"; else pass; fi
}
