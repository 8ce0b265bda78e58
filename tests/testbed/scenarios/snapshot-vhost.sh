# SPDX-License-Identifier: Apache-2.0
# A Diff snapshot of a guest whose virtio-net card runs on vhost-net
# (vhost=on) holds the received data only vhost wrote. vhost's kernel
# worker writes frames into guest RAM where neither KVM's dirty log nor
# skiff's marks see them; with track_dirty_pages the build turns vhost's
# own log on and every snapshot merges it (docs/SNAPSHOT.md, "Dirty pages
# and Diff snapshots"). In L1, curl configures `skiff run --api-sock` with
# a card on tap0, skiff_options vhost=on; L2 (tcp_rmem 16 MiB) connects
# to L1's sender and to a second listener, and reads the data only once
# that second connection ends (migrate-vhost's L2): what arrives stays in
# the pages vhost wrote. A Full snapshot, skiff SIGKILLed, a fresh skiff
# loads it with track_dirty_pages (every page clean; the load's activate
# starts vhost with the log on); then L1 sends SV_LINES numbered lines
# of 64 bytes (2 MiB), waits until L2 acknowledged them all (L1's send
# queue empty), pauses L2 and takes a Diff. The Diff's memory file must
# hold at least a quarter of those lines (a line cut between two guest
# buffers is not counted), the Full one none, and skiff's log must show
# vhost ran the card until the Diff (else the built-in path moved the
# frames and marked them itself). Then L2 reads everything, its md5 and
# length are L1's, and SendCtrlAltDel ends skiff with status 0. With the
# vhost log left out of the collect, the Diff holds none of the lines.
# What it does not show: that the vhost log's merge is needed. It passed
# with the merge left out (vm_dirty_gpa_take out of vm_dirty_collect:
# 32738 lines in the Diff), since L2's stack, taking the frames, writes
# in the same pages (the skb's shared info at a buffer's tail) and KVM's
# log has them; tests/unit/test_net_vhost_log.c shows the merge. A form
# that paused L2 before the data came found no line in the Diff with the
# merge in (one pass, 143 pages): not understood yet.
# Metrics: sv_diff_kib, sv_lines_in_full, sv_lines_in_diff (it may count
# a line twice: where vhost put it and a copy the guest made),
# sv_queued_bytes.
TIMEOUT=240
SLOW=1
L1_EXTRA_FILES="/usr/bin/curl"
EXPECT="SKIFF-L2: init
snapshot-vhost: diff holds vhost's data"

SV_L1=169.254.34.1
SV_L2=169.254.34.2
SV_MAC=06:00:AC:10:22:02
SV_PORT=5200 # 0x1450 in /proc/net/tcp
SV_GO_PORT=5201
SV_LINES=32768
SV_S1=/tmp/sv1.sock
SV_S2=/tmp/sv2.sock
SV_DATA=/tmp/sv.data
SV_SENT=/tmp/sv.sent
SV_GO=/tmp/sv.go
API_BODY=/tmp/sv.body

# The sender, behind nc -e: says it is connected, waits for SV_GO, sends
# the data and says so.
sv_sender() {
	cat >/tmp/sv-send.sh <<EOF
echo connected >$SV_SENT
while [ ! -e $SV_GO ]; do sleep 0.05; done
cat $SV_DATA || exit 1
echo sent >$SV_SENT
EOF
}

# sv_count FILE: the data's lines FILE holds whole.
sv_count() { tr -s '\000' '\n' <"$1" | grep -c -F "$SV_MARK"; }

# The bytes L1's end of the data connection has not had acknowledged
# (its send queue, hex; not the listener's line, state 0A), or "gone"
# (the sender closed it and L2 acknowledged all, FIN included: the first
# pass saw that at once).
sv_unacked() {
	q=$(awk '$2 ~ /:1450$/ && $4 != "0A" { split($5, q, ":"); print q[1]; exit }' /proc/net/tcp)
	echo "${q:-gone}"
}

sv_acked() { case $(sv_unacked) in 00000000 | gone) true ;; *) false ;; esac; }

sv_snap() {
	: >"$3" && : >"$4"
	api_want "$1" PUT /snapshot/create "{\"snapshot_type\": \"$2\", \"snapshot_path\": \"$3\", \"mem_file_path\": \"$4\"}" 204
}

sv_boot() {
	api_boot "$SV_S1" || { SV_WHY="no API socket"; return 1; }
	api_want "$SV_S1" PUT /boot-source "{\"kernel_image_path\": \"$L2_KERNEL\", \"initrd_path\": \"$L2_INITRD\", \"boot_args\": \"console=ttyS0 reboot=k panic=1 quiet\"}" 204 &&
		api_want "$SV_S1" PUT /network-interfaces/eth0 "{\"iface_id\": \"eth0\", \"guest_mac\": \"$SV_MAC\", \"host_dev_name\": \"tap0\", \"skiff_options\": \"vhost=on\"}" 204 &&
		api_want "$SV_S1" PUT /machine-config '{"vcpu_count": 1, "mem_size_mib": 128}' 204 &&
		api_want "$SV_S1" PUT /actions '{"action_type": "InstanceStart"}' 204 ||
		{ SV_WHY="configuration refused"; return 1; }
	i=0
	while ! grep -q connected "$SV_SENT" 2>/dev/null && [ $i -lt 900 ]; do
		sleep 0.2
		i=$((i + 1))
	done
	grep -q connected "$SV_SENT" 2>/dev/null ||
		{ SV_WHY="L2 did not connect: $(tail -n 3 /tmp/l2.log)"; return 1; }
	sleep 1 # its second connection, made with the first
	api_want "$SV_S1" PATCH /vm '{"state": "Paused"}' 204 &&
		sv_snap "$SV_S1" Full /tmp/sv-full.state /tmp/sv-full.mem ||
		{ SV_WHY="the Full snapshot failed"; return 1; }
	kill -KILL "$(pidof skiff)" 2>/dev/null
	wait "$boot_pid" || true # killed: its status is no failure
}

sv_load_and_diff() {
	api_boot "$SV_S2" || { SV_WHY="no API socket for the load"; return 1; }
	api_want "$SV_S2" PUT /snapshot/load "{\"snapshot_path\": \"/tmp/sv-full.state\", \"mem_backend\": {\"backend_type\": \"File\", \"backend_path\": \"/tmp/sv-full.mem\"}, \"track_dirty_pages\": true, \"resume_vm\": true}" 204 ||
		{ SV_WHY="the load refused"; return 1; }
	touch "$SV_GO"
	i=0
	while ! { grep -q sent "$SV_SENT" && sv_acked; } && [ $i -lt 600 ]; do
		sleep 0.2
		i=$((i + 1))
	done
	grep -q sent "$SV_SENT" && sv_acked ||
		{ SV_WHY="L2 did not take the data ($(cat "$SV_SENT"), unacked $(sv_unacked))"; return 1; }
	api_want "$SV_S2" PATCH /vm '{"state": "Paused"}' 204 &&
		sv_snap "$SV_S2" Diff /tmp/sv-diff.state /tmp/sv-diff.mem ||
		{ SV_WHY="the Diff snapshot failed"; return 1; }
	grep -E 'vhost|snapshot' /tmp/vmm.err
	grep -q 'virtio-net0: vhost stopped for a snapshot' /tmp/vmm.err ||
		{ SV_WHY="vhost did not run the card until the Diff"; return 1; }
	metric sv_diff_kib "$(du -k /tmp/sv-diff.mem | cut -f1)"
	full=$(sv_count /tmp/sv-full.mem) diff=$(sv_count /tmp/sv-diff.mem)
	metric sv_lines_in_full "$full"
	metric sv_lines_in_diff "$diff"
	echo "snapshot-vhost: $diff of $SV_LINES lines in the Diff, $full in the Full"
	[ "$full" = 0 ] || { SV_WHY="the Full snapshot holds $full lines sent after it"; return 1; }
	[ "$diff" -ge $((SV_LINES / 4)) ] ||
		{ SV_WHY="the Diff holds $diff of the $SV_LINES lines only vhost wrote"; return 1; }
	echo "snapshot-vhost: diff holds vhost's data"
}

sv_read_and_end() {
	api_want "$SV_S2" PATCH /vm '{"state": "Resumed"}' 204 || { SV_WHY="resume refused"; return 1; }
	kill "$go_pid" 2>/dev/null # L2 reads now
	i=0
	while ! grep -q '^SKIFF-L2-MARK down ' /tmp/l2.log && [ $i -lt 600 ]; do
		sleep 0.2
		i=$((i + 1))
	done
	q=$(sed -n 's/^SKIFF-L2-MARK queued \([0-9A-Fa-f]*\).*/\1/p' /tmp/l2.log)
	metric sv_queued_bytes "$((0x${q:-0}))"
	got=$(sed -n 's/^SKIFF-L2-MARK down //p' /tmp/l2.log | tr -d '\r')
	want="md5=$(md5sum <"$SV_DATA" | cut -d' ' -f1) bytes=$((SV_LINES * 64))"
	echo "snapshot-vhost: L2 got '$got', L1 sent '$want'"
	[ "$got" = "$want" ] || { SV_WHY="the data arrived as '$got', not '$want'"; return 1; }
	api_want "$SV_S2" PUT /actions '{"action_type": "SendCtrlAltDel"}' 204 ||
		{ SV_WHY="SendCtrlAltDel refused"; return 1; }
	wait "$boot_pid"
	rc=$(cat /tmp/vmm.rc 2>/dev/null)
	[ "$rc" = 0 ] || { SV_WHY="skiff exited '$rc' after SendCtrlAltDel"; return 1; }
}

l1() {
	SV_WHY=""
	# Made here, so that no text of L2's (this file, which L2 reads too)
	# holds the mark: the first pass found it twice in the Full snapshot.
	SV_MARK=$(printf 'skiff-%s-%s ' vhost diff)
	tap_up "$SV_L1" || { fail "tap0 setup failed"; return; }
	awk -v n="$SV_LINES" -v m="$SV_MARK" \
		'BEGIN { for (i = 0; i < n; i++) printf "%s%08d %37s\n", m, i, "." }' >"$SV_DATA"
	rm -f "$SV_SENT" "$SV_GO"
	sv_sender
	nc -l -p "$SV_PORT" -e sh /tmp/sv-send.sh &
	nc_pid=$!
	# L2 reads once this connection ends (migrate-vhost's second one).
	nc -l -p "$SV_GO_PORT" -e sleep 300 &
	go_pid=$!
	if ! sv_boot || ! sv_load_and_diff || ! sv_read_and_end; then
		fail "snapshot-vhost: $SV_WHY"
		tail -n 20 /tmp/vmm.err
		kill -KILL "$nc_pid" "$go_pid" "$(pidof skiff)" 2>/dev/null
		wait 2>/dev/null
		return
	fi
	kill "$nc_pid" 2>/dev/null
	pass
}

l2() {
	l2_held_download "$SV_L2" "$SV_L1" 400 || return # ports: SV_PORT, SV_GO_PORT
	sleep 600
}
