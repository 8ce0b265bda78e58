#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Install what skiff needs to build and test, and fetch the guest kernel:
# everything .ci/run uses (format-check, lint, make test and its parts),
# clang for the fuzz targets only on their first use (--fuzz).
#
# Idempotent: installs only missing Debian packages (running `apt-get update`
# at most once, and only when something is missing), and downloads + extracts
# the guest kernel package into .cache/kernel/ only if not already there.
# The kernel is NOT installed: a VMM's setup must never touch the host's /boot.
# Prints one line per action taken, nothing otherwise. Works non-interactively
# (CI=true, no stdin) on a fresh Debian 12 machine as root.
#
# --fuzz: only what the libFuzzer targets need (`make fuzz`, `make fuzz-ci`):
# the build packages plus clang and its runtime (libFuzzer, sanitizers), so
# plain builds and CI runs without fuzzing do not pay for clang.
set -euo pipefail

FUZZ=0 QEMU10=0
if [ "${1:-}" = --fuzz ]; then FUZZ=1; fi
# --l0-qemu10: also QEMU 10 from bookworm-backports for L0 (issue 39), in
# .cache/qemu10/ (extracted, never installed: the system's QEMU 7.2 stays
# the default); TB_QEMU=.cache/qemu10/qemu-system-x86_64 selects it.
if [ "${1:-}" = --l0-qemu10 ]; then QEMU10=1; fi

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KCACHE="$ROOT/.cache/kernel"

PACKAGES=(build-essential pkg-config libcmocka-dev libseccomp-dev liblzma-dev liburing-dev libxxhash-dev
	libhttp-parser-dev libjson-c-dev # the API socket: HTTP/1.1 requests, JSON bodies
	python3-yaml python3-jsonschema  # tests/api: Firecracker's OpenAPI description
	curl                             # tests/api and the fcapi scenario's requests
	qemu-system-x86 busybox-static iperf3 iproute2 cpio xz-utils gzip
	python3 gnuplot-nox sockperf
	kmod      # modinfo reads guest module dependencies when building images
	e2fsprogs # mke2fs and /etc/mke2fs.conf for the disk scenario's guest
	fio       # the bench's blk-* workloads: packed with its libraries for L2
	ethtool   # L2's ethtool -C: virtio-net notification coalescing (scenario, bench)
	shellcheck   # make lint
	clang-format # make format-check (.ci/run's first step)
	git          # make lint lists the scripts with git ls-files
	util-linux   # flock (one L0 at a time), setpriv (tests/cli)
	coreutils    # timeout: every test runner's bound (tests/timeout.sh)
)
if [ "$FUZZ" -eq 1 ]; then
	# libclang-rt-dev: libFuzzer and the ASan/UBSan runtimes for clang.
	PACKAGES=(build-essential pkg-config libseccomp-dev liblzma-dev liburing-dev libxxhash-dev libhttp-parser-dev
		libjson-c-dev clang libclang-rt-dev)
fi

export DEBIAN_FRONTEND=noninteractive

# Prefix apt-get with sudo when not root (developer machines); CI runs as root.
SUDO=()
if [ "$(id -u)" -ne 0 ]; then SUDO=(sudo); fi

# Run a command quietly; show its output only if it fails (apt and debconf
# chat on stderr even with -qq).
quiet() {
	local out rc=0
	out=$(mktemp)
	"$@" </dev/null >"$out" 2>&1 || rc=$?
	[ "$rc" -eq 0 ] || cat "$out" >&2
	rm -f "$out"
	return "$rc"
}

updated=0
apt_update_once() {
	if [ "$updated" -eq 0 ]; then
		echo "install-deps: apt-get update"
		quiet "${SUDO[@]}" apt-get update -qq
		updated=1
	fi
}

is_installed() {
	[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}

missing=()
for p in "${PACKAGES[@]}"; do
	is_installed "$p" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
	apt_update_once
	echo "install-deps: installing ${missing[*]}"
	quiet "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[ "$FUZZ" -eq 1 ] && exit 0

# The guest kernel: the version that the linux-image-amd64 metapackage names,
# e.g. linux-image-6.1.0-57-amd64. apt-cache needs package lists: if it finds
# nothing, update once and ask again.
kernel_pkg() {
	apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -n1
}
KPKG=$(kernel_pkg)
if [ -z "$KPKG" ]; then
	apt_update_once
	KPKG=$(kernel_pkg)
fi
if [ -z "$KPKG" ]; then
	echo "install-deps: cannot find the kernel package linux-image-amd64 depends on" >&2
	exit 1
fi
KVER=${KPKG#linux-image-}

# A stamp written after a complete extraction, so an interrupted run retries.
STAMP="$KCACHE/.extracted-$KVER"
if [ ! -e "$STAMP" ]; then
	mkdir -p "$KCACHE"
	echo "install-deps: downloading $KPKG into .cache/kernel/"
	# apt-get download drops privileges to _apt, which may not be able to write
	# to the project's folder: as root, tell apt not to drop (no warning then).
	sandbox=()
	if [ "$(id -u)" -eq 0 ]; then sandbox=(-o APT::Sandbox::User=root); fi
	rm -f "$KCACHE"/linux-image-*.deb
	(cd "$KCACHE" && quiet apt-get download -qq "${sandbox[@]}" "$KPKG")
	echo "install-deps: extracting $KPKG into .cache/kernel/"
	quiet dpkg -x "$KCACHE"/"$KPKG"_*.deb "$KCACHE"
	# Kernel images are mode 0600 in the package; let a non-root user read it.
	chmod a+r "$KCACHE"/boot/vmlinuz-"$KVER"
	touch "$STAMP"
fi

[ "$QEMU10" -eq 1 ] || exit 0
# QEMU 10 for L0. The suite's apt source is added with a pin that keeps
# every installed package where it is (backports are never upgraded to
# unless asked by version); the three packages are only downloaded.
QCACHE="$ROOT/.cache/qemu10"
QVER=1:10.0.2+ds-2+deb13u1~bpo12+1
SRC=/etc/apt/sources.list.d/skiff-bookworm-backports.sources
if [ ! -e "$SRC" ] && ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d; then
	echo "install-deps: adding bookworm-backports (pinned to 100) for QEMU 10"
	printf '%s\n' 'Types: deb' 'URIs: http://deb.debian.org/debian' 'Suites: bookworm-backports' \
		'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' |
		"${SUDO[@]}" tee "$SRC" >/dev/null
	printf '%s\n' 'Package: *' 'Pin: release a=bookworm-backports' 'Pin-Priority: 100' |
		"${SUDO[@]}" tee /etc/apt/preferences.d/skiff-bookworm-backports >/dev/null
	updated=0
	apt_update_once
fi
if [ ! -e "$QCACHE/.extracted" ]; then
	mkdir -p "$QCACHE"
	echo "install-deps: downloading QEMU $QVER into .cache/qemu10/"
	sandbox=()
	if [ "$(id -u)" -eq 0 ]; then sandbox=(-o APT::Sandbox::User=root); fi
	(cd "$QCACHE" && quiet apt-get download -qq "${sandbox[@]}" qemu-system-x86="$QVER" \
		qemu-system-data="$QVER" qemu-system-common="$QVER")
	for d in "$QCACHE"/*.deb; do quiet dpkg -x "$d" "$QCACHE/root"; done
	# Its own firmware first (-L), then the system's SeaBIOS its links name.
	printf '#!/bin/sh\nexec "%s/root/usr/bin/qemu-system-x86_64" -L "%s/root/usr/share/qemu" "$@"\n' \
		"$QCACHE" "$QCACHE" >"$QCACHE/qemu-system-x86_64"
	chmod +x "$QCACHE/qemu-system-x86_64"
	touch "$QCACHE/.extracted"
fi
