# SPDX-License-Identifier: Apache-2.0
# virtio-rng (--rng): Linux's virtio_rng binds to it and becomes the hwrng
# (rng_current names it), and /dev/hwrng reads give bytes from the host's
# getrandom: 256 bytes twice, not all zero, not the same twice. skiff's
# --stats then shows the device's counters: at least those 512 bytes, no
# refused chain, no host failure. Bad input: a second --rng and an unknown
# key are refused with one line and exit 2, before any guest runs.
# Metrics: rng_bytes, rng_requests (what the guest's hwrng core and reads
# took over the boot).
TIMEOUT=90
EXPECT="SKIFF-L2: init
SKIFF-L2: hwrng virtio_rng"
L2_EXTRA_MODULES="virtio_rng"

# rng_count NAME: the counter "virtio-rng0 NAME" from --stats, or empty.
rng_count() {
	grep -E "virtio-rng0 $1 +[0-9]+\$" /tmp/vmm.err | awk '{print $NF}' | head -n1
}

l1() {
	BAD=""
	expect_usage_error "two --rng" "one entropy device" run --kernel "$L2_KERNEL" --rng --rng
	expect_usage_error "unknown --rng key" "unknown rng option 'speed'" \
		run --kernel "$L2_KERNEL" --rng speed=1
	[ -z "$BAD" ] || { fail "bad input:$BAD"; return; }
	skiff_boot_l2 --cpus 1 --rng --stats || { fail "skiff exited $VMM_RC, want 0"; return; }
	l2_saw "SKIFF-L2-MARK hwrng ok" || { fail "L2's /dev/hwrng check did not pass"; return; }
	grep virtio-rng0 /tmp/vmm.err
	bytes=$(rng_count bytes) reqs=$(rng_count requests)
	bad=$(rng_count "bad requests") host=$(rng_count "host rng fails")
	[ -n "$bytes" ] && [ "$bytes" -ge 512 ] ||
		{ fail "virtio-rng0 bytes is '$bytes', want >= 512"; return; }
	[ "$bad" = 0 ] && [ "$host" = 0 ] ||
		{ fail "bad requests '$bad', host rng fails '$host', want 0 and 0"; return; }
	metric rng_bytes "$bytes"
	metric rng_requests "$reqs"
	pass
}

l2() {
	cur=/sys/class/misc/hw_random/rng_current
	wait_for "$cur" || { fail "no $cur"; return; }
	case $(cat "$cur") in
	virtio_rng*) echo "SKIFF-L2: hwrng virtio_rng" ;;
	*) fail "rng_current is '$(cat "$cur")', not virtio_rng"; return ;;
	esac
	wait_for /dev/hwrng || { fail "no /dev/hwrng"; return; }
	# head reads on until it has them all: the hwrng core may give fewer
	# bytes a read() than asked.
	head -c 256 /dev/hwrng >/tmp/r1 && head -c 256 /dev/hwrng >/tmp/r2 ||
		{ fail "reading /dev/hwrng failed"; return; }
	n1=$(wc -c </tmp/r1) n2=$(wc -c </tmp/r2)
	[ "$n1" = 256 ] && [ "$n2" = 256 ] || { fail "read $n1 and $n2 bytes, want 256"; return; }
	[ "$(tr -d '\000' </tmp/r1 | wc -c)" -gt 0 ] || { fail "256 zero bytes"; return; }
	cmp -s /tmp/r1 /tmp/r2 && { fail "two reads gave the same bytes"; return; }
	echo "SKIFF-L2-MARK hwrng ok"
}
