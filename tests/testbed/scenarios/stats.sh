# SPDX-License-Identifier: Apache-2.0
# Exit accounting: while L2 runs, `skiff stat --once` reads the control
# socket; at exit --stats-json holds exits by register and KVM's counters.
# Also two I/O threads (--iothreads 2) serving two disks, the first one
# polled (poll=always): each thread must have handled events, and the polled
# disk's work must have come from polling.
TIMEOUT=90
EXPECT="SKIFF-L2: init"

l1() {
	rm -f /tmp/stat.out /tmp/stats.json
	truncate -s 4M /tmp/s0.img
	truncate -s 4M /tmp/s1.img
	(
		# Wait (bounded) for L2 to say it is idling, then take a snapshot.
		i=0
		while [ $i -lt 600 ] && ! grep -q "SKIFF-L2-MARK idle" /tmp/l2.log 2>/dev/null; do
			sleep 0.2
			i=$((i + 1))
		done
		skiff stat /tmp/api.sock --once >/tmp/stat.out 2>&1
	) &
	skiff_boot_l2 --cpus 1 --api-sock /tmp/api.sock --stats-json /tmp/stats.json \
		--iothreads 2 --disk /tmp/s0.img,poll=always --disk /tmp/s1.img ||
		{ fail "skiff exited $VMM_RC"; return; }
	wait
	grep -q "^exit io" /tmp/stat.out || { fail "no exit counts from skiff stat"; cat /tmp/stat.out; return; }
	grep -q "^site uart0 THR write" /tmp/stat.out || { fail "no per-register counts"; return; }
	grep -q '"site": "uart0 THR"' /tmp/stats.json || { fail "no sites in the JSON"; return; }
	grep -q '"kvm": {' /tmp/stats.json || { fail "no KVM counters in the JSON"; return; }
	# Final values from the JSON: "NAME": N, one per line.
	for c in "io0 events" "io1 events" "virtio-blk0 q0 poll iterations with work" \
		"virtio-blk1 q0 ioeventfd kicks"; do
		v=$(sed -n "s/^ *\"$c\": \([0-9]*\).*/\1/p" /tmp/stats.json | head -n1)
		[ "${v:-0}" -gt 0 ] 2>/dev/null || { fail "counter '$c' is '${v:-missing}'"; return; }
		echo "stats: $c = $v"
	done
	grep -q '"io1": ' /tmp/stats.json || { fail "no CPU time for io1 in the JSON"; return; }
	echo "--- skiff stat --once (head)"
	head -n 12 /tmp/stat.out
	pass
}

l2() {
	for d in vda vdb; do
		dd if=/dev/$d of=/dev/null bs=64k count=64 2>/dev/null || echo "stats: reading $d failed"
	done
	echo "SKIFF-L2-MARK idle"
	sleep 8
}
