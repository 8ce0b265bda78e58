#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR
# Builds kvmtool, the benchmark's third peer, from a pinned commit:
#
#   bench/build-kvmtool.sh [SRC]
#
# SRC (or $KVMTOOL_SRC) is a git clone of kvmtool (the kvmtool project's
# own repository, or any mirror of it holding the commit below). It is
# cloned into a scratch directory, checked out at KVMTOOL_COMMIT and built
# as lkvm-static (static: L1's initramfs has no libraries for it), which
# goes to .cache/kvmtool/lkvm-static with the commit beside it. Nothing of
# kvmtool enters the repository. Without a source it says so in one line
# and exits 0: bench/run.sh then leaves the kvmtool configurations out.
set -euo pipefail
BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../tests/testbed/lib.sh
. "$BENCH/../tests/testbed/lib.sh"

# The commit the peers table of ../shared/README.md was measured with.
KVMTOOL_COMMIT=b48735e5d562eaffb96cf98a91da212176f1534c

src=${1:-${KVMTOOL_SRC:-}}
if [ -z "$src" ]; then
	tb_say "kvmtool: no source given (bench/build-kvmtool.sh SRC, or KVMTOOL_SRC): not built"
	exit 0
fi
git -C "$src" cat-file -e "$KVMTOOL_COMMIT^{commit}" 2>/dev/null ||
	tb_die "kvmtool: $src has no commit $KVMTOOL_COMMIT"
if [ -x "$TB_KVMTOOL" ] && [ "$(cat "$TB_KVMTOOL.commit" 2>/dev/null)" = "$KVMTOOL_COMMIT" ]; then
	tb_say "kvmtool: $TB_KVMTOOL is already built at ${KVMTOOL_COMMIT:0:12}"
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$src" "$work/kvmtool"
git -C "$work/kvmtool" -c advice.detachedHead=false checkout -q "$KVMTOOL_COMMIT"
tb_say "kvmtool: building lkvm-static at ${KVMTOOL_COMMIT:0:12}"
make -C "$work/kvmtool" -j"$(nproc)" lkvm-static >"$work/build.log" 2>&1 ||
	{ tail -n 20 "$work/build.log" >&2; tb_die "kvmtool: the build failed"; }
mkdir -p "$(dirname "$TB_KVMTOOL")"
install -m 755 "$work/kvmtool/lkvm-static" "$TB_KVMTOOL"
echo "$KVMTOOL_COMMIT" >"$TB_KVMTOOL.commit"
tb_say "kvmtool: $TB_KVMTOOL"
