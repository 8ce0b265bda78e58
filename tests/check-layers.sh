#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `make check-layers`: every #include "dir/..." in src/ must follow the
# layers cli -> api -> vmm -> devices -> virtio/pci -> core, with x86/ reached
# from vmm and cli only (core through core/arch.h, which x86 implements;
# pci through the platform's address map, x86/layout.h). One line per
# forbidden edge; exit 1 if there is any.
set -euo pipefail
cd "$(dirname "$0")/.."

# What each directory of src/ may include: directories, or single headers.
declare -A allowed=(
	[core]="core"
	[x86]="core x86"
	[iothread]="core iothread"
	[pci]="core pci x86/layout.h"
	[virtio]="core iothread pci virtio"
	[net]="core virtio net"
	[devices]="core iothread net pci virtio devices"
	[devices/vfio]="core pci devices x86/layout.h"
	[stats]="core iothread stats"
	[vmm]="core x86 iothread pci virtio net devices stats vmm"
	[api]="core stats vmm api"
	[cli]="core x86 iothread pci virtio net devices stats vmm api cli"
	[jailer]="jailer"
	[.]="cli core"
)

# A device kind is a folder of src/devices/ (docs/ARCHITECTURE.md); its
# *_priv.h headers are its own: no file outside the folder includes them.
bad=0 edges=0
while IFS= read -r file; do
	rel=${file#src/}
	dir=${rel%%/*}
	[ "$dir" != "$rel" ] || dir=.
	kind=""
	if [ "$dir" = devices ]; then
		sub=${rel#devices/}
		[ "$sub" = "${sub%%/*}" ] || kind=devices/${sub%%/*}
		[ -z "$kind" ] || [ -z "${allowed[$kind]+x}" ] || dir=$kind
	fi
	if [ -z "${allowed[$dir]+x}" ]; then
		echo "check-layers: $file: directory src/$dir has no row in tests/check-layers.sh"
		bad=1
		continue
	fi
	while IFS= read -r inc; do
		edges=$((edges + 1))
		target=${inc%%/*}
		ok=0
		for a in ${allowed[$dir]}; do
			if [ "$a" = "$target" ] || [ "$a" = "$inc" ]; then ok=1; fi
		done
		if [ "$ok" = 0 ]; then
			echo "check-layers: $file includes \"$inc\": $dir/ may include only: ${allowed[$dir]}"
			bad=1
		fi
		case $inc in
		devices/*/*_priv.h)
			owner=${inc%/*}
			if [ "$owner" != "${kind:-none}" ]; then
				echo "check-layers: $file includes \"$inc\": a kind's private header is for src/$owner/ only"
				bad=1
			fi
			;;
		esac
	done < <(sed -n 's/^#include "\([^"]*\/[^"]*\)".*/\1/p' "$file")
done < <(find src -name '*.[ch]' | sort)
echo "check-layers: $edges include edges checked"
exit "$bad"
