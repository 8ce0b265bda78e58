# SPDX-License-Identifier: Apache-2.0
# Where a network workload's KVM exits go: L1 counts kvm_exit (by reason
# and guest RIP) and kvm_emulate_insn (by RIP) with in-kernel histogram
# triggers (a text trace of a stream is too big to read back under L0's
# emulation) in three phases of one skiff L2 boot (--cpus 1, default
# --net, nokaslr so RIPs name L2's symbols): "rr" (L2 pings L1 400 times,
# 10 ms apart: one request/response each), "down" (iperf3 L1→L2, 3 s) and
# "up" (L2→L1, 3 s). Per phase: "SKIFF-TRACE: P total N", "P reason N
# CODE" (SVM exit codes, hex), "P rip N CODE RIP SYMBOL" and "P emul N
# RIP SYMBOL" (top 30), and L2 prints what it moved (SKIFF-L2-MARK), so
# exits per transaction and per MB can be read off. SLOW=1: a diagnosis,
# not a check.
TIMEOUT=900
SLOW=1
EXPECT="SKIFF-L2: init"

NT_L1=169.254.13.1
NT_L2=169.254.13.2
NT_EXIT="hist:keys=exit_reason.hex,guest_rip.hex:size=16384"
NT_EMUL="hist:keys=rip.hex:size=4096"

# nt_watch: at each "phase=P" mark in L2's console log, saves the counts
# of the phase before to /tmp/hist-{exit,emul}-PREV and starts new ones.
nt_watch() {
	ev="$TR"/events/kvm
	for next in rr down up end; do
		i=0
		while [ $i -lt 6000 ] && ! grep -q "^SKIFF-L2-MARK phase=$next" /tmp/l2.log 2>/dev/null; do
			sleep 0.05
			i=$((i + 1))
		done
		if [ -n "$cur" ]; then
			cp "$ev"/kvm_exit/hist "/tmp/hist-exit-$cur"
			cp "$ev"/kvm_emulate_insn/hist "/tmp/hist-emul-$cur"
			echo "!$NT_EXIT" >"$ev"/kvm_exit/trigger
			echo "!$NT_EMUL" >"$ev"/kvm_emulate_insn/trigger
		fi
		cur=$next
		[ "$next" = end ] && break
		echo "$NT_EXIT" >"$ev"/kvm_exit/trigger
		echo "$NT_EMUL" >"$ev"/kvm_emulate_insn/trigger
	done
}

# nt_report PHASE: the phase's histograms as SKIFF-TRACE lines.
nt_report() {
	p=$1
	# "{ exit_reason:         7c, guest_rip: ffffffff81... } hitcount: N"
	# (.hex keys print without 0x)
	sed -n 's/.*exit_reason: *\([0-9a-f]*\), *guest_rip: *\([0-9a-f]*\).*hitcount: *\([0-9]*\).*/\3 0x\1 0x\2/p' \
		"/tmp/hist-exit-$p" | sort -rn >/tmp/rips
	echo "SKIFF-TRACE: $p total $(awk '{ s += $1 } END { print s + 0 }' /tmp/rips)"
	awk '{ n[$2] += $1 } END { for (r in n) print n[r], r }' /tmp/rips | sort -rn |
		awk -v p="$p" '{ print "SKIFF-TRACE:", p, "reason", $1, $2 }'
	head -n 30 /tmp/rips >/tmp/top
	bt_symbolize /tmp/top | awk -v p="$p" '{ print "SKIFF-TRACE:", p, "rip", $1, $2, $3, $4 }'
	sed -n 's/.*rip: *\([0-9a-f]*\).*hitcount: *\([0-9]*\).*/\2 insn 0x\1/p' "/tmp/hist-emul-$p" |
		sort -rn | head -n 30 >/tmp/topemul
	bt_symbolize /tmp/topemul | awk -v p="$p" '{ print "SKIFF-TRACE:", p, "emul", $1, $3, $4 }'
	grep -h -E "Hits|Entries|Dropped" "/tmp/hist-exit-$p" "/tmp/hist-emul-$p" |
		sed "s/^ */SKIFF-TRACE: $p /"
}

l1() {
	tracefs_up
	[ -e "$TR"/events/kvm/kvm_exit/trigger ] || { fail "no kvm tracepoints"; return; }
	tap_up "$NT_L1" || { fail "tap0 setup failed"; return; }
	killall iperf3 2>/dev/null
	iperf3 -s >/tmp/iperf3-s.log 2>&1 &
	rm -f /tmp/hist-*
	cur=
	nt_watch &
	watcher=$!
	L2_CMDLINE="$L2_CMDLINE nokaslr"
	skiff_boot_l2 --cpus 1 --net tap=tap0 || { fail "skiff exited $VMM_RC"; return; }
	wait "$watcher" # not iperf3's server
	killall iperf3 2>/dev/null
	for p in rr down up; do
		[ -e "/tmp/hist-exit-$p" ] || { fail "no counts for phase $p"; return; }
		nt_report "$p"
	done
	pass
}

l2() {
	l2_ping_phase "$NT_L1" "$NT_L2" 400 || return
	echo "SKIFF-L2-MARK phase=down"
	sleep 0.5
	iperf3 -c "$NT_L1" -R -t 3 -J >/tmp/down.json 2>&1
	echo "SKIFF-L2-MARK phase=up"
	sleep 0.5
	iperf3 -c "$NT_L1" -t 3 -J >/tmp/up.json 2>&1
	echo "SKIFF-L2-MARK phase=end"
	for d in down up; do
		b=$(awk '/"sum_received"/ { f = 1 } f && /"bytes"/ { v = $2; sub(/,.*/, "", v); print v; exit }' "/tmp/$d.json")
		echo "SKIFF-L2-MARK ${d}_bytes=${b:-0}"
	done
}
