#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `make check-layers` checks its checker: tests/check-layers.sh over a
# small tree made here, with deliberate violations, must name each of them
# and only them, and fail; the same tree without them must pass.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

put() { # FILE [INCLUDE...]: a file including each header
	mkdir -p "$tmp/$(dirname "$1")"
	local f=$1
	shift
	: >"$tmp/$f"
	for inc in "$@"; do echo "#include \"$inc\"" >>"$tmp/$f"; done
}
net=devices/virtio-net/virtio_net_priv.h
balloon=devices/virtio-balloon/virtio_balloon_priv.h
rng=devices/virtio-rng/virtio_rng_priv.h
put src/$net
put src/$balloon
put src/$rng
put src/devices/virtio-net/virtio_net.c $net
# A kind's own tests: by its folder's name, or without "virtio-".
put tests/unit/test_virtio_net.c $net
put tests/unit/test_net_poll.c $net
put tests/unit/test_review_net.c $net
put tests/fuzz/fuzz_virtio_net.c $net
put tests/unit/net_fx.h $net
put tests/unit/test_balloon_snap.c $balloon
# A shared layer's test, with the kind check-layers.sh lists for it.
put tests/fuzz/fuzz_snap.c $balloon

# A kind's row, in its folder, from devices/dev_kind.h. src/api may name
# a kind in a comment only.
row=src/devices/virtio-blk/virtio_blk_kind.c
put $row devices/dev_kind.h
echo '    .option = "disk", .prefix = "virtio-blk",' >>"$tmp/$row"
put src/devices/virtio-blk/virtio_blk_api.c
echo '    .route = "/drives",' >"$tmp/src/devices/virtio-blk/virtio_blk_api.c"
put src/api/api_a.c
printf '%s\n' '/* the "disk" and "/drives/ID" of the rows */' ' * "virtio-blk0"' >"$tmp/src/api/api_a.c"

out=$("$here/check-layers.sh" "$tmp" 2>&1) || {
	echo "check-layers-test: a clean tree failed: $out"
	exit 1
}

# The violations: another kind's test, a name that only begins like the
# kind's, a shared test reaching a kind it does not list, and src/; vmm
# from a device file, a row's included.
put tests/unit/test_virtio_balloon.c $net
put tests/unit/test_network.c $net
put tests/fuzz/fuzz_snap.c $balloon $rng
put src/devices/virtio-balloon/virtio_balloon.c $net vmm/devmgr.h
put src/devices/virtio-rng/virtio_rng_kind.c vmm/devmgr.h
printf '%s\n' 'int n = strcmp(o, "disk"); /* a kind */' 'const char *r = "/drives/x";' >>"$tmp/src/api/api_a.c"
if out=$("$here/check-layers.sh" "$tmp" 2>&1); then
	echo "check-layers-test: violations passed"
	exit 1
fi
want=(
	"tests/unit/test_virtio_balloon.c includes \"$net\""
	"tests/unit/test_network.c includes \"$net\""
	"tests/fuzz/fuzz_snap.c includes \"$rng\""
	"src/devices/virtio-balloon/virtio_balloon.c includes \"$net\""
)
for w in "${want[@]}"; do
	grep -qF "check-layers: $w" <<<"$out" || {
		echo "check-layers-test: no line for $w in: $out"
		exit 1
	}
done
n=$(grep -c "private header" <<<"$out")
[ "$n" = "${#want[@]}" ] || {
	echo "check-layers-test: $n lines, not ${#want[@]}: $out"
	exit 1
}
layer=(
	"src/devices/virtio-balloon/virtio_balloon.c includes \"vmm/devmgr.h\""
	"src/devices/virtio-rng/virtio_rng_kind.c includes \"vmm/devmgr.h\""
)
for w in "${layer[@]}"; do
	grep -qF "check-layers: $w" <<<"$out" || {
		echo "check-layers-test: no line for $w in: $out"
		exit 1
	}
done
[ "$(grep -c "may include only" <<<"$out")" = "${#layer[@]}" ] || {
	echo "check-layers-test: not one line per layer violation: $out"
	exit 1
}
for w in 'names the kind of "disk": src/api/api_a.c: int n = strcmp(o, "disk");' \
	'names the kind of "/drives": src/api/api_a.c: const char *r = "/drives/x";'; do
	grep -qF "$w" <<<"$out" || {
		echo "check-layers-test: no line for $w in: $out"
		exit 1
	}
done
[ "$(grep -c "names the kind" <<<"$out")" = 2 ] || {
	echo "check-layers-test: a kind named in a comment counted: $out"
	exit 1
}
echo "check-layers-test: $((${#want[@]} + ${#layer[@]} + 2)) violations found, a clean tree passes"
