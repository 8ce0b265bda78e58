# SPDX-License-Identifier: Apache-2.0
# Where an L2 boot's KVM exits go: L1 traces kvm_exit and kvm_emulate_insn
# from skiff's start to L2's "SKIFF-L2: init" line (--cpus 1, nokaslr so
# the RIPs are the link addresses), then prints "SKIFF-TRACE: reason N
# REASON", "SKIFF-TRACE: rip N REASON RIP SYMBOL" and "SKIFF-TRACE: emul N
# insn RIP BYTES (MODE) SYMBOL" (the top 40 of each) and the ring buffer's
# overruns. Tracing slows the
# boot: its times are not the boot's. SLOW=1: a diagnosis, not a check.
TIMEOUT=500
SLOW=1
EXPECT="SKIFF-L2: init"

l1() {
	tracefs_up
	[ -e "$TR"/events/kvm/kvm_exit/enable ] || { fail "no kvm tracepoints"; return; }
	echo 65536 >"$TR"/buffer_size_kb
	echo >"$TR"/trace
	echo 1 >"$TR"/events/kvm/kvm_exit/enable
	echo 1 >"$TR"/events/kvm/kvm_emulate_insn/enable
	(
		i=0
		while [ $i -lt 4000 ] && ! grep -q "^SKIFF-L2: init" /tmp/l2.log 2>/dev/null; do
			sleep 0.05
			i=$((i + 1))
		done
		echo 0 >"$TR"/events/kvm/kvm_exit/enable
		echo 0 >"$TR"/events/kvm/kvm_emulate_insn/enable
	) &
	L2_CMDLINE="$L2_CMDLINE nokaslr"
	skiff_boot_l2 --cpus 1 || { fail "skiff exited $VMM_RC"; return; }
	wait
	grep -h overrun "$TR"/per_cpu/cpu*/stats | sed 's/^/SKIFF-TRACE: /'
	sed -n 's/.*kvm_exit: //p' "$TR"/trace >/tmp/exits
	echo "SKIFF-TRACE: total $(wc -l </tmp/exits)"
	# "vcpu 0 reason R [more] rip 0xADDR info1 ...": the reason, the RIP.
	awk '{ r = ""; for (i = 1; i < NF; i++) if ($i == "rip") r = $(i + 1); print $4, r }' \
		/tmp/exits >/tmp/rips
	awk '{ print $1 }' /tmp/rips | sort | uniq -c | sort -rn | head -n 40 |
		awk '{ print "SKIFF-TRACE: reason", $1, $2 }'
	sort /tmp/rips | uniq -c | sort -rn | head -n 40 >/tmp/top
	# "kvm_emulate_insn: 0:RIP:BYTES (MODE)"
	sed -n 's/.*kvm_emulate_insn: [0-9a-f]*:\([0-9a-f]*\):/insn 0x\1 /p' "$TR"/trace | sort | uniq -c |
		sort -rn | head -n 40 >/tmp/topemul
	echo >"$TR"/trace
	bt_symbolize /tmp/top | awk '{ print "SKIFF-TRACE: rip", $1, $2, $3, $4 }'
	bt_symbolize /tmp/topemul | sed 's/^ *//; s/^/SKIFF-TRACE: emul /'
	pass
}

l2() {
	dmesg | grep -E "alternatives|MP-table" | sed 's/^/SKIFF-L2-DMESG /'
}
