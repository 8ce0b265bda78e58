# SPDX-License-Identifier: Apache-2.0
# Review8 finding 5: a Diff snapshot of a guest with --vsock backend=vhost
# must hold what vhost-vsock wrote into the guest's rx buffers. skiff
# turns vhost's own dirty log on for it as for vhost-net (VHOST_F_LOG_ALL,
# the log base, VRING_F_LOG: virtio_vsock_vhost_snap.c), but Linux's
# drivers/vhost/vsock.c pops rx buffers with no log
# (vhost_get_vq_desc(..., NULL, NULL)) and never calls vhost_log_write
# (vhost-net does): only its used-ring writes can be logged, never the
# packets. In L1, curl configures `skiff run --api-sock` with the vsock
# (CID 3, backend=vhost); L2 listens on port 5000 with a process it then
# stops (SIGSTOP): L2's kernel accepts a stream and nothing reads it. A
# Full snapshot, skiff SIGKILLed, a fresh skiff loads it with
# track_dirty_pages (every page clean, vhost's log on from the load's
# activate); L1 connects, L2 is paused, and only then does the stream
# carry VVD_LINES numbered lines of 64 bytes (128 KiB, within the credit
# L2 granted): vhost's worker alone writes them into rx buffers L2 posted
# before the Full. Then a Diff and a second Full: every line the second
# Full holds must be in the Diff, the first Full holds none.
# Measured: fails on h-vsockvhost (0 of 2040 lines in the Diff, 2040 in
# the second Full); with skiff's vhost log for the vsock left off, the
# same 0 (the form discriminates: an earlier form, L2 running, passed
# even so: its stack dirtied those pages itself).
# Metrics: vvd_lines_in_full, vvd_lines_in_diff, vvd_lines_in_full2.
SLOW=1
TIMEOUT=200
L1_EXTRA_FILES="/usr/bin/curl"
L1_EXTRA_MODULES="vsock vmw_vsock_virtio_transport_common vhost_vsock"
L2_EXTRA_MODULES="vsock vmw_vsock_virtio_transport_common vmw_vsock_virtio_transport"
EXPECT="SKIFF-L2: init
vhost-vsock-diff: the Diff holds vhost-vsock's data"

VVD_S1=/tmp/vvd1.sock
VVD_S2=/tmp/vvd2.sock
VVD_LINES=2048
VVD_DATA=/tmp/vvd.data

vvd_wait() {
	i=0
	while ! grep -q "$1" "$2" 2>/dev/null && [ $i -lt $(($3 * 5)) ]; do
		sleep 0.2
		i=$((i + 1))
	done
	grep -q "$1" "$2" 2>/dev/null
}

# vvd_count FILE: the data's lines FILE holds whole.
vvd_count() { tr -s '\000' '\n' <"$1" | grep -c -F "$VVD_MARK"; }

vvd_snap() {
	: >"$3" && : >"$4"
	api_want "$1" PUT /snapshot/create "{\"snapshot_type\": \"$2\", \"snapshot_path\": \"$3\", \"mem_file_path\": \"$4\"}" 204
}

vvd_boot() {
	api_boot "$VVD_S1" || { VVD_WHY="no API socket"; return 1; }
	api_want "$VVD_S1" PUT /boot-source "{\"kernel_image_path\": \"$L2_KERNEL\", \"initrd_path\": \"$L2_INITRD\", \"boot_args\": \"console=ttyS0 reboot=k panic=1 quiet\"}" 204 &&
		api_want "$VVD_S1" PUT /machine-config '{"vcpu_count": 1, "mem_size_mib": 128}' 204 &&
		api_want "$VVD_S1" PUT /vsock '{"guest_cid": 3, "skiff_options": "backend=vhost"}' 204 &&
		api_want "$VVD_S1" PUT /actions '{"action_type": "InstanceStart"}' 204 ||
		{ VVD_WHY="configuration refused"; return 1; }
	vvd_wait "^SKIFF-L2-MARK vvd parked" /tmp/l2.log 180 ||
		{ VVD_WHY="L2 did not park its listener: $(tail -n 3 /tmp/l2.log)"; return 1; }
	api_want "$VVD_S1" PATCH /vm '{"state": "Paused"}' 204 &&
		vvd_snap "$VVD_S1" Full /tmp/vvd-full.state /tmp/vvd-full.mem ||
		{ VVD_WHY="the Full snapshot failed"; return 1; }
	kill -KILL "$(pidof skiff)" 2>/dev/null
	wait "$boot_pid" || true # killed: its status is no failure
}

vvd_load_send_diff() {
	api_boot "$VVD_S2" || { VVD_WHY="no API socket for the load"; return 1; }
	api_want "$VVD_S2" PUT /snapshot/load "{\"snapshot_path\": \"/tmp/vvd-full.state\", \"mem_backend\": {\"backend_type\": \"File\", \"backend_path\": \"/tmp/vvd-full.mem\"}, \"track_dirty_pages\": true, \"resume_vm\": true}" 204 ||
		{ VVD_WHY="the load refused"; return 1; }
	sleep 2 # the guest takes its TRANSPORT_RESET; the listener stays
	# The stream made while L2 runs, its data 3 s later, once L2 is
	# paused: only vhost's worker writes it into L2's rx buffers (L2's
	# driver cannot even take them), within the credit L2 granted.
	(sleep 3 && cat "$VVD_DATA") | timeout 60 /bin/vsock-io vsock-connect 3 5000 >/dev/null 2>/tmp/vvd-send.err &
	sleep 1
	api_want "$VVD_S2" PATCH /vm '{"state": "Paused"}' 204 || { VVD_WHY="pause refused"; return 1; }
	sleep 5
	grep -q . /tmp/vvd-send.err && { VVD_WHY="no stream to L2: $(cat /tmp/vvd-send.err)"; return 1; }
	vvd_snap "$VVD_S2" Diff /tmp/vvd-diff.state /tmp/vvd-diff.mem &&
		vvd_snap "$VVD_S2" Full /tmp/vvd-full2.state /tmp/vvd-full2.mem ||
		{ VVD_WHY="the Diff or the second Full failed"; return 1; }
	full=$(vvd_count /tmp/vvd-full.mem) diff=$(vvd_count /tmp/vvd-diff.mem)
	full2=$(vvd_count /tmp/vvd-full2.mem)
	metric vvd_lines_in_full "$full"
	metric vvd_lines_in_diff "$diff"
	metric vvd_lines_in_full2 "$full2"
	echo "vhost-vsock-diff: $diff lines in the Diff, $full2 in the second Full, $full in the first"
	[ "$full" = 0 ] || { VVD_WHY="the first Full holds $full lines sent after it"; return 1; }
	[ "$full2" -ge $((VVD_LINES / 2)) ] ||
		{ VVD_WHY="the data did not reach L2's memory ($full2 lines)"; return 1; }
	[ "$diff" -ge "$full2" ] ||
		{ VVD_WHY="the Diff holds $diff of the $full2 lines in RAM: vhost-vsock's writes were not logged"; return 1; }
	echo "vhost-vsock-diff: the Diff holds vhost-vsock's data"
}

l1() {
	VVD_WHY=""
	[ -c /dev/vhost-vsock ] || { fail "no /dev/vhost-vsock in L1 (vhost_vsock not loaded)"; return; }
	# Made here, so that no text of L2's holds the mark.
	VVD_MARK=$(printf 'skiff-%s-%s ' vsock diff)
	awk -v n="$VVD_LINES" -v m="$VVD_MARK" \
		'BEGIN { for (i = 0; i < n; i++) printf "%s%08d %37s\n", m, i, "." }' >"$VVD_DATA"
	if ! vvd_boot || ! vvd_load_send_diff; then
		fail "vhost-vsock-diff: $VVD_WHY"
		tail -n 20 /tmp/vmm.err
	else
		pass
	fi
	kill -KILL "$(pidof skiff)" 2>/dev/null
	wait 2>/dev/null
}

l2() {
	wait_for /dev/vsock || { fail "no /dev/vsock"; return; }
	/bin/vsock-io vsock-listen 5000 >/dev/null 2>&1 &
	p=$!
	sleep 2
	kill -STOP "$p"
	echo "SKIFF-L2-MARK vvd parked"
	sleep 600
}
