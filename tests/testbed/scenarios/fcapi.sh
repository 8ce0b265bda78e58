# SPDX-License-Identifier: Apache-2.0
# skiff driven like Firecracker (docs/CLI.md: "Driving skiff from an
# orchestrator"). In L1, `skiff run --api-sock` waits unconfigured; curl
# (L1_EXTRA_FILES) PUTs boot-source, drives, network-interfaces and
# machine-config, then InstanceStart, as Firecracker's getting-started
# guide does. L1 pings L2 (169.254.20.2) on tap0; PATCH /vm Paused: pings
# stop and L2's ticks (its uptime, printed every 0.5 s) stop; Resumed: both
# come back; PATCH /drives swaps the root drive's image for a bigger one
# with a mark at its start (a missing file first: 400), and L2 must see the
# new size and the mark; SendCtrlAltDel stops L2 and skiff exits 0. Then the same guest
# boots from --config-file with --no-api, pings L1 and powers off.
# Metrics: fc_api_start_to_init_ms (InstanceStart to L2's init),
# fc_paused_ticks (ticks while paused: 0), fc_paused_ms, and
# fc_uptime_gap_across_pause_s (L2's uptime from the last tick before the
# pause to the first after it: must be under half the pause). In the
# default set (about 45 s on a quiet machine), with the seccomp filters on.
# Link-local addresses only, inside L1/L2.
TIMEOUT=120 # about 45 s measured (41 s on 2026-12-05)
L1_EXTRA_FILES="/usr/bin/curl"
EXPECT="SKIFF-L2: init
SKIFF-L2-MARK fcapi mode=api
SKIFF-L2-MARK fcapi mode=file"

FC_L1=169.254.20.1
FC_L2=169.254.20.2
FC_SOCK=/tmp/fc.sock
FC_MAC=06:00:AC:10:00:02

# fc_curl METHOD PATH [JSON]: one request as the guide makes it; prints
# the status code, the body goes to /tmp/fc.body.
fc_curl() {
	if [ -n "${3:-}" ]; then
		/usr/bin/curl -s -o /tmp/fc.body -w '%{http_code}' -X "$1" --unix-socket "$FC_SOCK" \
			-H 'Accept: application/json' -H 'Content-Type: application/json' \
			-d "$3" "http://localhost$2"
	else
		/usr/bin/curl -s -o /tmp/fc.body -w '%{http_code}' -X "$1" --unix-socket "$FC_SOCK" \
			"http://localhost$2"
	fi
}

# fc_want METHOD PATH JSON WANT: the request must get status WANT.
fc_want() {
	code=$(fc_curl "$1" "$2" "$3")
	echo "fcapi: $1 $2 -> $code $(cat /tmp/fc.body 2>/dev/null)"
	[ "$code" = "$4" ]
}

# fc_wait_line PATTERN SECONDS: waits for an L2 console line matching PATTERN.
fc_wait_line() {
	i=0
	while [ $i -lt $(($2 * 5)) ] && ! grep -q "$1" /tmp/l2.log 2>/dev/null; do
		sleep 0.2
		i=$((i + 1))
	done
	grep -q "$1" /tmp/l2.log 2>/dev/null
}

fc_ticks() {
	grep -c '^SKIFF-L2-MARK tick' /tmp/l2.log 2>/dev/null || echo 0
}

fc_last_tick() {
	sed -n 's/^SKIFF-L2-MARK tick //p' /tmp/l2.log | tail -n1
}

fc_api_boot() {
	FC_WHY=""
	truncate -s 8M /tmp/rootfs.img
	rm -f "$FC_SOCK"
	(vmm_boot_l2 skiff run --api-sock "$FC_SOCK") &
	boot_pid=$!
	i=0
	while [ ! -S "$FC_SOCK" ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	fc_want GET / "" 200 && grep -q '"state":"Not started"' /tmp/fc.body ||
		{ FC_WHY="GET / before start"; return 1; }
	fc_want PUT /boot-source "{\"kernel_image_path\": \"$L2_KERNEL\", \"initrd_path\": \"$L2_INITRD\", \"boot_args\": \"console=ttyS0 reboot=k panic=1 pci=off quiet fcapi=api\"}" 204 &&
		fc_want PUT /drives/rootfs '{"drive_id": "rootfs", "path_on_host": "/tmp/rootfs.img", "is_root_device": true, "is_read_only": false}' 204 &&
		fc_want PUT /network-interfaces/net1 "{\"iface_id\": \"net1\", \"guest_mac\": \"$FC_MAC\", \"host_dev_name\": \"tap0\"}" 204 &&
		fc_want PUT /machine-config '{"vcpu_count": 1, "mem_size_mib": 256}' 204 ||
		{ FC_WHY="configuration refused"; return 1; }
	t0=$(now_ns)
	fc_want PUT /actions '{"action_type": "InstanceStart"}' 204 || { FC_WHY="InstanceStart refused"; return 1; }
	fc_want PUT /boot-source "{\"kernel_image_path\": \"$L2_KERNEL\"}" 400 &&
		grep -q "not supported after starting the microVM" /tmp/fc.body ||
		{ FC_WHY="PUT /boot-source after start was not refused"; return 1; }
	fc_wait_line "^SKIFF-L2-MARK fcapi mode=api" 180 || { FC_WHY="L2 did not come up"; return 1; }
	metric fc_api_start_to_init_ms $((($(now_ns) - t0) / 1000000))
	fc_want GET / "" 200 && grep -q '"state":"Running"' /tmp/fc.body || { FC_WHY="not Running"; return 1; }
}

fc_pause_resume() {
	ping -c 3 -W 2 "$FC_L2" >/dev/null || { FC_WHY="no ping before the pause"; return 1; }
	fc_want PATCH /vm '{"state": "Paused"}' 204 || { FC_WHY="pause refused"; return 1; }
	before_tick=$(fc_last_tick)
	n0=$(fc_ticks)
	t0=$(now_ns)
	if ping -c 3 -W 1 "$FC_L2" >/dev/null; then
		FC_WHY="pings answered while paused"
		return 1
	fi
	sleep 2
	n1=$(fc_ticks)
	metric fc_paused_ticks $((n1 - n0))
	[ "$n1" -le $((n0 + 1)) ] || { FC_WHY="L2 ticked $((n1 - n0)) times while paused"; return 1; }
	fc_want GET / "" 200 && grep -q '"state":"Paused"' /tmp/fc.body || { FC_WHY="not Paused"; return 1; }
	fc_want PATCH /vm '{"state": "Resumed"}' 204 || { FC_WHY="resume refused"; return 1; }
	paused_ms=$((($(now_ns) - t0) / 1000000))
	n2=$(fc_ticks)
	i=0
	while [ "$(fc_ticks)" -le $((n2 + 1)) ] && [ $i -lt 50 ]; do
		sleep 0.2
		i=$((i + 1))
	done
	[ "$(fc_ticks)" -gt $((n2 + 1)) ] || { FC_WHY="L2 did not tick after resume"; return 1; }
	ping -c 3 -W 2 "$FC_L2" >/dev/null || { FC_WHY="no ping after resume"; return 1; }
	# L2's clock across the pause: the first tick after it follows the last
	# one before it by about one tick interval, not by the pause.
	after_tick=$(sed -n 's/^SKIFF-L2-MARK tick //p' /tmp/l2.log | sed -n "$((n1 + 1))p")
	gap=$(awk "BEGIN { print $after_tick - $before_tick }")
	echo "fcapi: paused ${paused_ms} ms; L2 uptime ${before_tick} -> ${after_tick} across it"
	metric fc_paused_ms "$paused_ms"
	metric fc_uptime_gap_across_pause_s "$gap"
	awk "BEGIN { exit !($gap * 1000 < $paused_ms / 2) }" ||
		{ FC_WHY="L2's clock ran on while paused: +$gap s in $paused_ms ms"; return 1; }
}

# PATCH /drives path_on_host while L2 runs (L2's ticks report vda's size,
# and its first bytes once the size changed).
fc_swap_drive() {
	truncate -s 16M /tmp/rootfs2.img
	printf 'SKIFF-NEW-MEDIUM' | dd of=/tmp/rootfs2.img conv=notrunc 2>/dev/null
	fc_want PATCH /drives/rootfs '{"drive_id": "rootfs", "path_on_host": "/tmp/none.img"}' 400 ||
		{ FC_WHY="a missing file was not refused"; return 1; }
	fc_want PATCH /drives/rootfs '{"drive_id": "rootfs", "path_on_host": "/tmp/rootfs2.img"}' 204 ||
		{ FC_WHY="refused"; return 1; }
	fc_wait_line "^SKIFF-L2-MARK vda size=32768 head=SKIFF-NEW-MEDIUM" 30 ||
		{ FC_WHY="L2 did not see the new image"; return 1; }
	fc_want GET /vm/config "" 200 && grep -q '/tmp/rootfs2.img' /tmp/fc.body ||
		{ FC_WHY="GET /vm/config has the old path"; return 1; }
	# Rate limiters while L2 runs: generous, so the pings go on.
	fc_want PATCH /drives/rootfs '{"drive_id": "rootfs", "rate_limiter": {"ops": {"size": 100000, "refill_time": 1000}}}' 204 ||
		{ FC_WHY="PATCH /drives rate_limiter refused"; return 1; }
	fc_want PATCH /network-interfaces/net1 '{"iface_id": "net1", "tx_rate_limiter": {"bandwidth": {"size": 100000000, "refill_time": 100}}}' 204 ||
		{ FC_WHY="PATCH /network-interfaces tx_rate_limiter refused"; return 1; }
	fc_want GET /vm/config "" 200 && grep -q '100000000' /tmp/fc.body ||
		{ FC_WHY="GET /vm/config lacks the PATCHed limiter"; return 1; }
}

# The API boot's checks go on after a failure (each is reported), so one
# run shows every part; the --config-file boot runs in any case.
l1() {
	tap_up "$FC_L1" || { fail "tap0 setup failed"; return; }
	BAD=""
	if fc_api_boot; then
		fc_pause_resume || BAD="$BAD [pause/resume: $FC_WHY]"
		fc_swap_drive || BAD="$BAD [drive swap: $FC_WHY]"
		if fc_want PUT /actions '{"action_type": "SendCtrlAltDel"}' 204; then
			wait "$boot_pid"
			rc=$(cat /tmp/vmm.rc 2>/dev/null)
			[ "$rc" = 0 ] || BAD="$BAD [skiff exited '$rc' after SendCtrlAltDel]"
		else
			BAD="$BAD [SendCtrlAltDel refused]"
			# skiff's pid, inside L1: only the API's VMM runs here now.
			kill "$(pidof skiff)" 2>/dev/null
			wait "$boot_pid"
		fi
	else
		BAD="$BAD [API boot: $FC_WHY]"
		kill "$(pidof skiff)" 2>/dev/null
		wait "$boot_pid"
	fi

	cat >/tmp/vm.json <<EOJ
{
  "boot-source": {"kernel_image_path": "$L2_KERNEL", "initrd_path": "$L2_INITRD",
                  "boot_args": "console=ttyS0 reboot=k panic=1 pci=off quiet fcapi=file"},
  "drives": [{"drive_id": "rootfs", "path_on_host": "/tmp/rootfs.img",
              "is_root_device": true, "is_read_only": false}],
  "network-interfaces": [{"iface_id": "net1", "guest_mac": "$FC_MAC", "host_dev_name": "tap0"}],
  "machine-config": {"vcpu_count": 1, "mem_size_mib": 256}
}
EOJ
	if ! vmm_boot_l2 skiff run --no-api --config-file /tmp/vm.json; then
		BAD="$BAD [--config-file: skiff exited $VMM_RC]"
	elif ! l2_saw "SKIFF-L2-MARK fcapi file-ping=ok"; then
		BAD="$BAD [--config-file: L2 could not ping L1]"
	fi
	if [ -n "$BAD" ]; then fail "$BAD"; else pass; fi
}

l2() {
	mode=$(sed -n 's/.*fcapi=\([a-z]*\).*/\1/p' /proc/cmdline)
	wait_for /sys/class/net/eth0 && wait_for /dev/vda || { fail "L2 lacks eth0 or vda"; return; }
	[ "$(cat /sys/class/net/eth0/address)" = "06:00:ac:10:00:02" ] || { fail "guest_mac not applied"; return; }
	ip addr add "$FC_L2/24" dev eth0 && ip link set eth0 up || { fail "eth0 setup failed"; return; }
	echo "SKIFF-L2-MARK fcapi mode=$mode"
	if [ "$mode" = file ]; then
		ping -c 2 -W 2 "$FC_L1" >/dev/null && echo "SKIFF-L2-MARK fcapi file-ping=ok"
		return
	fi
	# Until Ctrl-Alt-Del resets it (bounded): ticks with L2's uptime, and
	# vda's new size and first bytes once a PATCH changed its image.
	size0=$(cat /sys/block/vda/size)
	i=0
	while [ $i -lt 600 ]; do
		echo "SKIFF-L2-MARK tick $(cut -d' ' -f1 /proc/uptime)"
		size=$(cat /sys/block/vda/size)
		if [ "$size" != "$size0" ]; then
			echo 3 >/proc/sys/vm/drop_caches
			echo "SKIFF-L2-MARK vda size=$size head=$(head -c 16 /dev/vda)"
			size0=$size
		fi
		sleep 0.5
		i=$((i + 1))
	done
}
