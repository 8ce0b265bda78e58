# SPDX-License-Identifier: Apache-2.0
# virtio-blk end to end with a file system, in two boots of L2 on raw
# images in L1's tmpfs.
# Both boots give L2 2 vCPUs: a disk has a request queue per vCPU unless
# queues= says otherwise, and L2 reports the queues its block layer uses
# (/sys/block/vdX/mq/).
# Boot 1 ("write"): L2 sees /dev/vda with the right size (the image is
# 16 MiB + 100 bytes: the partial tail sector is not part of the disk)
# and two queues,
# makes an ext4 file system on its first 15 MiB with e2fsprogs' mke2fs,
# mounts it, writes a 3.5 MiB pattern file (seq's numbered lines: every
# block differs), syncs, reports the file's sha256 and unmounts; it writes
# a marker into the last sector, past the file system, with fsync. L1
# checks the sha256 against its own copy of the pattern, the ext4
# superblock (magic, journal, extents) and the marker in the image, and the
# image's size.
# Boot 2 ("read", two disks, the second a copy of the first given
# ",ro,queues=1,ops=4:100", so it has one queue and a rate limiter that
# must hold requests back, counted, without losing any):
# L2 mounts vda and reads the file back from a cold cache; it sees vdb
# read-only with its serial from the file name; a read-write mount of vdb
# is refused (the kernel answers EACCES; busybox mount then falls back to
# read-only), the file on it reads back too, and writing a file on it or a
# sector of it fails. L1 checks every checksum and that the read-only image
# is unchanged, byte for byte.
# mke2fs and the ext4 modules are in this scenario's L2 overlay only, so
# the L2 image every other scenario boots stays small.
TIMEOUT=120 # about 40 s measured (39 s on 2026-12-05)
EXPECT="SKIFF-L2-DISK size=32768 ro=0 serial=disk.img mq=2
SKIFF-L2-DISK vdb ro=1 serial=ro.img mq=1"
# /etc/mke2fs.conf: Debian's defaults (ext4 without orphan_file), not the
# ones built into mke2fs. crc32c_generic: ext4 and jbd2 ask the crypto API
# for "crc32c", and L2 has no modprobe to load it on demand.
L2_EXTRA_FILES="/usr/sbin/mke2fs /etc/mke2fs.conf"
L2_EXTRA_MODULES="crc32c_generic ext4"

DISK_IMG=/tmp/disk.img
DISK_RO_IMG=/tmp/ro.img
DISK_FS_SIZE=15M # of the 16 MiB disk: the last MiB stays raw
DISK_LINES=524288 # 7-byte lines: 3.5 MiB

# The pattern file's contents: "000001\n" to "524288\n". The same in L1 and
# L2 (both run busybox's seq).
disk_pattern() { seq -w 1 "$DISK_LINES"; }

# The phase L1 chose for this boot, from L2's kernel command line.
disk_phase() { sed -n 's/.*skiff_disk=\([a-z]*\).*/\1/p' /proc/cmdline; }

# disk_wait_dev NAME: waits up to 10 s for /dev/NAME. devtmpfs makes the
# node asynchronously, so it can lag behind the driver's probe.
disk_wait_dev() { wait_for "/dev/$1" && [ -b "/dev/$1" ]; }

# disk_mq NAME: how many hardware queues the block layer uses for NAME.
disk_mq() {
	n=0
	for d in /sys/block/"$1"/mq/*; do [ -d "$d" ] && n=$((n + 1)); done
	echo "$n"
}

# disk_sha FILE: sha256 of a file or of stdin ("-").
disk_sha() { sha256sum "$1" | cut -d' ' -f1; }

# disk_le FILE OFFSET 2|4: the little-endian number at OFFSET in FILE.
disk_le() {
	dd if="$1" bs=1 skip="$2" count="$3" 2>/dev/null | od -An -tu"$3" | tr -d ' \n'
}

# disk_ms: ms of uptime (10 ms resolution), for the phases' metrics.
disk_ms() { awk '{ printf "%.0f\n", $1 * 1000 }' /proc/uptime; }

# disk_l1_saw KEY: the value of "SKIFF-L2-DISK KEY=VALUE" from L2's console.
disk_l1_saw() {
	sed -n "s/^SKIFF-L2-DISK $1=\([^ ]*\).*/\1/p" /tmp/l2.log | head -n1
}

# disk_l1_bad_l2: the last thing L2 said about the disk, for a failure.
disk_l1_bad_l2() { grep -E 'SKIFF-L2-DISK|SKIFF-L2: insmod' /tmp/l2.log | tail -n1; }

l1() {
	base=$L2_CMDLINE
	rm -f "$DISK_IMG" "$DISK_RO_IMG"
	truncate -s $((16 * 1024 * 1024 + 100)) "$DISK_IMG" || { fail "truncate"; return; }
	want=$(disk_pattern | disk_sha -)

	L2_CMDLINE="$base skiff_disk=write"
	skiff_boot_l2 --cpus 2 --disk "$DISK_IMG" || { fail "boot 1: skiff exited $VMM_RC"; return; }
	sha=$(disk_l1_saw sha)
	[ -n "$sha" ] || { fail "boot 1: L2 wrote nothing: $(disk_l1_bad_l2)"; return; }
	[ "$sha" = "$want" ] || { fail "boot 1: L2's file has sha256 $sha, the pattern $want"; return; }
	# The superblock at 1024: magic 0xef53 at +0x38; has_journal (0x4) in
	# the compatible features at +0x5c, extents (0x40) in the incompatible
	# ones at +0x60: ext4, not ext2.
	magic=$(disk_le "$DISK_IMG" 1080 2)
	[ "$magic" = 61267 ] || { fail "no ext4 superblock in the image (magic $magic)"; return; }
	compat=$(disk_le "$DISK_IMG" 1116 4)
	incompat=$(disk_le "$DISK_IMG" 1120 4)
	[ $((compat & 0x4 && incompat & 0x40)) = 1 ] ||
		{ fail "the file system is not ext4 (features $compat/$incompat)"; return; }
	last=$(dd if="$DISK_IMG" bs=512 skip=32767 count=1 2>/dev/null | head -c 17)
	[ "$last" = "SKIFF-LAST-SECTOR" ] || { fail "last sector holds '$last'"; return; }
	size=$(stat -c %s "$DISK_IMG")
	[ "$size" = 16777316 ] || { fail "image size changed to $size"; return; }

	cp "$DISK_IMG" "$DISK_RO_IMG" || { fail "cp"; return; }
	ro_sha=$(disk_sha "$DISK_RO_IMG")
	L2_CMDLINE="$base skiff_disk=read"
	# The ro disk also has a rate limiter (4 requests per 100 ms): it must
	# hold requests back (counted) and still serve every byte.
	skiff_boot_l2 --cpus 2 --stats-json /tmp/disk-stats.json --disk "$DISK_IMG" \
		--disk "$DISK_RO_IMG,ro,queues=1,ops=4:100" ||
		{ fail "boot 2: skiff exited $VMM_RC"; return; }
	thr=$(sed -n 's/^ *"virtio-blk1 rate limiter throttled": \([0-9]*\).*/\1/p' /tmp/disk-stats.json)
	[ "${thr:-0}" -gt 0 ] || { fail "the ro disk's rate limiter never held a request ('$thr')"; return; }
	echo "disk: the ro disk's rate limiter held requests $thr times"
	L2_CMDLINE=$base
	got=$(disk_l1_saw readback)
	[ "$got" = "$want" ] || { fail "boot 2 read back '$got' ($(disk_l1_bad_l2)), not $want"; return; }
	[ "$(disk_l1_saw last)" = SKIFF-LAST-SECTOR ] || { fail "boot 2: last sector '$(disk_l1_saw last)'"; return; }
	got=$(disk_l1_saw vdb_rw_mount)
	[ "$got" = refused ] || { fail "read-write mount of the ro disk: '$got'"; return; }
	got=$(disk_l1_saw vdb_sha)
	[ "$got" = "$want" ] || { fail "the ro disk's file reads '$got' ($(disk_l1_bad_l2)), not $want"; return; }
	got=$(disk_l1_saw vdb_file_write)
	[ "$got" = refused ] || { fail "file write on the ro disk: '$got'"; return; }
	got=$(disk_l1_saw vdb_write)
	[ "$got" = refused ] || { fail "sector write to the ro disk: '$got'"; return; }
	[ "$(disk_sha "$DISK_RO_IMG")" = "$ro_sha" ] || { fail "the ro image changed"; return; }
	rm -f "$DISK_IMG" "$DISK_RO_IMG"
	pass
}

l2() {
	grep -qw ext4 /proc/filesystems || { echo "SKIFF-L2-DISK no ext4 in the kernel"; return; }
	case "$(disk_phase)" in
	write) disk_l2_write ;;
	read) disk_l2_read ;;
	*) echo "SKIFF-L2-DISK no phase on the command line" ;;
	esac
}

disk_l2_write() {
	disk_wait_dev vda || { echo "SKIFF-L2-DISK no /dev/vda"; return; }
	b=/sys/block/vda
	echo "SKIFF-L2-DISK size=$(cat $b/size) ro=$(cat $b/ro) serial=$(cat $b/serial) mq=$(disk_mq vda)"
	t=$(disk_ms)
	# Inode tables and journal zeroed now, not by a kernel thread while
	# the pattern is written; no discard (skiff's disks have none).
	# By path: busybox's shell would run its own mke2fs applet (ext2 only).
	/usr/sbin/mke2fs -q -t ext4 -E lazy_itable_init=0,lazy_journal_init=0,nodiscard \
		/dev/vda "$DISK_FS_SIZE" </dev/null || { echo "SKIFF-L2-DISK mke2fs failed"; return; }
	metric disk_mkfs_ms $(($(disk_ms) - t))
	mkdir -p /mnt/vda
	mount -t ext4 /dev/vda /mnt/vda || { echo "SKIFF-L2-DISK mount failed"; return; }
	t=$(disk_ms)
	disk_pattern >/mnt/vda/pattern || { echo "SKIFF-L2-DISK writing the file failed"; return; }
	sync
	metric disk_write_sync_ms $(($(disk_ms) - t))
	sha=$(disk_sha /mnt/vda/pattern)
	umount /mnt/vda || { echo "SKIFF-L2-DISK umount failed"; return; }
	printf 'SKIFF-LAST-SECTOR' | dd of=/dev/vda bs=512 seek=32767 conv=notrunc,sync,fsync 2>/dev/null ||
		{ echo "SKIFF-L2-DISK last-sector write failed"; return; }
	echo "SKIFF-L2-DISK sha=$sha"
}

disk_l2_read() {
	disk_wait_dev vda || { echo "SKIFF-L2-DISK no /dev/vda"; return; }
	disk_wait_dev vdb || { echo "SKIFF-L2-DISK no /dev/vdb"; return; }
	mkdir -p /mnt/vda /mnt/vdb
	mount -t ext4 /dev/vda /mnt/vda || { echo "SKIFF-L2-DISK mount failed"; return; }
	t=$(disk_ms)
	echo "SKIFF-L2-DISK readback=$(disk_sha /mnt/vda/pattern)"
	metric disk_read_ms $(($(disk_ms) - t))
	umount /mnt/vda || echo "SKIFF-L2-DISK umount failed"
	echo "SKIFF-L2-DISK last=$(dd if=/dev/vda bs=512 skip=32767 count=1 2>/dev/null | head -c 17)"

	b=/sys/block/vdb
	echo "SKIFF-L2-DISK vdb ro=$(cat $b/ro) serial=$(cat $b/serial) mq=$(disk_mq vdb)"
	# The kernel refuses write access to a read-only disk (EACCES); busybox
	# mount then retries read-only, so "refused" is: not mounted, or ro.
	if mount -t ext4 -o rw /dev/vdb /mnt/vdb; then
		opts=$(awk '$1 == "/dev/vdb" { print $4 }' /proc/mounts)
		case "$opts" in
		ro | ro,*) echo "SKIFF-L2-DISK vdb_rw_mount=refused (mounted $opts)" ;;
		*) echo "SKIFF-L2-DISK vdb_rw_mount=accepted ($opts)" ;;
		esac
	else
		echo "SKIFF-L2-DISK vdb_rw_mount=refused (mount failed)"
		mount -t ext4 -o ro /dev/vdb /mnt/vdb || { echo "SKIFF-L2-DISK ro mount failed"; return; }
	fi
	echo "SKIFF-L2-DISK vdb_sha=$(disk_sha /mnt/vdb/pattern)"
	if { echo new >/mnt/vdb/new; } 2>/dev/null; then
		echo "SKIFF-L2-DISK vdb_file_write=accepted"
	else
		echo "SKIFF-L2-DISK vdb_file_write=refused"
	fi
	umount /mnt/vdb || echo "SKIFF-L2-DISK umount vdb failed"
	if dd if=/dev/zero of=/dev/vdb bs=512 count=1 conv=notrunc,fsync 2>/dev/null; then
		echo "SKIFF-L2-DISK vdb_write=accepted"
	else
		echo "SKIFF-L2-DISK vdb_write=refused"
	fi
}
