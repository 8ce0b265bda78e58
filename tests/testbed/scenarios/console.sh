# SPDX-License-Identifier: Apache-2.0
# The console's output filter (src/core/console_filter.h) on the real data
# path: L2 prints a colour sequence, the cursor-position query, a
# title-setting OSC, a clipboard OSC and an 8-bit CSI between text; skiff
# runs with no --console-filter: its default, safe, applies to the pipe
# the testbed reads as to a terminal. The colours and the query must
# arrive byte for byte; the OSCs and the C1 byte must not, the text around
# them must.
TIMEOUT=90
EXPECT="SKIFF-L2: init
SKIFF-L2-MARK title=beforeafter
SKIFF-L2-MARK c1=a31mb"

l1() {
	skiff_boot_l2 --cpus 1 || { fail "skiff exited $VMM_RC, want 0"; return; }
	esc=$(printf '\033')
	grep -qF "SKIFF-L2-MARK colour=${esc}[31mred${esc}[0m" /tmp/l2.log ||
		{ fail "the colour sequence did not reach the console"; return; }
	grep -qF "SKIFF-L2-MARK cpr=${esc}[6n." /tmp/l2.log ||
		{ fail "the cursor-position query did not reach the console"; return; }
	l2_saw "SKIFF-L2-MARK title=beforeafter" ||
		{ fail "the text around the OSC did not arrive as it was"; return; }
	l2_saw "SKIFF-L2-MARK c1=a31mb" || { fail "the 8-bit CSI was not dropped"; return; }
	if grep -q "pwned" /tmp/l2.log; then
		fail "an OSC's body reached the console"
		return
	fi
	if grep -qF "${esc}]" /tmp/l2.log; then
		fail "an OSC reached the console"
		return
	fi
	pass
}

l2() {
	printf 'SKIFF-L2-MARK colour=\033[31mred\033[0m\n'
	printf 'SKIFF-L2-MARK cpr=\033[6n.\n'
	printf 'SKIFF-L2-MARK title=before\033]0;pwned-title\007\033]52;c;cHduZWQ=\033\\after\n'
	printf 'SKIFF-L2-MARK c1=a\23331mb\n'
}
