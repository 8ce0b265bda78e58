# SPDX-License-Identifier: Apache-2.0
# A power cut: L2's disk is L1's own disk (/dev/vda, an L0 virtio drive
# backed by a fresh host file per trial), and L0 dies by SIGKILL in the
# middle of L2's writes, so L1 loses its RAM, page cache included. Per
# trial: phase 1, L1 blanks the record area, skiff gives /dev/vda to L2,
# and L2 writes numbered 512-byte records, each with fsync (write + FLUSH),
# printing each record once fsync has returned; the host kills L0 a random
# 0..L0_KILL_DELAY_MS ms after L2's first line. Phase 2, a fresh L0 boots
# the same disk and L1 checks that every record phase 1's console
# acknowledged (whole lines only) is at its sector.
# What it proves, beyond durability: skiff completes a FLUSH only after
# fdatasync has pushed L1's page cache to L1's disk (a build that skips the
# fdatasync loses records here; tests/testbed/README.md). It cannot see
# whether L1's flush reached stable storage on the host: QEMU's writes
# survive QEMU's death in the host's page cache.
# TB_TRIALS=100 for a long run (about 55 min on a quiet machine).
TIMEOUT=75 # per L0 boot: a trial's phases take 30-70 s together (100, 125 s for all 3 trials in clean-clone runs)
TRIALS=3 # 30-70 s each (quiet or busy machine)
L0_DISK_MB=2
L0_KILL_AFTER="SKIFF-L2-MARK powercut-writing"
L0_KILL_DELAY_MS=8000
L1_PHASE2=l1_check
L1_EXTRA_MODULES="virtio_pci virtio_blk"

PC_RECS=2000 # records L2 writes if L0 is never killed (fit in 2 MiB)

pc_trial() { sed -n 's/.*testbed\.trial=\([0-9]*\).*/\1/p' /proc/cmdline; }

l1() {
	t=$(pc_trial)
	wait_for /dev/vda || { fail "no /dev/vda in L1"; return; }
	# Blank records, written back before L2 starts: sector N is line N+1.
	awk -v n="$PC_RECS" 'BEGIN { s = sprintf("%511s", ""); gsub(/ /, ".", s);
		for (i = 0; i <= n; i++) print s }' >/tmp/blank
	dd if=/tmp/blank of=/dev/vda bs=64k conv=fsync 2>/dev/null || { fail "cannot blank /dev/vda"; return; }
	rm -f /tmp/blank
	# Odd trials trap kicks on the vCPU thread, even ones use ioeventfd;
	# trials 1, 4, 5, 8, ... use io_uring, the others the thread path.
	flag=
	[ $((t % 2)) = 1 ] && flag=--no-ioeventfd
	aio=io_uring
	[ $((t % 4)) -ge 2 ] && aio=threads
	echo "powercut: trial $t: L2 writes to /dev/vda ${flag:-(ioeventfd)} aio=$aio"
	L2_CMDLINE="$L2_CMDLINE powercut_trial=$t"
	skiff_boot_l2 --disk "/dev/vda,aio=$aio" ${flag:+"$flag"}
	fail "skiff exited $VMM_RC before the power cut"
}

l2() {
	t=$(sed -n 's/.*powercut_trial=\([0-9]*\).*/\1/p' /proc/cmdline)
	wait_for /dev/vda || { echo "SKIFF-L2-REC-ERROR no /dev/vda"; return; }
	echo "SKIFF-L2-MARK powercut-writing"
	n=1
	while [ "$n" -le "$PC_RECS" ]; do
		# One sector, its own line: "REC trial n" padded to 511 bytes.
		printf '%-511s\n' "REC $t $n" |
			dd of=/dev/vda bs=512 seek="$n" count=1 iflag=fullblock conv=notrunc,fsync 2>/dev/null ||
			{ echo "SKIFF-L2-REC-ERROR write $n failed"; return; }
		echo "SKIFF-L2-REC $t $n"
		n=$((n + 1))
	done
}

# Phase 2: each record phase 1's console acknowledged must be on the disk.
# Only whole lines count (they end in CR): the kill can cut the last one
# short ("SKIFF-L2-REC 3 1" may be the start of 12). Also counts the
# records on the disk past the last acknowledged one (written, flushed or
# not, their line not out yet): allowed, and reported.
l1_check() {
	t=$(pc_trial)
	wait_for /dev/vda || { fail "no /dev/vda in L1"; return; }
	dd if=/dev/vda of=/tmp/disk bs=512 count=$((PC_RECS + 1)) 2>/dev/null
	cr=$(printf '\r')
	res=$(awk -v t="$t" -v cr="$cr" '
		FNR == NR { disk[FNR - 1] = $0; next }
		substr($0, length($0)) != cr { next }
		{ sub(/\r$/, "") }
		$1 == "SKIFF-L2-REC" && $2 == t && $3 ~ /^[0-9]+$/ {
			n++
			if ($3 + 0 > last) last = $3 + 0
			if (disk[$3] !~ ("^REC " t " " $3 " ")) { lost++; miss = miss " " $3 }
		}
		END {
			for (i = last + 1; i in disk && disk[i] ~ ("^REC " t " " i " "); i++) extra++
			printf "%d %d %d%s\n", n, lost, extra, miss
		}' /tmp/disk /testbed/phase1.log)
	# shellcheck disable=SC2086 # the words of the result
	set -- $res
	acked=$1 lost=$2 extra=$3
	shift 3
	echo "powercut: trial $t: $acked acknowledged, $lost lost${1:+ (records$(echo " $*" | cut -c1-200))}, $extra more on the disk"
	metric acked "$acked"
	metric lost "$lost"
	metric unacked_on_disk "$extra"
	rm -f /tmp/disk
	if [ "$lost" != 0 ]; then fail "trial $t: $lost of $acked acknowledged records lost"; else pass; fi
}
