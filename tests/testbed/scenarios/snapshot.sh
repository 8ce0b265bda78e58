# SPDX-License-Identifier: Apache-2.0
# Snapshot and restore on a real KVM (issue 34.2). In L1, curl
# (L1_EXTRA_FILES) configures `skiff run --api-sock` with an L2 that has
# no virtio device (the console is the UART): L2 prints a numbered tick
# with its uptime and a token kept in its memory (tmpfs) every 0.5 s.
# Once L2 ticked 5 times: PUT /snapshot/create while running (400), PATCH
# /vm Paused, PUT /snapshot/create, then skiff is SIGKILLed. A fresh skiff
# refuses a truncated state file and one of random bytes (400, one line,
# still "Not started"), then loads the snapshot with resume_vm: L2 must go
# on from the next tick (not from 1: no reboot, no new init), with the same
# token, its uptime not behind the last one before nor ahead by the time
# it spent paused, and ticking on (its timer fires); a second load is
# refused, so is a snapshot over the memory file its RAM is read from (the
# guest ticks on), SendCtrlAltDel (the restored i8042) ends it and skiff
# exits 0. Last, a load after PUT /machine-config
# is refused in Firecracker's words. Metrics: snap_create_ms,
# snap_state_bytes, snap_load_ms (the request), snap_load_to_tick_ms,
# snap_uptime_gap_s (L2's uptime across the kill: under snap_paused_ms,
# the wall time from the pause to the load, which L2's clock must not
# count). Default set.
TIMEOUT=120 # 36, 40, 41 s measured; 78 s beside a unit-test run
L1_EXTRA_FILES="/usr/bin/curl"
EXPECT="SKIFF-L2: init
snapshot: restored"

SN_S1=/tmp/s1.sock
SN_S2=/tmp/s2.sock
SN_S3=/tmp/s3.sock
SN_STATE=/tmp/snap.state
SN_MEM=/tmp/snap.mem
SN_LATE="Loading a microVM snapshot not allowed after configuring boot-specific resources."

# sn_want SOCK METHOD PATH JSON WANT: api_want, the body in /tmp/sn.body.
API_BODY=/tmp/sn.body
sn_want() { api_want "$@"; }

# sn_refused SOCK PATH JSON WORDS: a 400 whose body is one line with WORDS.
sn_refused() {
	sn_want "$1" PUT "$2" "$3" 400 && [ "$(wc -l </tmp/sn.body)" -le 1 ] &&
		grep -qF "$4" /tmp/sn.body
}

sn_state_is() {
	sn_want "$1" GET / "" 200 && grep -q "\"state\":\"$2\"" /tmp/sn.body
}

# sn_start SOCK: skiff on SOCK under vmm_boot_l2 (console in /tmp/l2.log).
sn_start() { api_boot "$@"; }

# sn_stop: ends the only skiff in L1 now and its vmm_boot_l2.
sn_stop() {
	kill -KILL "$(pidof skiff)" 2>/dev/null
	wait "$boot_pid"
}

sn_ticks() {
	c=$(grep -c '^SKIFF-L2-MARK tick ' /tmp/l2.log 2>/dev/null)
	echo "${c:-0}"
}

# sn_wait_ticks N SECONDS: until L2's console has N tick lines.
sn_wait_ticks() {
	i=0
	while [ "$(sn_ticks)" -lt "$1" ] && [ $i -lt $(($2 * 5)) ]; do
		sleep 0.2
		i=$((i + 1))
	done
	[ "$(sn_ticks)" -ge "$1" ]
}

# sn_tick FILE FIELD first|last: a field of the first or last tick line
# (3: its number, 4: L2's uptime, 5: the token).
sn_tick() {
	grep '^SKIFF-L2-MARK tick ' "$1" | if [ "$3" = first ]; then head -n1; else tail -n1; fi |
		cut -d' ' -f"$2"
}

sn_boot_and_save() {
	sn_start "$SN_S1" || { SN_WHY="no API socket"; return 1; }
	sn_want "$SN_S1" PUT /boot-source "{\"kernel_image_path\": \"$L2_KERNEL\", \"initrd_path\": \"$L2_INITRD\", \"boot_args\": \"console=ttyS0 reboot=k panic=1 pci=off quiet\"}" 204 &&
		sn_want "$SN_S1" PUT /machine-config '{"vcpu_count": 1, "mem_size_mib": 128}' 204 &&
		sn_want "$SN_S1" PUT /actions '{"action_type": "InstanceStart"}' 204 ||
		{ SN_WHY="configuration refused"; return 1; }
	sn_wait_ticks 5 180 || { SN_WHY="L2 did not tick 5 times"; return 1; }
	sn_refused "$SN_S1" /snapshot/create "{\"snapshot_path\": \"$SN_STATE\", \"mem_file_path\": \"$SN_MEM\"}" \
		"save/restore unavailable while running" ||
		{ SN_WHY="create on a running VM was not refused"; return 1; }
	sn_want "$SN_S1" PATCH /vm '{"state": "Paused"}' 204 || { SN_WHY="pause refused"; return 1; }
	# From here to the load L2 does not run, and its clock must not see
	# it: 2 s more than the create and the restart make that plain.
	SN_PAUSED_NS=$(now_ns)
	sleep 2
	# Under seccomp skiff writes only files that exist (SECURITY.md).
	: >"$SN_STATE" && : >"$SN_MEM"
	t0=$(now_ns)
	sn_want "$SN_S1" PUT /snapshot/create "{\"snapshot_type\": \"Full\", \"snapshot_path\": \"$SN_STATE\", \"mem_file_path\": \"$SN_MEM\"}" 204 ||
		{ SN_WHY="create refused"; return 1; }
	metric snap_create_ms $((($(now_ns) - t0) / 1000000))
	metric snap_state_bytes "$(wc -c <"$SN_STATE")"
	[ "$(wc -c <"$SN_MEM")" = $((128 << 20)) ] || { SN_WHY="memory file is not 128 MiB"; return 1; }
	sn_stop
	cp /tmp/l2.log /tmp/l2-before.log
}

sn_bad_loads() {
	mem="\"mem_backend\": {\"backend_type\": \"File\", \"backend_path\": \"$SN_MEM\"}"
	head -c $(($(wc -c <"$SN_STATE") / 2)) "$SN_STATE" >/tmp/snap.trunc
	head -c 4096 /dev/urandom >/tmp/snap.rand
	sn_refused "$SN_S2" /snapshot/load "{\"snapshot_path\": \"/tmp/snap.trunc\", $mem}" \
		"Load snapshot error: snapshot is truncated" ||
		{ SN_WHY="a truncated state file was not refused"; return 1; }
	sn_refused "$SN_S2" /snapshot/load "{\"snapshot_path\": \"/tmp/snap.rand\", $mem}" \
		"Load snapshot error: not a skiff snapshot" ||
		{ SN_WHY="a state file of random bytes was not refused"; return 1; }
	sn_state_is "$SN_S2" "Not started" || { SN_WHY="not serving after the bad loads"; return 1; }
}

sn_load_and_check() {
	# At debug level skiff says how many vCPUs it told of the pause.
	sn_start "$SN_S2" --log-level debug || { SN_WHY="no API socket"; return 1; }
	sn_bad_loads || return 1
	t0=$(now_ns)
	paused_ms=$(((t0 - SN_PAUSED_NS) / 1000000))
	sn_want "$SN_S2" PUT /snapshot/load "{\"snapshot_path\": \"$SN_STATE\", $mem, \"resume_vm\": true}" 204 ||
		{ SN_WHY="load refused"; return 1; }
	metric snap_load_ms $((($(now_ns) - t0) / 1000000))
	sn_wait_ticks 1 60 || { SN_WHY="L2 did not tick after the load"; return 1; }
	metric snap_load_to_tick_ms $((($(now_ns) - t0) / 1000000))
	sn_wait_ticks 5 60 || { SN_WHY="L2 ticked $(sn_ticks) times after the load, not 5"; return 1; }
	# KVM_KVMCLOCK_CTRL, as QEMU on a resume: L2's watchdogs forgive the
	# pause (its kvmclock is on, so the one vCPU must be told).
	grep -q '1 of 1 vCPUs told of the pause' /tmp/vmm.err ||
		{ SN_WHY="L2's vCPU was not told of the pause (KVM_KVMCLOCK_CTRL)"; return 1; }
	last=$(sn_tick /tmp/l2-before.log 3 last) next=$(sn_tick /tmp/l2.log 3 first)
	up0=$(sn_tick /tmp/l2-before.log 4 last) up1=$(sn_tick /tmp/l2.log 4 first)
	tok0=$(sn_tick /tmp/l2-before.log 5 last) tok1=$(sn_tick /tmp/l2.log 5 last)
	echo "snapshot: tick $last at ${up0} s before, $next at ${up1} s after; token $tok0 / $tok1"
	gap=$(awk "BEGIN { print $up1 - $up0 }")
	metric snap_paused_ms "$paused_ms"
	metric snap_uptime_gap_s "$gap"
	# The line in flight at the pause may be cut in two by the kill.
	[ "$next" -gt "$last" ] && [ "$next" -le $((last + 2)) ] ||
		{ SN_WHY="L2 went on from tick $next after tick $last"; return 1; }
	! grep -q '^SKIFF-L2: init' /tmp/l2.log || { SN_WHY="L2 booted again"; return 1; }
	[ -n "$tok0" ] && [ "$tok0" = "$tok1" ] || { SN_WHY="L2's token changed"; return 1; }
	awk "BEGIN { exit !($gap >= 0) }" || { SN_WHY="L2's clock went back $gap s"; return 1; }
	# The gap is L2's own running time around the pause (its next tick,
	# its first page faults into the memory file): well under the pause.
	awk "BEGIN { exit !($gap * 1000 < $paused_ms) }" ||
		{ SN_WHY="L2's clock counted the pause: +$gap s across $paused_ms ms"; return 1; }
	echo "snapshot: restored"
	sn_state_is "$SN_S2" Running || { SN_WHY="not Running after the load"; return 1; }
	sn_refused "$SN_S2" /snapshot/load "{\"snapshot_path\": \"$SN_STATE\", $mem}" \
		"not supported after starting the microVM" ||
		{ SN_WHY="a second load was not refused"; return 1; }
	# Its RAM is read from $SN_MEM: a snapshot over that file (as the
	# memory or as the state) is refused, and the guest goes on.
	sn_want "$SN_S2" PATCH /vm '{"state": "Paused"}' 204 || { SN_WHY="pause refused"; return 1; }
	: >/tmp/snap.state2
	sn_refused "$SN_S2" /snapshot/create "{\"snapshot_path\": \"/tmp/snap.state2\", \"mem_file_path\": \"$SN_MEM\"}" \
		"is the memory file this microVM was restored from" &&
		sn_refused "$SN_S2" /snapshot/create "{\"snapshot_path\": \"$SN_MEM\", \"mem_file_path\": \"/tmp/snap.state2\"}" \
			"is the memory file this microVM was restored from" ||
		{ SN_WHY="a snapshot over the VM's own memory file was not refused"; return 1; }
	sn_want "$SN_S2" PATCH /vm '{"state": "Resumed"}' 204 || { SN_WHY="resume refused"; return 1; }
	n=$(sn_ticks)
	sn_wait_ticks $((n + 2)) 60 || { SN_WHY="L2 stopped ticking after the refused snapshot"; return 1; }
	sn_want "$SN_S2" PUT /actions '{"action_type": "SendCtrlAltDel"}' 204 ||
		{ SN_WHY="SendCtrlAltDel refused"; return 1; }
	wait "$boot_pid"
	rc=$(cat /tmp/vmm.rc 2>/dev/null)
	[ "$rc" = 0 ] || { SN_WHY="skiff exited '$rc' after SendCtrlAltDel"; return 1; }
}

sn_load_late() {
	rm -f "$SN_S3"
	skiff run --api-sock "$SN_S3" </dev/null >/dev/null 2>/tmp/s3.err &
	s3=$!
	wait_sock "$SN_S3"
	ok=0
	sn_want "$SN_S3" PUT /machine-config '{"vcpu_count": 1, "mem_size_mib": 128}' 204 &&
		sn_refused "$SN_S3" /snapshot/load "{\"snapshot_path\": \"$SN_STATE\", \"mem_backend\": {\"backend_type\": \"File\", \"backend_path\": \"$SN_MEM\"}}" "$SN_LATE" &&
		sn_state_is "$SN_S3" "Not started" && ok=1
	kill "$s3" 2>/dev/null
	wait "$s3"
	[ $ok = 1 ]
}

l1() {
	SN_WHY=""
	if ! sn_boot_and_save; then
		fail "before the snapshot: $SN_WHY"
		sn_stop
		return
	fi
	if ! sn_load_and_check; then
		fail "restore: $SN_WHY"
		tail -n 20 /tmp/vmm.err
		sn_stop
		return
	fi
	sn_load_late || { fail "a load after PUT /machine-config was not refused"; return; }
	pass
}

l2() {
	token=$(cat /proc/sys/kernel/random/uuid)
	echo "SKIFF-L2-MARK clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource) $(grep -o 'constant_tsc\|nonstop_tsc\|tsc_known_freq' /proc/cpuinfo | tr '\n' ' ')"
	echo "$token" >/tmp/token
	n=0
	# Until Ctrl-Alt-Del ends it (bounded: 300 s of ticks).
	while [ $n -lt 600 ]; do
		n=$((n + 1))
		echo "SKIFF-L2-MARK tick $n $(cut -d' ' -f1 /proc/uptime) $(cat /tmp/token)"
		sleep 0.5
	done
}
