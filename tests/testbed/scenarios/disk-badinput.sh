# SPDX-License-Identifier: Apache-2.0
# --disk refuses bad input before the guest starts: exit status 2 and one
# line on stderr about the problem. Cases: an empty path, a missing file, a
# directory (read-write and ",ro"), a character device, an unknown option,
# an empty option, bad polling options (and polling without ioeventfd),
# and one image given twice (it is locked while in use).
TIMEOUT=90


l1() {
	command -v skiff >/dev/null || { fail "no skiff in L1"; return; }
	BAD=""
	I=/tmp/bad.img
	truncate -s 1M "$I"
	mkdir -p /tmp/imgdir
	expect_usage_error "empty path" "empty image path" run --kernel /l2/vmlinuz --mem 256M --disk ""
	expect_usage_error "empty path, ro" "empty image path" run --kernel /l2/vmlinuz --mem 256M --disk ,ro
	expect_usage_error "missing file" "cannot open /tmp/nosuch.img" run --kernel /l2/vmlinuz --mem 256M --disk /tmp/nosuch.img
	expect_usage_error "directory" "directory" run --kernel /l2/vmlinuz --mem 256M --disk /tmp/imgdir
	expect_usage_error "directory, ro" "directory" run --kernel /l2/vmlinuz --mem 256M --disk /tmp/imgdir,ro
	expect_usage_error "char device" "not a regular file" run --kernel /l2/vmlinuz --mem 256M --disk /dev/null
	expect_usage_error "unknown option" "unknown disk option 'foo'" run --kernel /l2/vmlinuz --mem 256M --disk "$I,foo"
	expect_usage_error "empty option" "unknown disk option ''" run --kernel /l2/vmlinuz --mem 256M --disk "$I,"
	expect_usage_error "bad poll mode" "invalid poll=sometimes" run --kernel /l2/vmlinuz --mem 256M --disk "$I,poll=sometimes"
	expect_usage_error "bad poll-start" "invalid poll-start=0" run --kernel /l2/vmlinuz --mem 256M --iothreads 2 --disk "$I,poll=adaptive,poll-start=0"
	expect_usage_error "poll, trapped kicks" "poll= needs ioeventfd" run --kernel /l2/vmlinuz --mem 256M --no-ioeventfd --disk "$I,poll=always"
	expect_usage_error "image twice" "in use" run --kernel /l2/vmlinuz --mem 256M --disk "$I" --disk "$I"
	expect_usage_error "image twice, once ro" "in use" run --kernel /l2/vmlinuz --mem 256M --disk "$I,ro" --disk "$I"
	rm -rf "$I" /tmp/imgdir
	if [ -n "$BAD" ]; then fail "wrong handling:$BAD"; else pass; fi
}
