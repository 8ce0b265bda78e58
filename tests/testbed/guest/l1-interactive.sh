#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# shellcheck disable=SC1091 # /testbed/lib.sh exists in the guest only
# L1's part of `make run` on a host without hardware KVM: skiff boots L2
# with its console on L1's console (so on your terminal); L2's /init gives
# a shell. Afterwards an L1 shell, for looking around; its exit powers off.
. /testbed/lib.sh
echo "SKIFF-L1: starting skiff (L2 shell follows; 'poweroff -f' in L2 ends it)"
# cttyhack: skiff gets the console as its controlling terminal.
setsid cttyhack skiff run --kernel "$L2_KERNEL" --initrd "$L2_INITRD" \
	--cmdline "$L2_CMDLINE" --mem "$L2_MEM"
echo "SKIFF-L1: skiff exited $?; L1 shell follows ('exit' powers off)"
setsid cttyhack sh -l
