# virtio-blk end to end, in two boots of L2 on raw images in L1's tmpfs.
# Boot 1 ("write"): L2 sees /dev/vda with the right size (the image is
# 16 MiB + 100 bytes: the partial tail sector is not part of the disk),
# writes 1 MiB of random data at 1 MiB and a marker in the last sector with
# fsync, and reports the data's sha256; L1 finds the same bytes in the
# image. Boot 2 ("read", two disks, the second ",ro", kicks trapped with
# --no-ioeventfd): L2 reads the data back from a cold cache, sees vdb
# read-only with its serial from the file name, fails to write it, and
# reads its contents; L1 checks both checksums and that the read-only image
# is unchanged.
# No file system: the L2 kernel has ext2/ext4 only as modules, which the
# L2 image does not carry, and busybox-static has no mkfs.
TIMEOUT=600
EXPECT="SKIFF-L2-DISK size=32768 ro=0 serial=disk.img
SKIFF-L2-DISK vdb ro=1 serial=ro.img"

DISK_IMG=/tmp/disk.img
DISK_RO_IMG=/tmp/ro.img

# The phase L1 chose for this boot, from L2's kernel command line.
disk_phase() { sed -n 's/.*skiff_disk=\([a-z]*\).*/\1/p' /proc/cmdline; }

# disk_wait_dev NAME: waits up to 10 s for /dev/NAME. devtmpfs makes the
# node asynchronously, so it can lag behind the driver's probe.
disk_wait_dev() {
	i=0
	while [ ! -b "/dev/$1" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -b "/dev/$1" ]
}

# disk_sha FILE SKIP-64K-BLOCKS COUNT: sha256 of part of a file or disk.
disk_sha() {
	dd if="$1" bs=64k skip="$2" count="$3" 2>/dev/null | sha256sum | cut -d' ' -f1
}

# disk_l1_saw KEY: the value of "SKIFF-L2-DISK KEY=VALUE" from L2's console.
disk_l1_saw() {
	sed -n "s/^SKIFF-L2-DISK $1=\([^ ]*\).*/\1/p" /tmp/l2.log | head -n1
}

l1() {
	base=$L2_CMDLINE
	rm -f "$DISK_IMG" "$DISK_RO_IMG"
	truncate -s $((16 * 1024 * 1024 + 100)) "$DISK_IMG" || { fail "truncate"; return; }

	L2_CMDLINE="$base skiff_disk=write"
	skiff_boot_l2 --disk "$DISK_IMG" || { fail "boot 1: skiff exited $VMM_RC"; return; }
	sha=$(disk_l1_saw sha)
	[ -n "$sha" ] || { fail "boot 1: L2 wrote nothing: $(grep SKIFF-L2-DISK /tmp/l2.log | tail -n1)"; return; }
	host=$(disk_sha "$DISK_IMG" 16 16)
	[ "$host" = "$sha" ] || { fail "image holds $host where L2 wrote $sha"; return; }
	last=$(dd if="$DISK_IMG" bs=512 skip=32767 count=1 2>/dev/null | head -c 17)
	[ "$last" = "SKIFF-LAST-SECTOR" ] || { fail "last sector holds '$last'"; return; }
	size=$(stat -c %s "$DISK_IMG")
	[ "$size" = 16777316 ] || { fail "image size changed to $size"; return; }

	dd if=/dev/urandom of="$DISK_RO_IMG" bs=64k count=16 2>/dev/null
	ro_sha=$(disk_sha "$DISK_RO_IMG" 0 16)
	L2_CMDLINE="$base skiff_disk=read"
	# Kicks trapped on the vCPU thread this time (boot 1 used ioeventfd).
	skiff_boot_l2 --disk "$DISK_IMG" --disk "$DISK_RO_IMG,ro" ||
		{ fail "boot 2: skiff exited $VMM_RC"; return; }
	L2_CMDLINE=$base
	[ "$(disk_l1_saw readback)" = "$sha" ] || { fail "boot 2 read back '$(disk_l1_saw readback)', not $sha"; return; }
	[ "$(disk_l1_saw vdb_sha)" = "$ro_sha" ] || { fail "vdb reads '$(disk_l1_saw vdb_sha)', not $ro_sha"; return; }
	[ "$(disk_l1_saw vdb_write)" = refused ] || { fail "write to the ro disk: $(disk_l1_saw vdb_write)"; return; }
	[ "$(disk_sha "$DISK_RO_IMG" 0 16)" = "$ro_sha" ] || { fail "the ro image changed"; return; }
	rm -f "$DISK_IMG" "$DISK_RO_IMG"
	pass
}

l2() {
	case "$(disk_phase)" in
	write) disk_l2_write ;;
	read) disk_l2_read ;;
	*) echo "SKIFF-L2-DISK no phase on the command line" ;;
	esac
}

disk_l2_write() {
	disk_wait_dev vda || { echo "SKIFF-L2-DISK no /dev/vda"; return; }
	b=/sys/block/vda
	echo "SKIFF-L2-DISK size=$(cat $b/size) ro=$(cat $b/ro) serial=$(cat $b/serial)"
	dd if=/dev/urandom of=/tmp/pat bs=64k count=16 2>/dev/null
	# conv=fsync: the data goes out as writes, then a FLUSH.
	dd if=/tmp/pat of=/dev/vda bs=64k seek=16 conv=notrunc,fsync 2>/dev/null ||
		{ echo "SKIFF-L2-DISK write failed"; return; }
	printf 'SKIFF-LAST-SECTOR' | dd of=/dev/vda bs=512 seek=32767 conv=notrunc,sync,fsync 2>/dev/null ||
		{ echo "SKIFF-L2-DISK last-sector write failed"; return; }
	echo "SKIFF-L2-DISK sha=$(sha256sum </tmp/pat | cut -d' ' -f1)"
}

disk_l2_read() {
	disk_wait_dev vda || { echo "SKIFF-L2-DISK no /dev/vda"; return; }
	disk_wait_dev vdb || { echo "SKIFF-L2-DISK no /dev/vdb"; return; }
	echo "SKIFF-L2-DISK readback=$(disk_sha /dev/vda 16 16)"
	b=/sys/block/vdb
	echo "SKIFF-L2-DISK vdb ro=$(cat $b/ro) serial=$(cat $b/serial)"
	echo "SKIFF-L2-DISK vdb_sha=$(disk_sha /dev/vdb 0 16)"
	if dd if=/dev/zero of=/dev/vdb bs=512 count=1 conv=notrunc,fsync 2>/dev/null; then
		echo "SKIFF-L2-DISK vdb_write=accepted"
	else
		echo "SKIFF-L2-DISK vdb_write=refused"
	fi
}
