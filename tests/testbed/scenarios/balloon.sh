# SPDX-License-Identifier: Apache-2.0
# virtio-balloon (issue 33.3) driven like Firecracker: in L1, `skiff run
# --api-sock` gets boot-source, a drive, 256 MiB and PUT /balloon
# (amount_mib 0, deflate_on_oom, stats every second, no free page
# reporting, so what comes back is the balloon's doing), then
# InstanceStart. L2 (virtio_balloon) writes ~100 MiB into a tmpfs and
# removes it: the pages are free in L2 but still resident in skiff. L1 then
# PATCHes amount_mib 128; L2 inflates (GET /balloon/statistics: actual_mib
# reaches the target) and skiff's VmRSS must drop by at least 64 MiB.
# Errors as Firecracker words them: a target over the guest's memory, stats
# turned off after boot. SendCtrlAltDel ends it; skiff exits 0.
# Metrics: balloon_rss_before_mib, balloon_rss_after_mib,
# balloon_rss_drop_mib, balloon_inflate_ms, balloon_rss_mib_per_s (RSS
# recovered per second of inflating).
TIMEOUT=120 # 32 s measured alone, 58 and 83 s beside compiles; 18, 26 s in clean-clone runs
L1_EXTRA_FILES="/usr/bin/curl"
L2_EXTRA_MODULES="virtio_balloon"
EXPECT="SKIFF-L2: init
SKIFF-L2-MARK balloon freed"

BL_SOCK=/tmp/fc.sock

bl_curl() {
	if [ -n "${3:-}" ]; then
		/usr/bin/curl -s -o /tmp/fc.body -w '%{http_code}' -X "$1" --unix-socket "$BL_SOCK" \
			-H 'Content-Type: application/json' -d "$3" "http://localhost$2"
	else
		/usr/bin/curl -s -o /tmp/fc.body -w '%{http_code}' -X "$1" --unix-socket "$BL_SOCK" \
			"http://localhost$2"
	fi
}

# bl_want METHOD PATH JSON WANT [WORDS]: status WANT (and WORDS in the body).
bl_want() {
	code=$(bl_curl "$1" "$2" "$3")
	echo "balloon: $1 $2 -> $code $(cat /tmp/fc.body 2>/dev/null)"
	[ "$code" = "$4" ] && { [ -z "${5:-}" ] || grep -q "$5" /tmp/fc.body; }
}

bl_wait_line() {
	i=0
	while [ $i -lt $(($2 * 5)) ] && ! grep -q "$1" /tmp/l2.log 2>/dev/null; do
		sleep 0.2
		i=$((i + 1))
	done
	grep -q "$1" /tmp/l2.log 2>/dev/null
}

# skiff's resident memory in MiB (the API's VMM is the only skiff in L1).
bl_rss_mib() {
	awk '/^VmRSS:/ { print int($2 / 1024) }' "/proc/$(pidof skiff)/status"
}

# actual_mib from GET /balloon/statistics, or empty.
bl_actual_mib() {
	bl_curl GET /balloon/statistics >/dev/null
	sed -n 's/.*"actual_mib":\([0-9]*\).*/\1/p' /tmp/fc.body
}

bl_run() {
	BL_WHY=""
	truncate -s 8M /tmp/rootfs.img
	rm -f "$BL_SOCK"
	(vmm_boot_l2 skiff run --api-sock "$BL_SOCK") &
	boot_pid=$!
	i=0
	while [ ! -S "$BL_SOCK" ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	bl_want PUT /boot-source "{\"kernel_image_path\": \"$L2_KERNEL\", \"initrd_path\": \"$L2_INITRD\", \"boot_args\": \"console=ttyS0 reboot=k panic=1 pci=off quiet\"}" 204 &&
		bl_want PUT /drives/rootfs '{"drive_id": "rootfs", "path_on_host": "/tmp/rootfs.img", "is_root_device": true, "is_read_only": false}' 204 &&
		bl_want PUT /machine-config '{"vcpu_count": 1, "mem_size_mib": 256}' 204 &&
		bl_want PUT /balloon '{"amount_mib": 512, "deflate_on_oom": true}' 400 "Amount of pages requested is too large" &&
		bl_want PUT /balloon '{"amount_mib": 0, "deflate_on_oom": true, "stats_polling_interval_s": 1}' 204 ||
		{ BL_WHY="configuration"; return 1; }
	bl_want PUT /actions '{"action_type": "InstanceStart"}' 204 || { BL_WHY="InstanceStart refused"; return 1; }
	bl_wait_line "^SKIFF-L2-MARK balloon freed" 180 || { BL_WHY="L2 did not fill and free its tmpfs"; return 1; }
	before=$(bl_rss_mib)
	bl_want PATCH /balloon '{"amount_mib": 1024}' 400 "Amount of pages requested is too large" ||
		{ BL_WHY="a target over guest memory was not refused"; return 1; }
	bl_want PATCH /balloon/statistics '{"stats_polling_interval_s": 0}' 400 "Cannot enable/disable" ||
		{ BL_WHY="stats off after boot was not refused"; return 1; }
	t0=$(now_ns)
	bl_want PATCH /balloon '{"amount_mib": 128}' 204 || { BL_WHY="PATCH /balloon refused"; return 1; }
	i=0
	while [ $i -lt 300 ]; do
		a=$(bl_actual_mib)
		[ -n "$a" ] && [ "$a" -ge 127 ] && break
		sleep 0.2
		i=$((i + 1))
	done
	ms=$((($(now_ns) - t0) / 1000000))
	after=$(bl_rss_mib)
	bl_want GET /balloon/statistics "" 200 '"target_mib":128' ||
		{ BL_WHY="GET /balloon/statistics"; return 1; }
	grep -q '"free_memory":' /tmp/fc.body || { BL_WHY="no guest statistics"; return 1; }
	bl_want GET /balloon "" 200 '"amount_mib":128' || { BL_WHY="GET /balloon"; return 1; }
	echo "balloon: RSS ${before} -> ${after} MiB in ${ms} ms (actual ${a:-?} MiB)"
	metric balloon_rss_before_mib "$before"
	metric balloon_rss_after_mib "$after"
	metric balloon_rss_drop_mib $((before - after))
	metric balloon_inflate_ms "$ms"
	[ "$ms" -gt 0 ] && metric balloon_rss_mib_per_s $(((before - after) * 1000 / ms))
	[ -n "$a" ] && [ "$a" -ge 127 ] || { BL_WHY="actual_mib is '$a', want 128"; return 1; }
	[ $((before - after)) -ge 64 ] || { BL_WHY="RSS dropped $((before - after)) MiB, want >= 64"; return 1; }
}

l1() {
	BAD=""
	bl_run || BAD="$BAD [$BL_WHY]"
	if bl_want PUT /actions '{"action_type": "SendCtrlAltDel"}' 204; then
		wait "$boot_pid"
		rc=$(cat /tmp/vmm.rc 2>/dev/null)
		[ "$rc" = 0 ] || BAD="$BAD [skiff exited '$rc' after SendCtrlAltDel]"
	else
		kill "$(pidof skiff)" 2>/dev/null
		wait "$boot_pid"
	fi
	grep virtio-balloon0 /tmp/vmm.err || true
	if [ -n "$BAD" ]; then fail "$BAD"; else pass; fi
}

l2() {
	wait_for /sys/bus/virtio/drivers/virtio_balloon || { fail "no virtio_balloon driver"; return; }
	mkdir -p /run/fill && mount -t tmpfs -o size=160m tmpfs /run/fill ||
		{ fail "no tmpfs"; return; }
	dd if=/dev/urandom of=/run/fill/f bs=1M count=100 2>/dev/null || { fail "dd failed"; return; }
	rm -f /run/fill/f
	umount /run/fill
	echo "SKIFF-L2-MARK balloon freed"
	# Until Ctrl-Alt-Del resets it (bounded).
	i=0
	while [ $i -lt 600 ]; do
		sleep 0.5
		i=$((i + 1))
	done
}
