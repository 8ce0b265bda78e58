# --disk refuses bad input before the guest starts: exit status 2 and one
# line on stderr about the problem. Cases: an empty path, a missing file, a
# directory (read-write and ",ro"), a character device, an unknown option,
# an empty option, and one image given twice (it is locked while in use).
TIMEOUT=300

# disk_expect_usage_error DESC WHAT SKIFF-RUN-ARGS...: skiff run must exit 2
# with one stderr line matching the extended regex WHAT; else DESC is
# added to BAD.
disk_expect_usage_error() {
	desc=$1 what=$2
	shift 2
	rc=0
	timeout 60 skiff run --kernel /l2/vmlinuz --mem 256M "$@" </dev/null \
		>/tmp/bad.out 2>/tmp/bad.err || rc=$?
	lines=$(wc -l </tmp/bad.err)
	echo "disk-badinput: $desc: rc=$rc stderr_lines=$lines: $(head -n1 /tmp/bad.err)"
	if [ "$rc" != 2 ] || [ "$lines" != 1 ]; then
		BAD="$BAD [$desc: rc=$rc lines=$lines]"
	elif ! grep -qiE -- "$what" /tmp/bad.err; then
		BAD="$BAD [$desc: message not about /$what/]"
	fi
}

l1() {
	command -v skiff >/dev/null || { fail "no skiff in L1"; return; }
	BAD=""
	I=/tmp/bad.img
	truncate -s 1M "$I"
	mkdir -p /tmp/imgdir
	disk_expect_usage_error "empty path" "empty image path" --disk ""
	disk_expect_usage_error "empty path, ro" "empty image path" --disk ,ro
	disk_expect_usage_error "missing file" "cannot open /tmp/nosuch.img" --disk /tmp/nosuch.img
	disk_expect_usage_error "directory" "directory" --disk /tmp/imgdir
	disk_expect_usage_error "directory, ro" "directory" --disk /tmp/imgdir,ro
	disk_expect_usage_error "char device" "not a regular file" --disk /dev/null
	disk_expect_usage_error "unknown option" "unknown disk option 'foo'" --disk "$I,foo"
	disk_expect_usage_error "empty option" "unknown disk option ''" --disk "$I,"
	disk_expect_usage_error "image twice" "in use" --disk "$I" --disk "$I"
	disk_expect_usage_error "image twice, once ro" "in use" --disk "$I,ro" --disk "$I"
	rm -rf "$I" /tmp/imgdir
	if [ -n "$BAD" ]; then fail "wrong handling:$BAD"; else pass; fi
}
