# SPDX-License-Identifier: Apache-2.0
# What L0's emulated CPU gives L1 and L2 (issue 39): L1's SVM features
# (nrip_save, npt, vgif, ...) and XSAVE, then one L2 boot with 50 pings and
# L2's CPU flags (xsave, x2apic) and its XSAVE line from dmesg. Metrics:
# l1_nrip_save, l1_xsave, l2_xsave (1 or 0), ping_avg_ms, and
# kvm_per_ping.NAME (L1's KVM counters over the pings, per ping).
# SLOW=1: a measurement of the testbed, not a check of skiff.
TIMEOUT=400
SLOW=1
EXPECT="SKIFF-L2: init
SKIFF-L2-MARK features-done"

lf_flag() { # FILE FLAG: 1 if /proc/cpuinfo-style FILE lists FLAG
	if grep -m1 '^flags' "$1" | tr ' ' '\n' | grep -qx "$2"; then echo 1; else echo 0; fi
}

lf_counters() {
	for f in /sys/kernel/debug/kvm/*; do
		[ -f "$f" ] && read -r v <"$f" 2>/dev/null && echo "${f##*/} $v"
	done
}

l1() {
	grep -m1 '^flags' /proc/cpuinfo | sed 's/^/L1-FLAGS /'
	for f in svm npt nrip_save vgif xsave x2apic; do metric "l1_$f" "$(lf_flag /proc/cpuinfo $f)"; done
	tap_up 169.254.10.1 || { fail "tap0 setup failed"; return; }
	(
		i=0
		while [ $i -lt 3000 ] && ! grep -q "^SKIFF-L2-MARK pings-start" /tmp/l2.log 2>/dev/null; do
			sleep 0.1
			i=$((i + 1))
		done
		lf_counters >/tmp/kvm0
		while [ $i -lt 3000 ] && ! grep -q "^SKIFF-L2-MARK pings-done" /tmp/l2.log 2>/dev/null; do
			sleep 0.1
			i=$((i + 1))
		done
		lf_counters >/tmp/kvm1
	) &
	skiff_boot_l2 --net tap=tap0 || { fail "skiff exited $VMM_RC"; return; }
	wait
	for f in xsave x2apic; do
		v=$(sed -n "s/^SKIFF-L2-MARK l2_$f=//p" /tmp/l2.log | head -n1)
		metric "l2_$f" "${v:-0}"
	done
	v=$(sed -n 's/^SKIFF-L2-MARK ping_avg_ms=//p' /tmp/l2.log | head -n1)
	metric ping_avg_ms "${v:-0}"
	[ -s /tmp/kvm1 ] && awk 'NR == FNR { a[$1] = $2; next } $2 - a[$1] != 0 { printf "%s %.1f\n", $1, ($2 - a[$1]) / 50 }' \
		/tmp/kvm0 /tmp/kvm1 | while read -r k v; do metric "kvm_per_ping.$k" "$v"; done
	pass
}

l2() {
	for f in xsave x2apic; do
		if grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -qx "$f"; then v=1; else v=0; fi
		echo "SKIFF-L2-MARK l2_$f=$v"
	done
	dmesg | grep -iE "xsave|fpu" | head -n5 | sed 's/^/SKIFF-L2-DMESG /'
	ip addr add 169.254.10.2/24 dev eth0 && ip link set eth0 up
	ping -c 2 -W 5 169.254.10.1 >/dev/null 2>&1
	echo "SKIFF-L2-MARK pings-start"
	out=$(ping -c 50 -i 0.2 -W 5 169.254.10.1 2>&1 | tail -n1)
	echo "SKIFF-L2-MARK pings-done"
	echo "SKIFF-L2-MARK ping_avg_ms=$(echo "$out" | sed -n 's|.*= [0-9.]*/\([0-9.]*\)/.*|\1|p')"
	echo "SKIFF-L2-MARK features-done"
}
