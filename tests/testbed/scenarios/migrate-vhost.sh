# SPDX-License-Identifier: Apache-2.0
# Live migration of a guest whose virtio-net card runs on vhost-net
# (vhost=on, issue 34.3), with received data that only vhost wrote held
# unread in guest memory across the move. vhost's kernel worker writes
# received frames into the guest's buffers where neither KVM's dirty log
# nor skiff's marks see them; the migration turns vhost's own log on for
# its pre-copy and merges it into every round (docs/MIGRATION.md,
# "vhost=on"). Without that merge the target holds those buffers as an
# earlier round (or none: a zero page) saw them.
# A download L2 reads as it goes does not show it (it passed twice with
# the merge left out): the guest copies what it reads, and KVM's log sees
# the copy; the used ring shares a page with the avail ring, which the
# guest writes; a buffer not yet read at the switch is at most a segment
# or two, which TCP can drop and have sent again. So L2 does not read
# during the move: the frames stay in the socket's queue, in the very
# pages vhost wrote (virtio-net's mergeable buffers become the skbs'
# fragments), acknowledged.
# In L1, curl configures `skiff run --api-sock` with a card on tap0,
# skiff_options vhost=on. L2 (tcp_rmem 16 MiB, so the window stays open
# unread) connects to L1's sender and to a second listener of L1's, and
# reads the data only once that second connection ends. The sender starts
# when the migration does (to a second skiff: PUT /migration/receive and
# /send over a Unix socket, the tap handed over), MV_CHUNKS chunks of
# random data (64 KiB each, MV_PAUSE s apart), so the frames land during
# the pre-copy in pages round 0 found zero or had sent already. The send
# answers 200, the source exits 0, its log shows vhost ran the card until
# the switch (else the built-in path moved the packets and marked them
# itself), and chunks went out during the send. Then L1 ends the second
# connection, L2 says how much waited in its socket, reads everything and
# prints its md5 and length, which must be L1's; L1 pings L2 there;
# SendCtrlAltDel ends the target with status 0. With the vhost log left
# out of the rounds' collect, the md5 differs (the length does not).
# Metrics: mv_downtime_ms, mv_total_ms, mv_pages (the source's reply),
# mv_chunks_before, mv_chunks_after (chunks sent when the send started and
# when it returned), mv_queued_bytes (what waited unread in L2's socket).
TIMEOUT=240
SLOW=1 # the default suite's bounds fill CI's budget (tb_bounds_budget)
L1_EXTRA_FILES="/usr/bin/curl"
EXPECT="SKIFF-L2: init
migrate-vhost: moved"

MV_L1=169.254.33.1
MV_L2=169.254.33.2
MV_MAC=06:00:AC:10:21:02
MV_PORT=5200
MV_GO_PORT=5201
MV_CHUNKS=256 # of 64 KiB: 16 MiB
MV_PAUSE=0.05
MV_S1=/tmp/mv1.sock
MV_S2=/tmp/mv2.sock
MV_MIG=unix:/tmp/mv-mig.sock
MV_DATA=/tmp/mv.data
MV_SENT=/tmp/mv.sent
MV_GO=/tmp/mv.go
API_BODY=/tmp/mv.body

# The sender, a script behind nc -e: says it is connected, waits for
# MV_GO, then the chunks in order, each counted once it is out.
mv_sender() {
	cat >/tmp/mv-send.sh <<EOF
echo 0 >$MV_SENT
while [ ! -e $MV_GO ]; do sleep 0.05; done
k=0
while [ \$k -lt $MV_CHUNKS ]; do
	dd if=$MV_DATA bs=64K skip=\$k count=1 2>/dev/null || exit 1
	k=\$((k + 1))
	echo \$k >$MV_SENT
	sleep $MV_PAUSE
done
EOF
}

mv_sent() { cat "$MV_SENT" 2>/dev/null || echo -1; }

mv_boot() {
	api_boot "$MV_S1" || { MV_WHY="no API socket"; return 1; }
	api_want "$MV_S1" PUT /boot-source "{\"kernel_image_path\": \"$L2_KERNEL\", \"initrd_path\": \"$L2_INITRD\", \"boot_args\": \"console=ttyS0 reboot=k panic=1 quiet\"}" 204 &&
		api_want "$MV_S1" PUT /network-interfaces/eth0 "{\"iface_id\": \"eth0\", \"guest_mac\": \"$MV_MAC\", \"host_dev_name\": \"tap0\", \"skiff_options\": \"vhost=on\"}" 204 &&
		api_want "$MV_S1" PUT /machine-config '{"vcpu_count": 1, "mem_size_mib": 256}' 204 &&
		api_want "$MV_S1" PUT /actions '{"action_type": "InstanceStart"}' 204 ||
		{ MV_WHY="configuration refused"; return 1; }
	i=0
	while [ "$(mv_sent)" -lt 0 ] && [ $i -lt 900 ]; do
		sleep 0.2
		i=$((i + 1))
	done
	[ "$(mv_sent)" -ge 0 ] || { MV_WHY="L2 did not connect: $(tail -n 3 /tmp/l2.log)"; return 1; }
}

mv_migrate() {
	rm -f /tmp/mv-mig.sock
	mig_target "$MV_S2" "$MV_MIG" '"skiff_allow": {"paths": [], "taps": ["tap0"]}' ||
		{ MV_WHY="no target API socket"; return 1; }
	wait_sock /tmp/mv-mig.sock || { MV_WHY="the target does not listen"; return 1; }
	# The data flows from now on: through the pre-copy, into pages that
	# round 0's scan found zero or sent already.
	touch "$MV_GO"
	before=$(mv_sent)
	api_want "$MV_S1" PUT /migration/send "{\"destination_url\": \"$MV_MIG\"}" 200 ||
		{ MV_WHY="migration send refused"; return 1; }
	after=$(mv_sent)
	metric mv_chunks_before "$before"
	metric mv_chunks_after "$after"
	metric mv_downtime_ms "$(sed -n 's/.*"downtime_ms": *\([0-9]*\).*/\1/p' "$API_BODY")"
	metric mv_total_ms "$(sed -n 's/.*"total_ms": *\([0-9]*\).*/\1/p' "$API_BODY")"
	metric mv_pages "$(sed -n 's/.*"pages": *\([0-9]*\).*/\1/p' "$API_BODY")"
	wait "$boot_pid"
	rc=$(cat /tmp/vmm.rc 2>/dev/null)
	grep -E 'migration|vhost' /tmp/vmm.err
	[ "$rc" = 0 ] || { MV_WHY="the source exited '$rc' after the send"; return 1; }
	grep -q 'virtio-net0: vhost stopped' /tmp/vmm.err ||
		{ MV_WHY="vhost did not run the card at the switch"; return 1; }
	mig_target_done || { MV_WHY="the receive was not a 204"; return 1; }
	[ "$after" -gt "$before" ] ||
		{ MV_WHY="no chunk went out during the pre-copy: nothing in flight checked"; return 1; }
	# L2 reads now, on the target.
	kill "$go_pid" 2>/dev/null
	i=0
	while ! grep -q '^SKIFF-L2-MARK down ' /tmp/l2-target.log && [ $i -lt 600 ]; do
		sleep 0.2
		i=$((i + 1))
	done
	# What waited unread in L2's socket through the move (hex).
	q=$(sed -n 's/^SKIFF-L2-MARK queued \([0-9A-Fa-f]*\).*/\1/p' /tmp/l2-target.log)
	metric mv_queued_bytes "$((0x${q:-0}))"
	got=$(sed -n 's/^SKIFF-L2-MARK down //p' /tmp/l2-target.log | tr -d '\r')
	want="md5=$(md5sum <"$MV_DATA" | cut -d' ' -f1) bytes=$((MV_CHUNKS * 65536))"
	echo "migrate-vhost: L2 got '$got', L1 sent '$want'"
	[ "$got" = "$want" ] || { MV_WHY="the download arrived as '$got', not '$want'"; return 1; }
	ping -c 3 -W 3 "$MV_L2" >/dev/null || { MV_WHY="L1 cannot ping the migrated L2"; return 1; }
	echo "migrate-vhost: moved"
	api_want "$MV_S2" PUT /actions '{"action_type": "SendCtrlAltDel"}' 204 ||
		{ MV_WHY="SendCtrlAltDel refused"; return 1; }
	wait "$tgt_pid"
	rc=$?
	[ "$rc" = 0 ] || { MV_WHY="the target exited '$rc' after SendCtrlAltDel"; return 1; }
}

l1() {
	MV_WHY="" tgt_pid=""
	tap_up "$MV_L1" || { fail "tap0 setup failed"; return; }
	dd if=/dev/urandom of="$MV_DATA" bs=64K count="$MV_CHUNKS" 2>/dev/null
	rm -f "$MV_SENT" "$MV_GO"
	mv_sender
	nc -l -p "$MV_PORT" -e sh /tmp/mv-send.sh &
	nc_pid=$!
	# L2 reads once this connection ends: when the sleep that nc becomes
	# is killed (bounded). It ignores L2's half-close (L2's nc has no
	# input), which would end a plain nc -l.
	nc -l -p "$MV_GO_PORT" -e sleep 200 &
	go_pid=$!
	if ! mv_boot || ! mv_migrate; then
		fail "$MV_WHY"
		tail -n 20 /tmp/vmm.err /tmp/target.err
		kill -KILL ${tgt_pid:+"$tgt_pid"} "$nc_pid" "$go_pid" "$(pidof skiff)" 2>/dev/null
		wait 2>/dev/null
		return
	fi
	kill "$nc_pid" 2>/dev/null
	pass
}

l2() {
	# The data waits in the socket through the pre-copy (ports MV_PORT,
	# MV_GO_PORT).
	l2_held_download "$MV_L2" "$MV_L1" 200 || return
	sleep 300
}
