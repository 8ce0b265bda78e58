#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `make check-layers`: every #include "dir/..." in src/ must follow the
# layers cli -> api -> vmm -> devices -> virtio/pci -> core, with x86/ reached
# from vmm and cli only (core through core/arch.h, which x86 implements;
# pci through the platform's address map, x86/layout.h). One line per
# forbidden edge; exit 1 if there is any. Then tests/: a kind's private
# header only in that kind's own tests (below). An argument is another
# tree to check (tests/check-layers-test.sh).
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

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
# Its row (a *_kind.c of the folder, listed by vmm/devmgr_kinds.c) fills
# in a struct dm_kind from devices/dev_kind.h: no device file includes vmm.
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
	may=${allowed[$dir]}
	while IFS= read -r inc; do
		edges=$((edges + 1))
		target=${inc%%/*}
		ok=0
		for a in $may; do
			if [ "$a" = "$target" ] || [ "$a" = "$inc" ]; then ok=1; fi
		done
		if [ "$ok" = 0 ]; then
			echo "check-layers: $file includes \"$inc\": $dir/ may include only: $may"
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

# A kind's own tests may include its *_priv.h; no other test may. A test
# is the kind's when its name, past test_ or fuzz_ (and review_), is the
# folder's name or starts with it and "_": virtio-net's are virtio_net*
# and, without "virtio-", net* (test_net_poll.c, fuzz_virtio_net.c,
# e1000_fx.h). Tests of a layer under the kinds that drive real devices
# through it are listed here with the kinds they may reach.
declare -A shared_tests=(
	[tests/fuzz/fuzz_virtio_pci.c]="devices/virtio-net" # the transport, virtio-net behind it
	[tests/fuzz/fuzz_snap.c]="devices/virtio-balloon devices/virtio-net" # a state file: their sections
)
test_of_kind() { # FILE KIND-FOLDER: 0 if FILE is one of the kind's tests
	local name folder=${2#devices/} a
	name=$(basename "$1")
	name=${name%.*}
	name=${name#test_}
	name=${name#fuzz_}
	name=${name#review_}
	for a in "${folder//-/_}" "$(printf %s "${folder#virtio-}" | tr - _)"; do
		if [ "$name" = "$a" ] || [ "${name#"${a}"_}" != "$name" ]; then return 0; fi
	done
	case " ${shared_tests[$1]:-} " in *" $2 "*) return 0 ;; esac
	return 1
}
while IFS= read -r file; do
	while IFS= read -r inc; do
		edges=$((edges + 1))
		owner=${inc%/*}
		if ! test_of_kind "$file" "$owner"; then
			echo "check-layers: $file includes \"$inc\": a kind's private header is for src/$owner/ and its own tests only"
			bad=1
		fi
	done < <(sed -n 's/^#include "\(devices\/[^"]*\/[^"]*_priv\.h\)".*/\1/p' "$file")
done < <(find tests -name '*.[ch]' | sort)
# src/api names no kind (docs/ARCHITECTURE.md): no string of a kind's row
# (its option, name prefix, API route or section; the rows are the
# folders' *_kind.c, the resources their *_api.c) in its code, comments
# aside.
if [ -d src/api ] && [ -d src/devices ]; then
	code=$(mktemp)
	for f in $(find src/api -name '*.[ch]' | sort); do
		sed 's|/\*.*||; s|^[[:space:]]*\*.*||; s|^|'"$f"': |' "$f"
	done >"$code"
	mapfile -t rows < <(find src/devices -name '*_kind.c' -o -name '*_api.c')
	mapfile -t names < <(grep -ohE '\.(option|prefix|route|section) = "[^"]*"' "${rows[@]}" |
		sed 's/.*= "//; s/"$//' | sort -u)
	for name in "${names[@]}"; do
		if hits=$(grep -F -e "\"$name\"" -e "\"$name/" "$code"); then
			echo "check-layers: src/api names the kind of \"$name\": $hits"
			bad=1
		fi
	done
	rm -f "$code"
fi
echo "check-layers: $edges include edges checked"
exit "$bad"
