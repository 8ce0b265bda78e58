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
# starts vhost with the log on); L1 pings L2 (its neighbour entry went
# with tap0's carrier at the kill), L2 is paused, and L1 sends SV_LINES
# numbered lines of 64 bytes (2 MiB): vhost places what TCP's window
# lets through in the buffers L2 posted, and nothing of L2 runs. A Diff,
# then (still paused) a second Full: the Diff must hold every line the
# second Full holds (at least one; a line cut between two guest buffers
# is in neither), the first Full none, and skiff's log must show vhost
# ran the card until the Diff (else the built-in path moved the frames
# and marked them itself). Then L2 resumes, reads everything, its md5
# and length are L1's, and SendCtrlAltDel ends skiff with status 0.
# With the vhost log left out of the collect (vm_dirty_gpa_take out of
# vm_dirty_collect), the Diff held 39 lines of the 339 (pages KVM's log
# had for other writes): this fails. Two earlier forms could not fail:
# one let L2 take the data before the Diff (L2's stack writes in the
# same pages, the skb's shared info at a buffer's tail, so KVM's log had
# them); one paused L2 without the ping, and L1's data waited on an ARP
# reply from the paused L2 (no line anywhere).
# Metrics: sv_diff_kib, sv_lines_in_full, sv_lines_in_diff (distinct
# lines), sv_lines_in_ram (the second Full's), sv_queued_bytes.
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

# sv_lines FILE: the numbers of the data's lines FILE holds whole, one a
# line, sorted, each once.
sv_lines() { tr -s '\000' '\n' <"$1" | grep -o -E "${SV_MARK}[0-9]{8}" | sort -u; }

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
	# L2 runs a moment (its driver and TCP back), then is paused: what
	# arrives now is placed by vhost alone in the buffers L2 posted, and
	# nothing of L2 touches those pages before the Diff. L1's neighbour
	# entry for L2 went with tap0's carrier at the kill: without a new
	# one, L1's data would wait on an ARP reply from a paused L2.
	sleep 2
	ping -c 1 -W 5 "$SV_L2" >/dev/null || { SV_WHY="L2 does not answer ping after the load"; return 1; }
	api_want "$SV_S2" PATCH /vm '{"state": "Paused"}' 204 || { SV_WHY="pause refused"; return 1; }
	before=$(cat /sys/class/net/tap0/statistics/tx_packets)
	touch "$SV_GO"
	sleep 5 # the frames land in L2's ring; TCP waits for acks
	echo "snapshot-vhost: tap0 carried $(($(cat /sys/class/net/tap0/statistics/tx_packets) - before)) frames to the paused L2"
	sv_snap "$SV_S2" Diff /tmp/sv-diff.state /tmp/sv-diff.mem &&
		sv_snap "$SV_S2" Full /tmp/sv-ram.state /tmp/sv-ram.mem ||
		{ SV_WHY="the Diff or the second Full failed"; return 1; }
	grep -E 'vhost|snapshot' /tmp/vmm.err
	grep -q 'virtio-net0: vhost stopped for a snapshot' /tmp/vmm.err ||
		{ SV_WHY="vhost did not run the card until the Diff"; return 1; }
	metric sv_diff_kib "$(du -k /tmp/sv-diff.mem | cut -f1)"
	sv_lines /tmp/sv-diff.mem >/tmp/sv-diff.lines
	sv_lines /tmp/sv-ram.mem >/tmp/sv-ram.lines
	full=$(sv_lines /tmp/sv-full.mem | wc -l) diff=$(wc -l </tmp/sv-diff.lines)
	ram=$(wc -l </tmp/sv-ram.lines) missing=$(grep -c -v -x -F -f /tmp/sv-diff.lines /tmp/sv-ram.lines)
	rm -f /tmp/sv-ram.mem
	metric sv_lines_in_full "$full"
	metric sv_lines_in_diff "$diff"
	metric sv_lines_in_ram "$ram"
	echo "snapshot-vhost: $diff lines in the Diff, $ram in RAM, $missing of them not in the Diff, $full in the Full"
	[ "$full" = 0 ] || { SV_WHY="the Full snapshot holds $full lines sent after it"; return 1; }
	[ "$ram" -gt 0 ] || { SV_WHY="no line reached the paused L2's RAM"; return 1; }
	[ "$missing" = 0 ] ||
		{ SV_WHY="the Diff lacks $missing of the $ram lines only vhost wrote"; return 1; }
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
