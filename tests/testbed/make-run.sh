#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR
# What `make run` does after building: boot a Linux guest under skiff.
# - Hardware KVM here (`skiff probe --quiet` exits 0: guest kernel code runs
#   natively): skiff boots the cached Debian kernel with the L2 initramfs
#   directly, its shell on this terminal.
# - Otherwise (no /dev/kvm, or a software KVM that emulates ring 0): the
#   nested testbed, interactively: L0 QEMU/TCG on this terminal, L1 runs skiff,
#   L2's shell on the console. QEMU's escape at L0: Ctrl-A x quits. skiff's
#   own escape is also Ctrl-A: in the nested case QEMU sees it first, so
#   Ctrl-A Ctrl-A x reaches skiff (quits skiff only, back to an L1 shell).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -x "$TB_SKIFF" ] || tb_die "no $TB_SKIFF: run make first"
"$TB_DIR/build-images.sh"
KERNEL=$(tb_vmlinuz)

if "$TB_SKIFF" probe --quiet; then
	echo "make run: /dev/kvm runs guest code natively: skiff boots the guest directly"
	exec "$TB_SKIFF" run --kernel "$KERNEL" --initrd "$TB_L2_BASE" \
		--cmdline "console=ttyS0" --mem 512M
fi

if [ -e /dev/kvm ]; then
	why="this /dev/kvm emulates guest kernel code (software KVM), too slow to boot Linux"
else
	why="there is no /dev/kvm"
fi
echo "make run: $why: using the nested testbed (QEMU/TCG L0 -> L1 with kvm-amd -> skiff -> L2); Ctrl-A x quits"

work=$(mktemp -d "$TB_CACHE/run.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/l1/l2"
tb_stage_skiff "$work/l1"
install -m 755 "$TB_DIR/guest/l1-interactive.sh" "$work/l1/scenario-l1.sh"
# L2 base alone: no /scenario-l2.sh, so L2's /init starts a shell.
cp "$TB_L2_BASE" "$work/l1/l2/initrd.gz"
tb_concat_initrd "$work/l1.cpio" "$TB_L1_BASE" "$work/l1"

# Not exec: the trap cleans up the run's initrd after QEMU exits. L0's
# warnings about CPU features TCG lacks are harmless: filtered out.
"${TB_L0_CMD[@]}" -kernel "$KERNEL" -initrd "$work/l1.cpio" -append "$TB_L0_APPEND" \
	2> >(grep -v "TCG doesn't support requested feature" >&2)
