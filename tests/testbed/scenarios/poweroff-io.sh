# SPDX-License-Identifier: Apache-2.0
# The orderly stop under load: POWER_TRIALS times, L2 starts writing its
# disk (direct I/O, 1 MiB requests, several in flight) and sending iperf3
# traffic to L1 at once, then powers off in the middle of it, after a
# random 1-3 s. skiff must exit 0 every time: its stop joins the vCPUs, the
# I/O thread and the disk's worker (which finishes the queued writes)
# before the transport is freed or guest RAM unmapped. Before that order,
# a poweroff with large writes queued died by SIGSEGV in blk_req_finish.
# Odd trials use vhost for the card, even ones skiff's own data path.
TIMEOUT=300 # about 20 s per trial
POWER_TRIALS=20
# A trial takes ~10 s: one that hangs (once in CI, 2026-12-05: L2 in an
# RCU stall after its load began, not seen in 120 trials since) is cut at
# 60 s, after l2_watch has dumped skiff's threads at 20 s, so the run ends
# with the trial named and what L2 said in the FAIL line.
L2_TIMEOUT=60
L2_WATCH_S=20
POWER_IMG=/tmp/power.img
POWER_L1=169.254.10.1
POWER_L2=169.254.10.2

l1() {
	tap_up "$POWER_L1" || { fail "tap0 setup failed"; return; }
	iperf3 -s >/tmp/iperf3-server.log 2>&1 &
	po_bad="" po_t=1
	while [ "$po_t" -le "$POWER_TRIALS" ]; do
		rm -f "$POWER_IMG"
		truncate -s 256M "$POWER_IMG"
		po_vhost=off
		[ $((po_t % 2)) = 1 ] && po_vhost=on
		L2_CMDLINE="$L2_CMDLINE skiff_trial=$po_t"
		skiff_boot_l2 --disk "$POWER_IMG" --net "tap=tap0,vhost=$po_vhost"
		L2_CMDLINE=${L2_CMDLINE% skiff_trial=*}
		po_seen=no
		l2_saw "SKIFF-L2-MARK load $po_t" && po_seen=yes
		echo "poweroff-io: trial $po_t (vhost=$po_vhost): skiff exited $VMM_RC, load started: $po_seen"
		if [ "$VMM_RC" != 0 ] || [ "$po_seen" != yes ]; then
			po_why=$(grep -m2 -E 'rcu: INFO|RIP: |Oops|BUG' /tmp/l2.log | tr -d '\r' | tr '\n' ';')
			po_bad="$po_bad [trial $po_t: rc $VMM_RC, load $po_seen${po_why:+, L2: $po_why}]"
			tail -n 5 /tmp/vmm.err
		fi
		po_t=$((po_t + 1))
	done
	rm -f "$POWER_IMG"
	metric poweroff_trials "$POWER_TRIALS"
	if [ -n "$po_bad" ]; then fail "$po_bad"; else pass; fi
}

l2() {
	t=$(sed -n 's/.*skiff_trial=\([0-9]*\).*/\1/p' /proc/cmdline)
	wait_for /dev/vda
	ip addr add "$POWER_L2/24" dev eth0 && ip link set eth0 up
	# Four writers of 1 MiB direct writes keep requests queued in skiff.
	for w in 0 1 2 3; do
		dd if=/dev/zero of=/dev/vda bs=1M seek=$((w * 60)) count=60 oflag=direct \
			2>/dev/null &
	done
	iperf3 -c "$POWER_L1" -t 20 >/dev/null 2>&1 &
	echo "SKIFF-L2-MARK load $t"
	r=$(od -An -N1 -tu1 /dev/urandom | tr -d ' ')
	sleep $((1 + r % 3))
	poweroff -f
}
