#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR
# Build the testbed's base initramfs images, if their inputs changed:
#   .cache/testbed/l2-base.cpio.gz  the guest skiff boots (L2)
#   .cache/testbed/l1-base.cpio.gz  the VMM host inside L0 (L1)
# Each image's inputs (kernel version, these scripts, package versions, the
# binaries copied) are hashed into IMAGE.hash; a matching hash means the
# image is current. Per-run parts (skiff, scenario scripts, L2 initrd) are a
# small overlay appended by run-one.sh, so these are rarely rebuilt.
# Prints one line per image it builds, nothing otherwise.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

command -v modinfo >/dev/null || tb_die "modinfo missing: run tests/install-deps.sh"
KVER=$(tb_kernel_version)
mkdir -p "$TB_CACHE"
# Work files of runs that were killed before cleaning up after themselves.
find "$TB_CACHE" -maxdepth 1 \( -name 'run.*' -o -name 'stage.*' \) \
	-mmin +120 -exec rm -rf {} + 2>/dev/null || true

# Binaries each image gets besides busybox: iproute2's ip (busybox ip cannot
# make taps), iperf3, in L2 ethtool (-C sets virtio-net's coalescing) and,
# in L1, sockperf and GNU date (busybox date has no %N, needed for the ns
# timestamps of boot times).
L2_BINS=(/usr/sbin/ip /usr/bin/iperf3 /usr/sbin/ethtool)
L1_BINS=(/usr/sbin/ip /usr/bin/iperf3 /usr/bin/sockperf /usr/bin/date)
PKGS=(busybox-static iproute2 iperf3 ethtool sockperf coreutils libc6 kmod)

# Everything an image depends on, as text to hash. File identity by path,
# size and mtime (cheap); scripts by content.
inputs() {
	local f
	echo "kernel $KVER"
	stat -c '%n %s %Y' "$(tb_vmlinuz)"
	dpkg-query -W -f '${Package} ${Version}\n' "${PKGS[@]}" 2>/dev/null || true
	for f in "$@"; do
		# shellcheck disable=SC2046 # one path per word
		stat -c '%n %s %Y' "$f" $(tb_libs_of "$f")
	done
	cat "$TB_DIR/lib.sh" "$TB_DIR/build-images.sh" "$TB_DIR"/guest/*
	# L1's kernel cache is named by skiff's hash of the bzImage.
	cat "$TB_ROOT/src/x86/kcache.c"
}

# build IMAGE FUNCTION BINS...: run FUNCTION STAGING_DIR to fill the tree,
# pack it, replace IMAGE atomically (concurrent readers see old or new).
build() {
	local image=$1 fill=$2 hash stage
	shift 2
	hash=$(inputs "$@" | sha256sum | cut -d' ' -f1)
	if [ -e "$image" ] && [ "$(cat "$image.hash" 2>/dev/null)" = "$hash" ]; then
		return 0
	fi
	tb_say "building ${image#"$TB_ROOT"/}"
	stage=$(mktemp -d "$TB_CACHE/stage.XXXXXX")
	# shellcheck disable=SC2064 # expand now: stage is local
	trap "rm -rf '$stage'" EXIT
	"$fill" "$stage"
	tb_mkcpio "$stage" "$image.tmp.$$" 1
	mv -f "$image.tmp.$$" "$image"
	# A new file, renamed in: worktrees share the cache's inodes (cp -al),
	# and writing through one would change every tree's hash.
	echo "$hash" >"$image.hash.tmp.$$"
	mv -f "$image.hash.tmp.$$" "$image.hash"
	rm -rf "$stage"
	trap - EXIT
}

# The vsock scenario's stream ends (AF_VSOCK in L2, the hybrid Unix
# socket in L1), and the benchmark's (vsock-bench.c). Linked against the
# libc both images already carry for ip: ~20 KB, where a static build
# would add ~330 KB (gzip'd) that every L2 boot inflates under emulation.
build_vsock_io() {
	cc -O2 -Wall -Wextra -Werror -o "$1/bin/vsock-io" "$TB_DIR/guest/vsock-io.c" \
		"$TB_DIR/guest/vsock-bench.c"
}

fill_l2() {
	local d=$1 b
	tb_add_skeleton "$d"
	tb_add_busybox "$d" "ip"
	for b in "${L2_BINS[@]}"; do tb_copy_bin "$d" "$b"; done
	# shellcheck disable=SC2086 # a list of names
	tb_add_modules "$d" $TB_L2_MODULES
	mkdir -p "$d/testbed"
	cp "$TB_DIR/guest/lib.sh" "$d/testbed/lib.sh"
	cp "$TB_DIR/guest/profile" "$d/etc/profile"
	install -m 755 "$TB_DIR/guest/l2-init" "$d/init"
	build_vsock_io "$d"
	cc -static -O2 -Wall -Wextra -Werror -o "$d/bin/pci-mem" "$TB_DIR/guest/pci-mem.c"
}

fill_l1() {
	local d=$1 b
	tb_add_skeleton "$d"
	tb_add_busybox "$d" "ip date"
	for b in "${L1_BINS[@]}"; do tb_copy_bin "$d" "$b"; done
	# For programs that exec date by PATH (the shell uses its own applets
	# first: /testbed/lib.sh defines a date function for it).
	ln -sf /usr/bin/date "$d/bin/date"
	# shellcheck disable=SC2086 # a list of names
	tb_add_modules "$d" $TB_L1_MODULES
	mkdir -p "$d/testbed" "$d/l2"
	cp "$TB_DIR/guest/lib.sh" "$d/testbed/lib.sh"
	cp "$TB_DIR/guest/profile" "$d/etc/profile"
	cp "$(tb_vmlinuz)" "$d/l2/vmlinuz"
	install -m 755 "$TB_DIR/guest/l1-init" "$d/init"
	cc -static -O2 -Wall -Wextra -Werror -o "$d/bin/kvm-hold" "$TB_DIR/guest/kvm-hold.c"
	build_vsock_io "$d"
	cc -static -O2 -Wall -Wextra -Werror -o "$d/bin/pci-mem" "$TB_DIR/guest/pci-mem.c"
	# skiff decompresses a bzImage's kernel once and caches it; do that here,
	# natively, instead of in emulated L1 on every scenario's first boot.
	if [ -x "$TB_SKIFF" ]; then
		SKIFF_CACHE_DIR="$d/root/.cache/skiff" "$TB_SKIFF" unpack "$d/l2/vmlinuz"
	fi
}

build "$TB_L2_BASE" fill_l2 "${L2_BINS[@]}"
build "$TB_L1_BASE" fill_l1 "${L1_BINS[@]}"
