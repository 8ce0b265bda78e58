# SPDX-License-Identifier: Apache-2.0
# Which MSRs a pinging guest writes, and whether its EOIs go the
# paravirtual way: L1 counts kvm_msr (by MSR and direction), kvm_pv_eoi
# (EOIs the guest did in memory, by vector) and kvm_exit (by SVM exit
# code) while L2 (--cpus 1, default --net) pings L1 200 times, 10 ms
# apart. Prints "SKIFF-MSR: msr|pveoi|exit" histogram lines. A PV EOI
# skips the x2APIC EOI write (MSR 0x80b); KVM offers it only when no
# other interrupt is pending. SLOW=1: a diagnosis, not a check.
TIMEOUT=600
SLOW=1
EXPECT="SKIFF-L2: init"

NM_L1=169.254.13.1
NM_L2=169.254.13.2

# nm_wait MARK: until L2's console shows "SKIFF-L2-MARK phase=MARK".
nm_wait() {
	i=0
	while [ $i -lt 6000 ] && ! grep -q "^SKIFF-L2-MARK phase=$1" /tmp/l2.log 2>/dev/null; do
		sleep 0.05
		i=$((i + 1))
	done
}

nm_count() {
	ev="$TR"/events/kvm
	nm_wait rr
	echo "hist:keys=ecx.hex,write:size=256" >"$ev"/kvm_msr/trigger
	echo "hist:keys=vector:size=256" >"$ev"/kvm_pv_eoi/trigger
	echo "hist:keys=exit_reason.hex:size=256" >"$ev"/kvm_exit/trigger
	nm_wait end
	cp "$ev"/kvm_msr/hist /tmp/h-msr
	cp "$ev"/kvm_pv_eoi/hist /tmp/h-pveoi
	cp "$ev"/kvm_exit/hist /tmp/h-exit
}

l1() {
	tracefs_up
	[ -e "$TR"/events/kvm/kvm_pv_eoi/trigger ] || { fail "no kvm tracepoints"; return; }
	tap_up "$NM_L1" || { fail "tap0 setup failed"; return; }
	nm_count &
	counter=$!
	skiff_boot_l2 --cpus 1 --net tap=tap0 || { fail "skiff exited $VMM_RC"; return; }
	wait "$counter"
	for h in msr pveoi exit; do
		[ -s "/tmp/h-$h" ] || { fail "no $h counts"; return; }
		grep -E "hitcount: |Hits:" "/tmp/h-$h" | sed "s/^ */SKIFF-MSR: $h /"
	done
	pass
}

l2() {
	l2_ping_phase "$NM_L1" "$NM_L2" 200 || return
	echo "SKIFF-L2-MARK phase=end"
	sleep 1
}
