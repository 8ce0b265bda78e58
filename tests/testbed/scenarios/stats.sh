# Exit accounting: while L2 runs, `skiff stat --once` reads the control
# socket; at exit --stats-json holds exits by register and KVM's counters.
TIMEOUT=400
EXPECT="SKIFF-L2: init"

l1() {
	rm -f /tmp/stat.out /tmp/stats.json
	(
		# Wait (bounded) for L2 to say it is idling, then take a snapshot.
		i=0
		while [ $i -lt 600 ] && ! grep -q "SKIFF-L2-MARK idle" /tmp/l2.log 2>/dev/null; do
			sleep 0.2
			i=$((i + 1))
		done
		skiff stat /tmp/api.sock --once >/tmp/stat.out 2>&1
	) &
	skiff_boot_l2 --cpus 1 --api-sock /tmp/api.sock --stats-json /tmp/stats.json ||
		{ fail "skiff exited $VMM_RC"; return; }
	wait
	grep -q "^exit io" /tmp/stat.out || { fail "no exit counts from skiff stat"; cat /tmp/stat.out; return; }
	grep -q "^site uart0 THR write" /tmp/stat.out || { fail "no per-register counts"; return; }
	grep -q '"site": "uart0 THR"' /tmp/stats.json || { fail "no sites in the JSON"; return; }
	grep -q '"kvm": {' /tmp/stats.json || { fail "no KVM counters in the JSON"; return; }
	echo "--- skiff stat --once (head)"
	head -n 12 /tmp/stat.out
	pass
}

l2() {
	echo "SKIFF-L2-MARK idle"
	sleep 8
}
