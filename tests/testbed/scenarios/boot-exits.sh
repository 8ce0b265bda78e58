# SPDX-License-Identifier: Apache-2.0
# Boot cost in KVM exits: L1's KVM counters (/sys/kernel/debug/kvm/*, the
# sums over every vCPU, e.g. exits, invlpg, io_exits) from skiff's start to
# L2's "SKIFF-L2: init" line, as metrics kvm_to_init.NAME (nonzero deltas
# only); L2's kernel log lines about the MP table, the direct mapping and
# the CPUs, with their timestamps. Two boots: --cpus 1 (metrics c1.*) and
# --cpus 2 (c2.*).
# The counters are read by polling L2's console log every 0.05 s, so a few
# exits after init may be counted. SLOW=1: a measurement, not a check.
TIMEOUT=400
SLOW=1
EXPECT="SKIFF-L2: init
SKIFF-L2-MARK nproc=1
SKIFF-L2-MARK nproc=2"

be_counters() {
	for f in /sys/kernel/debug/kvm/*; do
		[ -f "$f" ] && read -r v <"$f" 2>/dev/null && echo "${f##*/} $v"
	done
}

# be_boot N: one boot with --cpus N; its metrics are prefixed cN.
be_boot() {
	rm -f /tmp/kvm0 /tmp/kvm1
	be_counters >/tmp/kvm0
	(
		i=0
		while [ $i -lt 4000 ] && ! grep -q "^SKIFF-L2: init" /tmp/l2.log 2>/dev/null; do
			sleep 0.05
			i=$((i + 1))
		done
		be_counters >/tmp/kvm1
	) &
	skiff_boot_l2 --cpus "$1" || { fail "skiff exited $VMM_RC (cpus $1)"; return 1; }
	wait
	[ -s /tmp/kvm1 ] || { fail "no counters at init (cpus $1)"; return 1; }
	l2_saw "SKIFF-L2-MARK nproc=$1" || { fail "L2 did not report nproc=$1"; return 1; }
	awk 'NR == FNR { a[$1] = $2; next } $2 - a[$1] != 0 { print $1, $2 - a[$1] }' \
		/tmp/kvm0 /tmp/kvm1 | while read -r k v; do metric "c$1.kvm_to_init.$k" "$v"; done
	metric "c$1.start_to_init_ms" "$L2_INIT_MS"
	metric "c$1.uptime_at_init_s" "$(sed -n 's/^SKIFF-L2: init uptime=\([0-9.]*\).*/\1/p' /tmp/l2.log | head -n1)"
}

l1() {
	be_boot 1 && be_boot 2 && pass
}

l2() {
	dmesg | grep -E "MP-table|MP table|Intel MultiProcessor|GB pages|smpboot|Brought up|ACPI: (LAPIC|IOAPIC)|Kernel command|Linux version" |
		sed 's/^/SKIFF-L2-DMESG /'
	dmesg | grep -B2 "GB pages" | sed 's/^/SKIFF-L2-DMESG-GAP /'
	echo "SKIFF-L2-MARK nproc=$(nproc)"
}
