# SPDX-License-Identifier: Apache-2.0
# Snapshot, restore and live migration of a guest with --vsock
# backend=vhost (issue 34; src/devices/virtio-vsock/virtio_vsock_vhost_snap.c),
# as QEMU's vhost-vsock: the streams are L1's kernel's and cannot move, so
# the guest's are reset and both sides connect anew. In L1, curl
# configures `skiff run --api-sock` with the vsock (PUT /vsock,
# skiff_options "backend=vhost", CID 3); L1 listens on AF_VSOCK port 5001
# (one stream at a time). L2 holds one stream to it, idle
# (/bin/vsock-io vsock-hold: it sends nothing, so only a reset can end
# it), says "hold K up", and "hold K ended rc=R" when it ends (then holds
# a new one); L2 also listens on port 5000 and prints what each stream
# from L1 carries.
# - Before: hold 1 up, and a stream from L1 to CID 3 port 5000 reaches L2.
# - Paused, a Full snapshot, skiff SIGKILLed (the kernel frees CID 3);
#   a fresh skiff loads it (its own /dev/vhost-vsock takes CID 3):
#   L2 did not boot again, its held stream ends with an error (rc=1: the
#   TRANSPORT_RESET; without it the idle read would wait for ever), and a
#   new stream from L1 to CID 3 reaches it.
# - Once L2 holds a new stream, that skiff live-migrates the guest to a
#   third on the same L1 (the source gives CID 3 up at the switch, the
#   target takes it): the source exits 0, the held stream ends with an
#   error on the target, a new stream from L1 reaches L2 there, and the
#   target exits 0 after SendCtrlAltDel.
# Metrics: vvsnap_load_ms, vvsnap_mig_downtime_ms, vvsnap_mig_total_ms.
# SLOW: out of the default suite (its bounds budget is nearly full); run
# it by name.
SLOW=1
TIMEOUT=200
L1_EXTRA_FILES="/usr/bin/curl"
L1_EXTRA_MODULES="vsock vmw_vsock_virtio_transport_common vhost_vsock"
L2_EXTRA_MODULES="vsock vmw_vsock_virtio_transport_common vmw_vsock_virtio_transport"
EXPECT="SKIFF-L2: init
vhost-vsock-snap: restored
vhost-vsock-snap: migrated"

VVS_S1=/tmp/vvs1.sock
VVS_S2=/tmp/vvs2.sock
VVS_S3=/tmp/vvs3.sock
VVS_STATE=/tmp/vvs.state
VVS_MEM=/tmp/vvs.mem
VVS_MIG=unix:/tmp/vvs-mig.sock

# vvs_wait PATTERN FILE SECONDS: a line of FILE matches, within SECONDS.
vvs_wait() {
	i=0
	while ! grep -q "$1" "$2" 2>/dev/null && [ $i -lt $(($3 * 5)) ]; do
		sleep 0.2
		i=$((i + 1))
	done
	grep -q "$1" "$2" 2>/dev/null
}

# vvs_new N LOG: a new stream from L1 to CID 3 port 5000 carries
# "vsock N", which L2 prints (in LOG). Retried while L2's listener is
# between two streams.
vvs_new() {
	i=0
	until echo "vsock $1" | timeout 10 /bin/vsock-io vsock-connect 3 5000 >/dev/null 2>/tmp/vvs-new.err; do
		i=$((i + 1))
		[ $i -lt 60 ] || return 1
		sleep 0.5
	done
	vvs_wait "^SKIFF-L2-MARK vsock got vsock $1" "$2" 20
}

# vvs_held LOG: the number of the last stream L2 said it holds, or "".
vvs_held() { sed -n 's/^SKIFF-L2-MARK hold \([0-9]*\) up.*/\1/p' "$1" | tail -n1; }

vvs_boot_and_save() {
	api_boot "$VVS_S1" || { VVS_WHY="no API socket"; return 1; }
	api_want "$VVS_S1" PUT /boot-source "{\"kernel_image_path\": \"$L2_KERNEL\", \"initrd_path\": \"$L2_INITRD\", \"boot_args\": \"console=ttyS0 reboot=k panic=1 quiet\"}" 204 &&
		api_want "$VVS_S1" PUT /machine-config '{"vcpu_count": 1, "mem_size_mib": 256}' 204 &&
		api_want "$VVS_S1" PUT /vsock '{"guest_cid": 3, "skiff_options": "backend=vhost"}' 204 &&
		api_want "$VVS_S1" PUT /actions '{"action_type": "InstanceStart"}' 204 ||
		{ VVS_WHY="configuration refused"; return 1; }
	vvs_wait "^SKIFF-L2-MARK hold 1 up" /tmp/l2.log 180 ||
		{ VVS_WHY="L2 holds no stream to L1's port 5001: $(grep 'MARK hold' /tmp/l2.log | tail -n 2)"; return 1; }
	vvs_new 1 /tmp/l2.log || { VVS_WHY="no stream from L1 to L2 before the snapshot: $(cat /tmp/vvs-new.err)"; return 1; }
	api_want "$VVS_S1" PATCH /vm '{"state": "Paused"}' 204 || { VVS_WHY="pause refused"; return 1; }
	: >"$VVS_STATE" && : >"$VVS_MEM"
	api_want "$VVS_S1" PUT /snapshot/create "{\"snapshot_type\": \"Full\", \"snapshot_path\": \"$VVS_STATE\", \"mem_file_path\": \"$VVS_MEM\"}" 204 ||
		{ VVS_WHY="create refused"; return 1; }
	kill -KILL "$(pidof skiff)" 2>/dev/null
	wait "$boot_pid"
	cp /tmp/l2.log /tmp/l2-before.log
	! grep -q '^SKIFF-L2-MARK hold 1 ended' /tmp/l2-before.log ||
		{ VVS_WHY="L2's held stream ended before the snapshot"; return 1; }
}

vvs_load_and_check() {
	api_boot "$VVS_S2" || { VVS_WHY="no API socket"; return 1; }
	t0=$(now_ns)
	api_want "$VVS_S2" PUT /snapshot/load "{\"snapshot_path\": \"$VVS_STATE\", \"mem_backend\": {\"backend_type\": \"File\", \"backend_path\": \"$VVS_MEM\"}, \"resume_vm\": true}" 204 ||
		{ VVS_WHY="load refused"; return 1; }
	metric vvsnap_load_ms $((($(now_ns) - t0) / 1000000))
	vvs_wait "^SKIFF-L2-MARK hold 1 ended rc=1" /tmp/l2.log 60 ||
		{ VVS_WHY="L2's held stream was not reset: $(grep 'MARK hold' /tmp/l2.log | tail -n 2)"; return 1; }
	grep 'hold 1 ended' /tmp/l2.log
	! grep -q '^SKIFF-L2: init' /tmp/l2.log || { VVS_WHY="L2 booted again"; return 1; }
	vvs_new 2 /tmp/l2.log || { VVS_WHY="no new stream from L1 to the restored L2: $(cat /tmp/vvs-new.err)"; return 1; }
	echo "vhost-vsock-snap: restored"
}

# The restored guest moves to a third skiff on this L1; the source exits 0.
vvs_migrate() {
	vvs_wait "^SKIFF-L2-MARK hold [2-9] up" /tmp/l2.log 60 ||
		{ VVS_WHY="L2 holds no new stream after the load: $(grep 'MARK hold' /tmp/l2.log | tail -n 2)"; return 1; }
	k=$(vvs_held /tmp/l2.log)
	rm -f "$VVS_S3" /tmp/vvs-mig.sock
	mig_target "$VVS_S3" "$VVS_MIG" || { VVS_WHY="the target has no API socket"; return 1; }
	wait_sock /tmp/vvs-mig.sock || { VVS_WHY="the target does not listen"; return 1; }
	API_BODY=/tmp/send.body api_want "$VVS_S2" PUT /migration/send "{\"destination_url\": \"$VVS_MIG\"}" 200 ||
		{ VVS_WHY="migration send refused"; return 1; }
	metric vvsnap_mig_downtime_ms "$(sed -n 's/.*"downtime_ms": *\([0-9]*\).*/\1/p' /tmp/send.body)"
	metric vvsnap_mig_total_ms "$(sed -n 's/.*"total_ms": *\([0-9]*\).*/\1/p' /tmp/send.body)"
	wait "$boot_pid"
	rc=$(cat /tmp/vmm.rc 2>/dev/null)
	[ "$rc" = 0 ] || { VVS_WHY="the source exited '$rc' after the send"; return 1; }
	mig_target_done || { VVS_WHY="the receive was not a 204"; return 1; }
	vvs_wait "^SKIFF-L2-MARK hold $k ended rc=1" /tmp/l2-target.log 60 ||
		{ VVS_WHY="L2's held stream $k was not reset on the target: $(grep 'MARK hold' /tmp/l2-target.log | tail -n 2)"; return 1; }
	grep "hold $k ended" /tmp/l2-target.log
	vvs_new 3 /tmp/l2-target.log || { VVS_WHY="no new stream from L1 to the migrated L2: $(cat /tmp/vvs-new.err)"; return 1; }
	echo "vhost-vsock-snap: migrated"
	api_want "$VVS_S3" PUT /actions '{"action_type": "SendCtrlAltDel"}' 204 ||
		{ VVS_WHY="SendCtrlAltDel refused"; return 1; }
	wait "$tgt_pid"
	rc=$?
	[ "$rc" = 0 ] || { VVS_WHY="the target exited '$rc' after SendCtrlAltDel"; return 1; }
}

l1() {
	VVS_WHY=""
	tgt_pid=""
	[ -c /dev/vhost-vsock ] || { fail "no /dev/vhost-vsock in L1 (vhost_vsock not loaded)"; return; }
	# L1's listener for L2's held streams, one at a time (bounded).
	(
		j=0
		while [ $j -lt 8 ]; do
			j=$((j + 1))
			timeout 300 /bin/vsock-io vsock-listen 5001 >/dev/null 2>>/tmp/hold-l1.err
		done
	) &
	step=""
	vvs_boot_and_save || step="before the snapshot"
	[ -n "$step" ] || vvs_load_and_check || step="restore"
	[ -n "$step" ] || vvs_migrate || step="migration"
	if [ -n "$step" ]; then
		fail "$step: $VVS_WHY"
		tail -n 20 /tmp/vmm.err /tmp/target.err 2>/dev/null
		kill -KILL ${tgt_pid:+"$tgt_pid"} "$(pidof skiff)" 2>/dev/null
	else
		pass
	fi
	cat /tmp/hold-l1.err 2>/dev/null
	killall vsock-io 2>/dev/null
	wait 2>/dev/null
}

# L2's listener: one stream from L1 at a time, its first bytes printed.
vvs_l2_listen() {
	k=0
	while [ $k -lt 20 ]; do
		k=$((k + 1))
		got=$(timeout 300 /bin/vsock-io vsock-listen 5000 2>/dev/null | head -c 64)
		echo "SKIFF-L2-MARK vsock got $got"
	done
}

l2() {
	wait_for /dev/vsock || { fail "no /dev/vsock"; return; }
	vvs_l2_listen &
	k=0
	# A held stream, idle, to L1; when it ends, another (bounded).
	while [ $k -lt 8 ]; do
		k=$((k + 1))
		timeout 300 /bin/vsock-io vsock-hold 2 5001 "SKIFF-L2-MARK hold $k up" 2>&1
		echo "SKIFF-L2-MARK hold $k ended rc=$?"
		sleep 1
	done
	sleep 300 # until Ctrl-Alt-Del
}
