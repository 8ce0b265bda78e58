# SPDX-License-Identifier: Apache-2.0
# Acknowledged flushes survive a VMM crash: DUR_TRIALS times, L2 writes
# numbered 512-byte records to /dev/vda, each with fsync (write + FLUSH), and
# prints each record's number once fsync has returned. L1 watches L2's
# console and SIGKILLs skiff when a random record number (2..31) shows up,
# while L2 keeps writing, then checks that every record L2 reported is in
# the image at its sector. A fresh image per trial, pre-filled with blank
# 512-byte lines, so sector N is line N+1 of the image.
# What it proves: skiff completes a FLUSH only after the writes before it
# reached the image file (the VMM keeps no acknowledged data of its own).
# It cannot tell fdatasync from no fdatasync: L1's page cache survives the
# kill; only a crash of L1 itself would (see the unit tests and the code).
TIMEOUT=300 # about 150 s measured alone, 159 and 164 s in clean-clone runs (2x); over 450 s only beside four builds and testbeds (2026-12-05)

DUR_TRIALS=20
DUR_RECS=400 # records L2 writes if it is never killed
DUR_IMG=/tmp/dur.img
DUR_LOG=/tmp/dur.log

# Blank image: DUR_RECS + 1 sectors, each a 511-byte line of dots.
dur_blank_image() {
	awk -v n="$DUR_RECS" 'BEGIN { s = sprintf("%511s", ""); gsub(/ /, ".", s);
		for (i = 0; i <= n; i++) print s }' >"$DUR_IMG"
}

# dur_run_trial T: one boot, killed at a random record. Appends a reason to
# DUR_BAD on failure; adds the records checked to DUR_CHECKED.
dur_run_trial() {
	t=$1
	r=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
	target=$((2 + r % 30))
	# Odd trials trap kicks on the vCPU thread, even ones use ioeventfd.
	mode=ioeventfd flag=
	[ $((t % 2)) = 1 ] && mode=no-ioeventfd flag=--no-ioeventfd
	rm -f "$DUR_IMG"
	dur_blank_image
	# Not through timeout(1): $! must be skiff itself, for kill -9.
	skiff run --kernel "$L2_KERNEL" --initrd "$L2_INITRD" --mem "$L2_MEM" \
		--cmdline "$L2_CMDLINE skiff_trial=$t" --disk "$DUR_IMG" \
		${flag:+"$flag"} \
		</dev/null >"$DUR_LOG" 2>/tmp/dur.err &
	pid=$!
	start=$(cut -d. -f1 /proc/uptime)
	how=exited
	while kill -0 "$pid" 2>/dev/null; do
		if grep -q "^SKIFF-L2-REC $t ${target}[^0-9]" "$DUR_LOG"; then
			kill -9 "$pid"
			how=killed
			break
		fi
		if [ $(($(cut -d. -f1 /proc/uptime) - start)) -gt "$L2_TIMEOUT" ]; then
			kill -9 "$pid"
			how=timeout
			break
		fi
		sleep 0.1
	done
	wait "$pid"
	rc=$?
	# Every record L2 reported (after the kill too: the log is final now)
	# must be in its sector. Only whole lines count: the console's lines
	# end in CR LF, and the kill can cut the last one short ("SKIFF-L2-REC
	# 9 " is no report).
	res=$(awk -v t="$t" '
		FNR == NR { disk[FNR - 1] = $0; next }
		!sub(/\r$/, "") { next }
		$1 == "SKIFF-L2-REC" && $2 == t && $3 ~ /^[0-9]+$/ {
			n++
			if (disk[$3] !~ ("^REC " t " " $3 " ")) miss = miss " " $3
		}
		END { printf "%d%s\n", n, miss == "" ? "" : " missing:" miss }' "$DUR_IMG" "$DUR_LOG")
	lost=$(echo "${res#* missing:}" | wc -w)
	reported=${res%% *}
	echo "durability: trial $t ($mode): target $target, skiff $how (rc $rc), L2 reported $res"
	DUR_CHECKED=$((DUR_CHECKED + reported))
	case "$how $rc $res" in
	"killed 137 "*missing*) DUR_BAD="$DUR_BAD [trial $t: $lost of $reported lost]" ;;
	"killed 137 "*) ;;
	*)
		DUR_BAD="$DUR_BAD [trial $t: skiff $how rc $rc, $reported records]"
		tail -n 15 "$DUR_LOG"
		tail -n 5 /tmp/dur.err
		;;
	esac
}

l1() {
	DUR_BAD="" DUR_CHECKED=0
	t0=$(now_ns)
	t=1
	while [ "$t" -le "$DUR_TRIALS" ]; do
		dur_run_trial "$t"
		t=$((t + 1))
	done
	metric durability_trials "$DUR_TRIALS"
	metric durability_records_checked "$DUR_CHECKED"
	metric durability_s $((($(now_ns) - t0) / 1000000000))
	rm -f "$DUR_IMG" "$DUR_LOG"
	if [ -n "$DUR_BAD" ]; then fail "$DUR_BAD"; else pass; fi
}

l2() {
	t=$(sed -n 's/.*skiff_trial=\([0-9]*\).*/\1/p' /proc/cmdline)
	wait_for /dev/vda
	[ -b /dev/vda ] || { echo "SKIFF-L2-REC-ERROR no /dev/vda"; return; }
	n=1
	while [ "$n" -le "$DUR_RECS" ]; do
		# One sector, its own line: "REC trial n" padded to 511 bytes.
		printf '%-511s\n' "REC $t $n" |
			dd of=/dev/vda bs=512 seek="$n" count=1 iflag=fullblock conv=notrunc,fsync 2>/dev/null ||
			{ echo "SKIFF-L2-REC-ERROR write $n failed"; return; }
		echo "SKIFF-L2-REC $t $n"
		n=$((n + 1))
	done
}
