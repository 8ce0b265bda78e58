# SPDX-License-Identifier: Apache-2.0
# L2 boots under skiff once per vCPU count in BOOT_CPUS and sees that many
# CPUs; skiff exits 0 each time L2 powers off. Reports skiff's start→first
# KVM_RUN and start→L2 init per boot (metrics keyed by the count). L2's
# timer is the TSC-deadline LAPIC timer KVM emulates (skiff sets the CPUID
# bit KVM leaves out: src/x86/cpuid.c), and its PAT is on (skiff enables
# the MTRRs as firmware would: src/x86/cpu.c; with them off Linux 6.1
# turns PAT off too).
TIMEOUT=90 # about 35 s measured (two L2 boots)
BOOT_CPUS="1 2"
EXPECT="SKIFF-L2: init
SKIFF-L2-MARK nproc=1
SKIFF-L2-MARK nproc=2"

l1() {
	for n in $BOOT_CPUS; do
		skiff_boot_l2 --cpus "$n" || { fail "--cpus $n: skiff exited $VMM_RC"; return; }
		l2_saw "SKIFF-L2-MARK nproc=$n" || { fail "--cpus $n: L2 did not report nproc=$n"; return; }
		l2_saw "SKIFF-L2-MARK clockevent=lapic-deadline" || {
			fail "--cpus $n: L2's timer is not lapic-deadline: $(grep -m1 'MARK clockevent' /tmp/l2.log)"
			return
		}
		l2_saw "SKIFF-L2-MARK pat=on" || {
			fail "--cpus $n: L2's PAT is off: $(grep -m1 'MARK pat' /tmp/l2.log)"
			return
		}
		metric "cpus${n}_start_to_init_ms" "$L2_INIT_MS"
	done
	pass
}

l2() {
	echo "SKIFF-L2-MARK nproc=$(nproc)"
	read -r ce </sys/devices/system/clockevents/clockevent0/current_device
	echo "SKIFF-L2-MARK clockevent=$ce"
	# With the MTRRs off Linux 6.1 says "x86/PAT: MTRRs disabled,
	# skipping PAT initialization too." (seen with skiff before it set
	# them); it prints its "x86/PAT: Configuration" line either way.
	pat=$(dmesg | grep -E 'x86/PAT|mtrr: ' | tr '\n' ' ')
	case $pat in
	*isabled*) echo "SKIFF-L2-MARK pat=off: $pat" ;;
	*x86/PAT*) echo "SKIFF-L2-MARK pat=on" ;;
	*) echo "SKIFF-L2-MARK pat=unknown (no x86/PAT line in dmesg)" ;;
	esac
}
