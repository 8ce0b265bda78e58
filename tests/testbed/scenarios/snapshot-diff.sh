# SPDX-License-Identifier: Apache-2.0
# Diff snapshots on a real KVM (issue 34.2): KVM's dirty log with manual
# protect and the VMM's own, under the controller's seccomp filter. The
# snapshot scenario's ticking, device-less L2 on `skiff run --api-sock`
# with machine-config's track_dirty_pages; after 5 ticks: pause, a Full
# snapshot, resume, 4 ticks, pause, a Diff: the Diff's memory file is the
# VM's size but holds a small part of it (du: its blocks), and L2 ticks on
# after the resume. Then a fresh skiff loads the Full one with
# track_dirty_pages, L2 goes on, and a Diff of it after 4 ticks is small
# again (a restore starts with every page clean). Metrics:
# diff_full_kib, diff_kib, diff_after_load_kib (allocated sizes).
SLOW=1
TIMEOUT=150
L1_EXTRA_FILES="/usr/bin/curl"
EXPECT="SKIFF-L2: init
snapshot-diff: sparse"

SD_S1=/tmp/s1.sock
SD_S2=/tmp/s2.sock

# sd_want SOCK METHOD PATH JSON WANT: api_want, the body in /tmp/sd.body.
API_BODY=/tmp/sd.body
sd_want() { api_want "$@"; }
sd_start() { api_boot "$1"; }

sd_ticks() {
	c=$(grep -c '^SKIFF-L2-MARK tick ' /tmp/l2.log 2>/dev/null)
	echo "${c:-0}"
}

sd_wait_ticks() {
	i=0
	while [ "$(sd_ticks)" -lt "$1" ] && [ $i -lt $(($2 * 5)) ]; do
		sleep 0.2
		i=$((i + 1))
	done
	[ "$(sd_ticks)" -ge "$1" ]
}

# sd_snap SOCK TYPE STATE MEM: pause (already), create, files made first
# (under seccomp skiff writes only files that exist).
sd_snap() {
	: >"$3" && : >"$4"
	sd_want "$1" PUT /snapshot/create "{\"snapshot_type\": \"$2\", \"snapshot_path\": \"$3\", \"mem_file_path\": \"$4\"}" 204
}

# sd_sparse MEM NAME: the file is 128 MiB long and holds less than a
# quarter of it; its allocated KiB as the metric NAME.
sd_sparse() {
	kib=$(du -k "$1" | cut -f1)
	metric "$2" "$kib"
	[ "$(wc -c <"$1")" = $((128 << 20)) ] && [ "$kib" -gt 0 ] && [ "$kib" -lt $((32 << 10)) ]
}

sd_first() {
	sd_start "$SD_S1" || { SD_WHY="no API socket"; return 1; }
	sd_want "$SD_S1" PUT /boot-source "{\"kernel_image_path\": \"$L2_KERNEL\", \"initrd_path\": \"$L2_INITRD\", \"boot_args\": \"console=ttyS0 reboot=k panic=1 pci=off quiet\"}" 204 &&
		sd_want "$SD_S1" PUT /machine-config '{"vcpu_count": 1, "mem_size_mib": 128, "track_dirty_pages": true}' 204 &&
		sd_want "$SD_S1" PUT /actions '{"action_type": "InstanceStart"}' 204 ||
		{ SD_WHY="configuration refused"; return 1; }
	sd_wait_ticks 5 180 || { SD_WHY="L2 did not tick 5 times"; return 1; }
	sd_want "$SD_S1" PATCH /vm '{"state": "Paused"}' 204 &&
		sd_snap "$SD_S1" Full /tmp/full.state /tmp/full.mem ||
		{ SD_WHY="the Full snapshot failed"; return 1; }
	metric diff_full_kib "$(du -k /tmp/full.mem | cut -f1)"
	n=$(sd_ticks)
	sd_want "$SD_S1" PATCH /vm '{"state": "Resumed"}' 204 && sd_wait_ticks $((n + 4)) 60 &&
		sd_want "$SD_S1" PATCH /vm '{"state": "Paused"}' 204 &&
		sd_snap "$SD_S1" Diff /tmp/diff.state /tmp/diff.mem ||
		{ SD_WHY="the Diff snapshot failed"; return 1; }
	sd_sparse /tmp/diff.mem diff_kib || { SD_WHY="the Diff's memory file is not sparse"; return 1; }
	n=$(sd_ticks)
	sd_want "$SD_S1" PATCH /vm '{"state": "Resumed"}' 204 && sd_wait_ticks $((n + 2)) 60 ||
		{ SD_WHY="L2 did not tick on after the Diff"; return 1; }
	kill -KILL "$(pidof skiff)" 2>/dev/null
	wait "$boot_pid" || true # killed: its status is no failure
}

sd_after_load() {
	sd_start "$SD_S2" || { SD_WHY="no API socket"; return 1; }
	sd_want "$SD_S2" PUT /snapshot/load "{\"snapshot_path\": \"/tmp/full.state\", \"mem_backend\": {\"backend_type\": \"File\", \"backend_path\": \"/tmp/full.mem\"}, \"track_dirty_pages\": true, \"resume_vm\": true}" 204 ||
		{ SD_WHY="the load refused"; return 1; }
	sd_wait_ticks 4 60 || { SD_WHY="L2 did not tick 4 times after the load"; return 1; }
	sd_want "$SD_S2" PATCH /vm '{"state": "Paused"}' 204 &&
		sd_snap "$SD_S2" Diff /tmp/diff2.state /tmp/diff2.mem ||
		{ SD_WHY="the Diff after the load failed"; return 1; }
	sd_sparse /tmp/diff2.mem diff_after_load_kib ||
		{ SD_WHY="the Diff after the load is not sparse"; return 1; }
	echo "snapshot-diff: sparse"
	sd_want "$SD_S2" PATCH /vm '{"state": "Resumed"}' 204 &&
		sd_want "$SD_S2" PUT /actions '{"action_type": "SendCtrlAltDel"}' 204 ||
		{ SD_WHY="resume or SendCtrlAltDel refused"; return 1; }
	wait "$boot_pid"
	rc=$(cat /tmp/vmm.rc 2>/dev/null)
	[ "$rc" = 0 ] || { SD_WHY="skiff exited '$rc' after SendCtrlAltDel"; return 1; }
}

l1() {
	SD_WHY=""
	if ! sd_first || ! sd_after_load; then
		fail "snapshot-diff: $SD_WHY"
		tail -n 20 /tmp/vmm.err
		kill -KILL "$(pidof skiff)" 2>/dev/null
		wait 2>/dev/null
		return
	fi
	pass
}

l2() {
	n=0
	while [ $n -lt 600 ]; do
		n=$((n + 1))
		echo "SKIFF-L2-MARK tick $n $(cut -d' ' -f1 /proc/uptime)"
		sleep 0.5
	done
}
