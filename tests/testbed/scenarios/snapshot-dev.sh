# SPDX-License-Identifier: Apache-2.0
# Snapshot, restore and live migration of a guest with devices doing I/O,
# on a real KVM (issue 34.1, 34.3, 34.4). In L1, curl configures `skiff
# run --api-sock` with a virtio-blk drive (a 16 MiB image), a virtio-net
# interface on tap0, an e1000 on tap1 (skiff_options model=e1000), an
# entropy device, a balloon, inflated to 32 MiB before the snapshot,
# and a vsock (uds /tmp/sd-v.sock, L2 listening on port 5000 with
# /bin/vsock-io, one stream at a time).
# L2 runs an iperf3 stream to L1 (TCP, 2 Mbit/s, load across the
# snapshot), holds one TCP connection to
# L1's nc on which it sends "conn N" every tick, and every tick writes a
# numbered 512-byte record to vda (O_DIRECT), reads back every record
# written so far and compares them, pings L1 through both cards and reads
# /dev/hwrng. Once L2 ticked 6 times with all of them ok and L1 sent it a
# line over a vsock stream, it is paused, snapshotted and its
# skiff SIGKILLed; a fresh skiff loads the snapshot (the drive reopened
# and locked at its path, tap0 by name, the dead skiff's vsock socket
# file removed first: Firecracker's rule). L2 must go on from its next tick
# with the same token and every check ok (the records from before the
# snapshot read back from the image), L1 pings it, its iperf3 stream, if
# it ended, ended with success, and the balloon's statistics show it
# still inflated, and a NEW vsock stream from L1 reaches it (the old ones
# were reset: TRANSPORT_RESET). Then that skiff live-migrates the guest to a third
# (PUT /migration/receive and /send over a Unix socket; the image's lock
# and the vsock's uds path handed over): the source exits 0, L2 ticks on at the target with every
# check ok, an iperf3 stream from L1 to L2 running across the move ends
# well, and L1's end of the one TCP connection has received every
# tick's line from the first to three after the migration, in order (the
# connection lived through the kill and the move), and the balloon
# deflates to 0 on the target's PATCH, and a new vsock stream from L1
# reaches L2 through the target's listener on the same path. After SendCtrlAltDel
# the image holds the first and the last tick's records. Metrics:
# snapdev_create_ms, snapdev_state_bytes, snapdev_load_ms,
# snapdev_load_to_tick_ms, snapdev_mig_downtime_ms, snapdev_mig_total_ms.
TIMEOUT=150 # 44 s measured alone before the migration was added
L1_EXTRA_FILES="/usr/bin/curl"
L2_EXTRA_MODULES="virtio_rng virtio_balloon e1000 vsock vmw_vsock_virtio_transport_common vmw_vsock_virtio_transport"
EXPECT="SKIFF-L2: init
snapshot-dev: restored
snapshot-dev: migrated"

SD_L1=169.254.31.1
SD_L2=169.254.31.2
SD_MAC=06:00:AC:10:1F:02
SD_E1K_L1=169.254.32.1
SD_E1K_L2=169.254.32.2
SD_E1K_MAC=06:00:ac:10:20:02
SD_IMG=/tmp/sd.img
SD_S1=/tmp/sd1.sock
SD_S2=/tmp/sd2.sock
SD_STATE=/tmp/sd.state
SD_MEM=/tmp/sd.mem
SD_S3=/tmp/sd3.sock
SD_MIG=unix:/tmp/sd-mig.sock
SD_VSOCK=/tmp/sd-v.sock
# The receive's skiff_allow (docs/MIGRATION.md): the image and the vsock's
# socket by name (an entry admits itself; the socket is the source's
# until it lets go), both taps.
SD_ALLOW="\"skiff_allow\": {\"paths\": [\"$SD_IMG\", \"$SD_VSOCK\"], \"taps\": [\"tap0\", \"tap1\"]}"

# sd_want SOCK METHOD PATH JSON WANT: api_want, the body in $SD_BODY.
SD_BODY=/tmp/sd.body
API_BODY=$SD_BODY
sd_want() { api_want "$@"; }
sd_start() { api_boot "$1"; }

sd_stop() {
	kill -KILL "$(pidof skiff)" 2>/dev/null
	wait "$boot_pid"
}

# sd_ticks [FILE]: L2's tick lines with every check ok (in FILE: the
# target's console file, which keeps the UART's \r).
sd_ticks() {
	c=$(grep -c '^SKIFF-L2-MARK tick .* disk=ok net=ok rng=ok e1000=ok' "${1:-/tmp/l2.log}" 2>/dev/null)
	echo "${c:-0}"
}

# sd_wait_ticks N SECONDS [FILE]
sd_wait_ticks() {
	i=0
	while [ "$(sd_ticks "${3:-}")" -lt "$1" ] && [ $i -lt $(($2 * 5)) ]; do
		sleep 0.2
		i=$((i + 1))
	done
	[ "$(sd_ticks "${3:-}")" -ge "$1" ]
}

# sd_tick FILE FIELD first|last: a field of a tick line (3: number, 5: token).
sd_tick() {
	grep '^SKIFF-L2-MARK tick ' "$1" | if [ "$3" = first ]; then head -n1; else tail -n1; fi |
		tr -d '\r' | cut -d' ' -f"$2"
}

# sd_balloon_at SOCK MIB up|down: until the balloon's actual_mib is at
# least (up) or at most (down) MIB, 30 s at most.
sd_balloon_at() {
	i=0
	while [ $i -lt 150 ]; do
		sd_want "$1" GET /balloon/statistics "" 200 >/dev/null
		a=$(sed -n 's/.*"actual_mib":\([0-9]*\).*/\1/p' "$SD_BODY")
		if [ -n "$a" ]; then
			if [ "$3" = up ] && [ "$a" -ge "$2" ]; then return 0; fi
			if [ "$3" = down ] && [ "$a" -le "$2" ]; then return 0; fi
		fi
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}

# sd_vsock N LOG: a new vsock stream from L1 to L2's port 5000 carries
# "vsock N", which L2 prints (in LOG). Retried while L2's listener is
# between two streams (a CONNECT nobody accepts ends without an OK).
sd_vsock() {
	i=0
	until echo "vsock $1" | timeout 10 /bin/vsock-io uds-connect "$SD_VSOCK" 5000 >/dev/null 2>/tmp/sd-vsock.err; do
		i=$((i + 1))
		[ $i -lt 60 ] || return 1
		sleep 0.5
	done
	i=0
	while ! grep -q "^SKIFF-L2-MARK vsock got vsock $1" "$2" && [ $i -lt 100 ]; do
		sleep 0.2
		i=$((i + 1))
	done
	grep -q "^SKIFF-L2-MARK vsock got vsock $1" "$2"
}

sd_boot_and_save() {
	sd_start "$SD_S1" || { SD_WHY="no API socket"; return 1; }
	sd_want "$SD_S1" PUT /boot-source "{\"kernel_image_path\": \"$L2_KERNEL\", \"initrd_path\": \"$L2_INITRD\", \"boot_args\": \"console=ttyS0 reboot=k panic=1 quiet\"}" 204 &&
		sd_want "$SD_S1" PUT /drives/data "{\"drive_id\": \"data\", \"path_on_host\": \"$SD_IMG\", \"is_root_device\": false, \"is_read_only\": false}" 204 &&
		sd_want "$SD_S1" PUT /network-interfaces/eth0 "{\"iface_id\": \"eth0\", \"guest_mac\": \"$SD_MAC\", \"host_dev_name\": \"tap0\"}" 204 &&
		sd_want "$SD_S1" PUT /network-interfaces/eth1 "{\"iface_id\": \"eth1\", \"guest_mac\": \"$SD_E1K_MAC\", \"host_dev_name\": \"tap1\", \"skiff_options\": \"model=e1000\"}" 204 &&
		sd_want "$SD_S1" PUT /entropy '{}' 204 &&
		sd_want "$SD_S1" PUT /vsock "{\"guest_cid\": 3, \"uds_path\": \"$SD_VSOCK\"}" 204 &&
		sd_want "$SD_S1" PUT /balloon '{"amount_mib": 0, "deflate_on_oom": false, "stats_polling_interval_s": 1}' 204 &&
		sd_want "$SD_S1" PUT /machine-config '{"vcpu_count": 1, "mem_size_mib": 256}' 204 &&
		sd_want "$SD_S1" PUT /actions '{"action_type": "InstanceStart"}' 204 ||
		{ SD_WHY="configuration refused"; return 1; }
	sd_wait_ticks 6 180 || { SD_WHY="L2 did not tick 6 times with its devices ok"; return 1; }
	sd_vsock 1 /tmp/l2.log || { SD_WHY="no vsock stream to L2 before the snapshot: $(cat /tmp/sd-vsock.err)"; return 1; }
	sd_want "$SD_S1" PATCH /balloon '{"amount_mib": 32}' 204 || { SD_WHY="PATCH /balloon refused"; return 1; }
	sd_balloon_at "$SD_S1" 31 up || { SD_WHY="the balloon did not inflate to 32 MiB: $(cat /tmp/sd.body)"; return 1; }
	sd_want "$SD_S1" PATCH /vm '{"state": "Paused"}' 204 || { SD_WHY="pause refused"; return 1; }
	: >"$SD_STATE" && : >"$SD_MEM"
	t0=$(now_ns)
	sd_want "$SD_S1" PUT /snapshot/create "{\"snapshot_type\": \"Full\", \"snapshot_path\": \"$SD_STATE\", \"mem_file_path\": \"$SD_MEM\"}" 204 ||
		{ SD_WHY="create refused"; return 1; }
	metric snapdev_create_ms $((($(now_ns) - t0) / 1000000))
	metric snapdev_state_bytes "$(wc -c <"$SD_STATE")"
	sd_stop
	cp /tmp/l2.log /tmp/l2-before.log
}

sd_load_and_check() {
	sd_start "$SD_S2" || { SD_WHY="no API socket"; return 1; }
	rm -f "$SD_VSOCK" # the SIGKILLed skiff's socket file
	t0=$(now_ns)
	sd_want "$SD_S2" PUT /snapshot/load "{\"snapshot_path\": \"$SD_STATE\", \"mem_backend\": {\"backend_type\": \"File\", \"backend_path\": \"$SD_MEM\"}, \"resume_vm\": true}" 204 ||
		{ SD_WHY="load refused"; return 1; }
	metric snapdev_load_ms $((($(now_ns) - t0) / 1000000))
	sd_wait_ticks 1 60 || { SD_WHY="no tick with every device ok after the load: $(grep 'MARK tick' /tmp/l2.log | tail -n1)"; return 1; }
	metric snapdev_load_to_tick_ms $((($(now_ns) - t0) / 1000000))
	sd_wait_ticks 5 60 || { SD_WHY="L2 ticked $(sd_ticks) times ok after the load, not 5: $(grep 'MARK tick' /tmp/l2.log | tail -n1)"; return 1; }
	last=$(sd_tick /tmp/l2-before.log 3 last) next=$(sd_tick /tmp/l2.log 3 first)
	tok0=$(sd_tick /tmp/l2-before.log 5 last) tok1=$(sd_tick /tmp/l2.log 5 last)
	echo "snapshot-dev: tick $last before, $next after; token $tok0 / $tok1"
	[ "$next" -gt "$last" ] && [ "$next" -le $((last + 2)) ] ||
		{ SD_WHY="L2 went on from tick $next after tick $last"; return 1; }
	! grep -q '^SKIFF-L2: init' /tmp/l2.log || { SD_WHY="L2 booted again"; return 1; }
	[ -n "$tok0" ] && [ "$tok0" = "$tok1" ] || { SD_WHY="L2's token changed"; return 1; }
	! grep -q '^SKIFF-L2-MARK tick .*=bad' /tmp/l2.log ||
		{ SD_WHY="a check failed after the load: $(grep 'MARK tick .*=bad' /tmp/l2.log | head -n1)"; return 1; }
	ping -c 3 -W 3 "$SD_L2" >/dev/null || { SD_WHY="L1 cannot ping the restored L2"; return 1; }
	# The stream is load across the snapshot; that TCP lives through it
	# is the nc connection's check (sd_migrate), which waits for no clock.
	# An iperf3 that ended must have ended well; one still running (a slow,
	# loaded machine) is said, not failed.
	if grep -q '^SKIFF-L2-MARK iperf3 rc=' /tmp/l2.log; then
		grep -q '^SKIFF-L2-MARK iperf3 rc=0' /tmp/l2.log ||
			{ SD_WHY="L2's iperf3 stream failed: $(grep 'MARK iperf3' /tmp/l2.log) $(tail -n 3 /tmp/iperf3-s.log)"; return 1; }
	else
		echo "snapshot-dev: L2's iperf3 stream has not ended yet"
	fi
	sd_balloon_at "$SD_S2" 31 up && grep -q '"target_mib":32' "$SD_BODY" ||
		{ SD_WHY="the restored balloon is not at 32 MiB: $(cat "$SD_BODY")"; return 1; }
	sd_vsock 2 /tmp/l2.log || { SD_WHY="no new vsock stream to the restored L2: $(cat /tmp/sd-vsock.err)"; return 1; }
	echo "snapshot-dev: restored"
}

# The restored guest moves to a third skiff; the source exits 0.
sd_migrate() {
	rm -f /tmp/sd-mig.sock
	mig_target "$SD_S3" "$SD_MIG" "$SD_ALLOW" || { SD_WHY="the target has no API socket"; return 1; }
	wait_sock /tmp/sd-mig.sock || { SD_WHY="the target does not listen"; return 1; }
	# A second stream, L1 to L2's iperf3 server (port 5202), running when
	# the send starts and ending after it (issue 34.4): it must end well.
	timeout 60 iperf3 -c "$SD_L2" -p 5202 -t 8 -b 4M --forceflush >/tmp/iperf3-mig.log 2>&1 &
	mig_iperf=$!
	i=0
	while ! grep -q ' sec ' /tmp/iperf3-mig.log && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q ' sec ' /tmp/iperf3-mig.log ||
		{ SD_WHY="no iperf3 stream to L2 before the send: $(tail -n 3 /tmp/iperf3-mig.log)"; return 1; }
	sd_want "$SD_S2" PUT /migration/send "{\"destination_url\": \"$SD_MIG\"}" 200 ||
		{ SD_WHY="migration send refused"; return 1; }
	metric snapdev_mig_downtime_ms "$(sed -n 's/.*"downtime_ms": *\([0-9]*\).*/\1/p' /tmp/sd.body)"
	metric snapdev_mig_total_ms "$(sed -n 's/.*"total_ms": *\([0-9]*\).*/\1/p' /tmp/sd.body)"
	wait "$boot_pid"
	rc=$(cat /tmp/vmm.rc 2>/dev/null)
	[ "$rc" = 0 ] || { SD_WHY="the source exited '$rc' after the send"; return 1; }
	mig_target_done || { SD_WHY="the receive was not a 204"; return 1; }
	sd_wait_ticks 3 60 /tmp/l2-target.log ||
		{ SD_WHY="L2 ticked $(sd_ticks /tmp/l2-target.log) times ok on the target, not 3: $(grep 'MARK tick' /tmp/l2-target.log | tail -n1)"; return 1; }
	! grep -q '^SKIFF-L2-MARK tick .*=bad' /tmp/l2-target.log ||
		{ SD_WHY="a check failed on the target: $(grep 'MARK tick .*=bad' /tmp/l2-target.log | head -n1)"; return 1; }
	last=$(sd_tick /tmp/l2.log 3 last) next=$(sd_tick /tmp/l2-target.log 3 first)
	[ "$next" -gt "$last" ] && [ "$next" -le $((last + 2)) ] ||
		{ SD_WHY="L2 went on from tick $next on the target after tick $last"; return 1; }
	ping -c 3 -W 3 "$SD_L2" >/dev/null || { SD_WHY="L1 cannot ping the migrated L2"; return 1; }
	wait "$mig_iperf" ||
		{ SD_WHY="the iperf3 stream across the migration failed: $(tail -n 4 /tmp/iperf3-mig.log | tr '\n' ' ')"; return 1; }
	grep -q 'receiver$' /tmp/iperf3-mig.log ||
		{ SD_WHY="the iperf3 stream across the migration has no receiver line"; return 1; }
	echo "snapshot-dev: iperf3 across the migration: $(grep 'receiver$' /tmp/iperf3-mig.log | tr -s ' ')"
	# One TCP connection from the boot to here: every line, in order.
	want=$((next + 2))
	i=0
	while ! grep -qx "conn $want" /tmp/conn.rx && [ $i -lt 150 ]; do
		sleep 0.2
		i=$((i + 1))
	done
	seq 1 "$want" >/tmp/conn.want
	sed -n "s/^conn //p" /tmp/conn.rx | head -n "$want" | cmp -s - /tmp/conn.want ||
		{ SD_WHY="L2's TCP connection did not carry ticks 1-$want: $(tr '\n' ' ' </tmp/conn.rx | tail -c 200)"; return 1; }
	sd_want "$SD_S3" PATCH /balloon '{"amount_mib": 0}' 204 || { SD_WHY="PATCH /balloon refused on the target"; return 1; }
	sd_balloon_at "$SD_S3" 0 down || { SD_WHY="the balloon did not deflate on the target: $(cat "$SD_BODY")"; return 1; }
	# The uds path moved with the guest: the target listens on it now.
	sd_vsock 3 /tmp/l2-target.log || { SD_WHY="no new vsock stream to the migrated L2: $(cat /tmp/sd-vsock.err)"; return 1; }
	echo "snapshot-dev: migrated"
	sd_want "$SD_S3" PUT /actions '{"action_type": "SendCtrlAltDel"}' 204 ||
		{ SD_WHY="SendCtrlAltDel refused"; return 1; }
	wait "$tgt_pid"
	rc=$?
	[ "$rc" = 0 ] || { SD_WHY="the target exited '$rc' after SendCtrlAltDel"; return 1; }
	# The records as the host's image holds them.
	n=$(sd_tick /tmp/l2-target.log 3 last) tok=$(sd_tick /tmp/l2-target.log 5 last)
	for k in 1 "$n"; do
		got=$(dd if="$SD_IMG" bs=512 skip="$k" count=1 2>/dev/null | tr -d '\000')
		[ "$got" = "record $k $tok" ] || { SD_WHY="the image's record $k is '$got'"; return 1; }
	done
}

sd_cleanup() {
	kill -KILL ${tgt_pid:+"$tgt_pid"} "$(pidof skiff)" 2>/dev/null
	killall nc sleep 2>/dev/null
	wait 2>/dev/null
}

l1() {
	SD_WHY=""
	tap_up "$SD_L1" && ip tuntap add tap1 mode tap && ip addr add "$SD_E1K_L1/24" dev tap1 &&
		ip link set tap1 up || { fail "tap0 or tap1 setup failed"; return; }
	truncate -s 16M "$SD_IMG"
	iperf3 -s -1 >/tmp/iperf3-s.log 2>&1 &
	rm -f "$SD_VSOCK"
	# nc ends when its stdin does: the sleep keeps it open (bounded).
	sleep 300 | nc -l -p 5003 >/tmp/conn.rx &
	tgt_pid=""
	if ! sd_boot_and_save; then
		fail "before the snapshot: $SD_WHY"
		tail -n 20 /tmp/vmm.err
		sd_cleanup
		return
	fi
	if ! sd_load_and_check; then
		fail "restore: $SD_WHY"
		tail -n 20 /tmp/vmm.err
		sd_cleanup
		return
	fi
	if ! sd_migrate; then
		fail "migration: $SD_WHY"
		tail -n 20 /tmp/vmm.err /tmp/target.err
		sd_cleanup
		return
	fi
	killall nc sleep 2>/dev/null
	pass
}

# sd_l2_tick N TOKEN: record N on vda, every record read back, a ping, hwrng.
sd_l2_tick() {
	printf 'record %s %s' "$1" "$2" | dd of=/dev/vda bs=512 seek="$1" conv=sync oflag=direct 2>/dev/null &&
		printf 'record %s %s' "$1" "$2" | dd bs=512 conv=sync 2>/dev/null >>/tmp/expect &&
		dd if=/dev/vda bs=512 skip=1 count="$1" iflag=direct 2>/dev/null | cmp -s - /tmp/expect &&
		d=ok || d=bad
	ping -c 1 -W 3 "$SD_L1" >/dev/null 2>&1 && p=ok || p=bad
	# A subshell: a broken connection's SIGPIPE ends it, not the loop.
	(echo "conn $1" >&5) 2>/dev/null
	[ "$(timeout 5 head -c 16 /dev/hwrng | wc -c)" = 16 ] && r=ok || r=bad
	ping -c 1 -W 3 "$SD_E1K_L1" >/dev/null 2>&1 && e=ok || e=bad
	echo "SKIFF-L2-MARK tick $1 $(cut -d' ' -f1 /proc/uptime) $2 disk=$d net=$p rng=$r e1000=$e"
}

# L2's vsock listener: one stream at a time, its bytes printed (bounded:
# 20 streams). A stream the TRANSPORT_RESET broke ends it too: it listens
# again.
sd_l2_vsock() {
	wait_for /dev/vsock || { echo "SKIFF-L2-MARK vsock: no /dev/vsock"; return; }
	k=0
	while [ $k -lt 20 ]; do
		k=$((k + 1))
		got=$(timeout 300 /bin/vsock-io vsock-listen 5000 2>/dev/null | head -c 64)
		echo "SKIFF-L2-MARK vsock got $got"
	done
}

l2() {
	wait_for /sys/class/net/eth0 && wait_for /dev/vda && wait_for /dev/hwrng ||
		{ fail "L2 lacks eth0, vda or hwrng"; return; }
	wait_for /sys/class/net/eth1 || { fail "L2 lacks its second card"; return; }
	# Which card is which: by MAC (probe order names them).
	for i in eth0 eth1; do
		if [ "$(cat /sys/class/net/$i/address)" = "$SD_E1K_MAC" ]; then
			ip addr add "$SD_E1K_L2/24" dev "$i" || { fail "$i setup failed"; return; }
		else
			ip addr add "$SD_L2/24" dev "$i" || { fail "$i setup failed"; return; }
		fi
		ip link set "$i" up
	done
	token=$(cat /proc/sys/kernel/random/uuid)
	: >/tmp/expect
	mkfifo /tmp/conn
	(
		nc "$SD_L1" 5003 </tmp/conn >/dev/null
		echo "SKIFF-L2-MARK conn: nc exited $?"
	) &
	exec 5>/tmp/conn
	sd_l2_vsock &
	iperf3 -s -1 -D -p 5202 # the stream L1 sends across the migration
	(
		iperf3 -c "$SD_L1" -t 20 -b 2M >/tmp/iperf3-c.log 2>&1
		echo "SKIFF-L2-MARK iperf3 rc=$? $(grep -E 'sender|receiver' /tmp/iperf3-c.log | tr -s ' ' | tr '\n' ' ')"
	) &
	n=0
	# Until Ctrl-Alt-Del ends it (bounded: 300 ticks).
	while [ $n -lt 300 ]; do
		n=$((n + 1))
		sd_l2_tick "$n" "$token"
		sleep 0.5
	done
}
