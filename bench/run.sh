#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# shellcheck source-path=SCRIPTDIR
# The benchmark suite: configurations x workloads in the nested testbed,
# interleaved, with statistics against a baseline. See docs/bench/METHODS.md.
#
#   bench/run.sh [--quick] [--configs a,b] [--workloads x,y] [--reps N]
#                [--secs S] [--seed N] [--baseline CONFIG] [--out DIR]
#                [--list] [--no-plots]
#
# One round = one L0+L1 boot running every configuration once, in an order
# from a seeded, randomised Williams square (every configuration in every
# position, and after every other, equally often per block of rounds),
# each VM configuration with one L2 boot that serves every workload. Each
# run's window is checked for other users of the host; a contaminated run
# is recorded, not counted, and run again in an extra round (at most
# MAKEUP_MAX extra rounds, shared with rounds that died). The
# configurations and workloads are defined in bench/bench-round.sh (one
# line per configuration).
# Output: DIR/results.json (every sample), DIR/report.md (full table with
# verdicts), DIR/summary.md (headline table), DIR/headline.png and
# DIR/<workload>.png (gnuplot), the raw
# tool outputs under DIR/raw/ and each round's console under DIR/logs/.
# Default DIR: .cache/bench/<date>-<time>/ (and .cache/bench/latest).
# BENCH_TRACE=W1,W2 in the environment traces L1 around those workloads'
# windows (bench/bench-trace.sh: a diagnosis, not a measurement).
set -euo pipefail
BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../tests/testbed/lib.sh
. "$BENCH/../tests/testbed/lib.sh"
SCENARIO=bench-round
SCENARIO_FILE=$(tb_scenario_file "$SCENARIO")
ROUNDS=$BENCH/skiffbench/rounds.py
export PYTHONDONTWRITEBYTECODE=1
# tb_l0_watch only says when L0 left an L1 CPU halted: the stall watchdog
# stops the round and redoes its runs.
export TB_L1_STOP=0

usage() {
	sed -n '/^#   bench/,/^#   *\[--list/p' "${BASH_SOURCE[0]}" | sed 's/^# //'
	cat <<EOF

  --quick          the short suite: $QUICK_DESC
  --configs a,b    configurations (default: all; --list shows them)
  --workloads x,y  workloads (default: the default set; --list shows those run only when named)
  --reps N         rounds, i.e. runs per configuration and workload (default 5;
                   a multiple of the number of configurations, doubled when
                   odd, balances positions exactly)
  --secs S         length of each stream / request-response run (default 3)
  --seed N         seed of the run order (default 1)
  --baseline C     configuration the others are compared with
                   (default qemu-vhost-off, else the first configuration)
  --out DIR        output directory
  --list           print the configurations and workloads, and exit
  --no-plots       no gnuplot images
EOF
}

# Defined by the scenario file: BENCH_CONFIGS (NAME KIND ARGS lines) and
# BENCH_WORKLOADS.
scenario_var() {
	(
		# shellcheck disable=SC1090
		. "$SCENARIO_FILE"
		eval "printf '%s\n' \"\$$1\""
	)
}
ALL_CONFIGS=$(scenario_var BENCH_CONFIGS | awk 'NF { print $1 }' | paste -sd, -)
# Known but not run unless named: BENCH_EXTRA_CONFIGS (the poll-idle sweep).
KNOWN_CONFIGS=$( (scenario_var BENCH_CONFIGS; scenario_var BENCH_EXTRA_CONFIGS) |
	awk 'NF { print $1 }' | paste -sd, -)
NATIVE_CONFIGS=$( (scenario_var BENCH_CONFIGS; scenario_var BENCH_EXTRA_CONFIGS) |
	awk '$2 == "native" { print $1 }' | paste -sd, -)
QEMU_CONFIGS=$( (scenario_var BENCH_CONFIGS; scenario_var BENCH_EXTRA_CONFIGS) |
	awk '$2 == "qemu" { print $1 }' | paste -sd, -)
KVMTOOL_CONFIGS=$( (scenario_var BENCH_CONFIGS; scenario_var BENCH_EXTRA_CONFIGS) |
	awk '$2 == "kvmtool" { print $1 }' | paste -sd, -)
FENCED_CONFIGS=$( (scenario_var BENCH_CONFIGS; scenario_var BENCH_EXTRA_CONFIGS) |
	awk '$2 == "skiff" && $3 == "bin=skiff-dma-fenced" { print $1 }' | paste -sd, -)
# skiff-base: skiff as built from the commit BENCH_BASE names, for a
# before/after in one run (the same L1 boots, the same rounds).
BASE_CONFIGS=$( (scenario_var BENCH_CONFIGS; scenario_var BENCH_EXTRA_CONFIGS) |
	awk '$2 == "skiff" && $3 == "bin=skiff-base" { print $1 }' | paste -sd, -)
ALL_WORKLOADS=$(scenario_var BENCH_WORKLOADS | tr ' ' '\n' | awk 'NF' | paste -sd, -)
# The configurations with a test disk, the only ones that run blk-*
# workloads: the scenario's own rule (bench_disk_configs), so L1 and the
# host agree.
DISK_CONFIGS=$( (
	# shellcheck disable=SC1090
	. "$SCENARIO_FILE"
	bench_disk_configs
) | paste -sd, -)
# The configurations with a vsock, the only ones that run vsock-*
# workloads (bench_vsock_configs), likewise.
VSOCK_CONFIGS=$( (
	# shellcheck disable=SC1090
	. "$SCENARIO_FILE"
	bench_vsock_configs
) | paste -sd, -)
# The configurations that run only the blk-* workloads (the word
# blk-only: bench_blk_only_configs), likewise.
BLKONLY_CONFIGS=$( (
	# shellcheck disable=SC1090
	. "$SCENARIO_FILE"
	bench_blk_only_configs
) | paste -sd, -)
# The passthrough configurations (issue 11): a plan with one boots L0 with
# the scenario's e1000e, IOMMU and hub, and L1 with vfio (bench_pt_configs).
PT_CONFIGS=$( (
	# shellcheck disable=SC1090
	. "$SCENARIO_FILE"
	bench_pt_configs
) | paste -sd, -)
# The NVMe passthrough configurations (issue 37.4): L0 gets the NVMe and
# an IOMMU, L1 vfio, L2 the nvme driver; only they run nvme-* workloads
# (bench_nvme_configs), likewise.
NVME_CONFIGS=$( (
	# shellcheck disable=SC1090
	. "$SCENARIO_FILE"
	bench_nvme_configs
) | paste -sd, -)
# Known but run only when named (--workloads), and those native
# configurations skip (no VM: no boot, no idle VMM).
KNOWN_WORKLOADS=$ALL_WORKLOADS,$(scenario_var BENCH_EXTRA_WORKLOADS | tr ' ' '\n' | awk 'NF' | paste -sd, -)
VM_ONLY_WORKLOADS=$(scenario_var BENCH_VM_ONLY | tr ' ' ',')

# A run during which others used more than this share of the host's CPUs
# is contaminated (bench/skiffbench/hostload.py).
CONTAM_PCT=${BENCH_CONTAM_PCT:-10}
QUICK_CONFIGS=skiff-ioeventfd,skiff-unpack-guest,qemu-vhost-off,qemu-rtc-pvh
QUICK_REPS=4 QUICK_SECS=2
QUICK_DESC="$QUICK_CONFIGS, all workloads, $QUICK_REPS rounds, ${QUICK_SECS} s runs"
configs='' workloads='' reps='' secs='' seed=1
baseline='' out='' plots=1 quick=0 command="bench/run.sh $*"
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) quick=1 ;;
	--configs | --workloads | --reps | --secs | --seed | --baseline | --out)
		[ $# -ge 2 ] || tb_die "$1 needs a value"
		v=$2
		case "$1" in
		--configs) configs=$v ;;
		--workloads) workloads=$v ;;
		--reps) reps=$v ;;
		--secs) secs=$v ;;
		--seed) seed=$v ;;
		--baseline) baseline=$v ;;
		--out) out=$v ;;
		esac
		shift
		;;
	--no-plots) plots=0 ;;
	--list)
		echo "configurations (bench/$SCENARIO.sh):"
		scenario_var BENCH_CONFIGS | awk 'NF { n = $1; $1 = ""; printf "  %-20s%s\n", n, $0 }'
		echo "run only when named (--configs):"
		scenario_var BENCH_EXTRA_CONFIGS | awk 'NF { n = $1; $1 = ""; printf "  %-20s%s\n", n, $0 }'
		echo "workloads: $ALL_WORKLOADS"
		echo "workloads run only when named (--workloads): ${KNOWN_WORKLOADS#"$ALL_WORKLOADS",}"
		exit 0
		;;
	-h | --help)
		usage
		exit 0
		;;
	*) tb_die "unknown option $1 (see --help)" ;;
	esac
	shift
done
# --quick changes the defaults; explicit options still win.
if [ "$quick" = 1 ]; then
	: "${configs:=$QUICK_CONFIGS}" "${reps:=$QUICK_REPS}" "${secs:=$QUICK_SECS}"
fi
: "${configs:=$ALL_CONFIGS}" "${workloads:=$ALL_WORKLOADS}" "${reps:=5}" "${secs:=3}"

in_list() { case ",$2," in *",$1,"*) return 0 ;; esac; return 1; }
for c in ${configs//,/ }; do
	in_list "$c" "$KNOWN_CONFIGS" || tb_die "no configuration $c (have: $KNOWN_CONFIGS)"
done
# kvmtool is a peer where it was built (bench/build-kvmtool.sh): without
# it, its configurations are left out, said in one line.
if [ ! -x "$TB_KVMTOOL" ]; then
	kept='' dropped=''
	for c in ${configs//,/ }; do
		if in_list "$c" "$KVMTOOL_CONFIGS"; then dropped=$dropped${dropped:+,}$c; else kept=$kept${kept:+,}$c; fi
	done
	[ -z "$dropped" ] || tb_say "kvmtool not built ($TB_KVMTOOL; bench/build-kvmtool.sh SRC builds it): skipping $dropped"
	[ -n "$kept" ] || tb_die "no configuration left to run"
	configs=$kept
fi
for w in ${workloads//,/ }; do
	in_list "$w" "$KNOWN_WORKLOADS" || tb_die "no workload $w (have: $KNOWN_WORKLOADS)"
done
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || tb_die "--reps must be a positive number"
[[ "$secs" =~ ^[1-9][0-9]*$ ]] || tb_die "--secs must be a positive number"
[[ "$seed" =~ ^[0-9]+$ ]] || tb_die "--seed must be a number"
if [ -z "$baseline" ]; then
	baseline=qemu-vhost-off
	in_list "$baseline" "$configs" || baseline=${configs%%,*}
fi
in_list "$baseline" "$configs" || tb_die "baseline $baseline is not among --configs"

[ -x "$TB_SKIFF" ] || tb_say "warning: no $TB_SKIFF; skiff configurations will fail"
stamp=$(date +%Y%m%d-%H%M%S)
if [ -z "$out" ]; then
	out=$TB_ROOT/.cache/bench/$stamp
	mkdir -p "$out"
	ln -sfn "$stamp" "$TB_ROOT/.cache/bench/latest"
fi
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)
results=$out/results.json
[ ! -e "$results" ] || tb_die "$results exists: pick another --out"

# ---- the L1 initrd, built once for every round ----

# bench_build_initrd OUT: L1 base + overlay (skiff, QEMU, the scenario, the
# veth module) with an L2 initrd = L2 base + overlay (the scenario and
# sockperf with the libraries the L2 base lacks).
bench_build_initrd() {
	local initrd=$1 work m
	work=$(mktemp -d "$TB_CACHE/run.bench.XXXXXX")
	mkdir -p "$work/l1/testbed" "$work/l1/l2" "$work/l2/testbed"
	tb_stage_skiff "$work/l1" || true
	[ -z "$QEMU_SEL" ] || tb_pack_qemu "$work/l1"
	[ -z "$KVMTOOL_SEL" ] || tb_pack_kvmtool "$work/l1"
	# skiff-dma-fenced: the build whose relaxed DMA accessors fence too.
	if [ -n "$FENCED_SEL" ]; then
		make -C "$TB_ROOT" --no-print-directory dma-fenced >/dev/null ||
			tb_die "building skiff-dma-fenced failed"
		tb_copy_bin "$work/l1" "$TB_ROOT/build/dma-fenced/skiff" /usr/bin/skiff-dma-fenced
	fi
	# skiff-base: the tree of BENCH_BASE, built apart from this one.
	if [ -n "$BASE_SEL" ]; then
		local base
		base=$(mktemp -d "$TB_CACHE/base.XXXXXX")
		git -C "$TB_ROOT" archive "$BASE_REV" | tar -x -C "$base"
		make -C "$base" --no-print-directory -j"$(nproc)" build/skiff >"$base/build.log" 2>&1 ||
			{ tail -n 5 "$base/build.log" >&2; tb_die "building skiff-base at $BASE_REV failed"; }
		tb_copy_bin "$work/l1" "$base/build/skiff" /usr/bin/skiff-base
		# Its own kernel cache entry: a base with another hash of the
		# bzImage would otherwise decompress it in L1 on every boot.
		SKIFF_CACHE_DIR="$work/l1/root/.cache/skiff" "$base/build/skiff" unpack "$(tb_vmlinuz)" >/dev/null 2>&1 ||
			echo "testbed: skiff-base at $BASE_REV cannot unpack the kernel: it decompresses it in L1" >&2
		rm -rf "$base"
	fi
	cp "$SCENARIO_FILE" "$work/l1/testbed/scenario.sh"
	if [ -n "$SM_SEL" ]; then
		cp "$TB_ROOT/bench/bench-snapmig.sh" "$work/l1/testbed/"
		tb_copy_bin "$work/l1" /usr/bin/curl
		tb_drop_base_libs "$work/l1" "$TB_L1_BASE"
	fi
	# vsock and balloon (bench/bench-vsock.sh, in L1 and L2)
	[ -z "$VB_SEL" ] || bench_pack_vb "$work/l1" "$work/l2"
	[ -z "${BENCH_TRACE:-}" ] || cp "$TB_ROOT/bench/bench-trace.sh" "$work/l1/testbed/"
	# the cpu workload (bench/bench-cpu.sh, in L1 and L2)
	if [ -n "$CPU_SEL" ]; then
		cp "$TB_ROOT/bench/bench-cpu.sh" "$work/l1/testbed/"
		cp "$TB_ROOT/bench/bench-cpu.sh" "$work/l2/testbed/"
	fi
	if [ -n "$MB_SEL" ]; then
		cp "$TB_ROOT/bench/bench-migbusy.sh" "$work/l1/testbed/"
		cp "$TB_ROOT/bench/bench-migbusy.sh" "$work/l2/testbed/"
	fi
	tb_wrapper "$SCENARIO" l1 >"$work/l1/scenario-l1.sh"
	chmod 755 "$work/l1/scenario-l1.sh"
	if [ -n "$NATIVE_SEL" ]; then
		m=$(tb_module_closure veth | tail -n1)
		[ -n "$m" ] || tb_die "no veth module in $(tb_moddir)"
		mkdir -p "$work/l1/lib/modules/bench"
		case "$m" in
		*.xz) xz -dc "$m" >"$work/l1/lib/modules/bench/veth.ko" ;;
		*) cp "$m" "$work/l1/lib/modules/bench/veth.ko" ;;
		esac
	fi
	cp "$SCENARIO_FILE" "$work/l2/testbed/scenario.sh"
	tb_wrapper "$SCENARIO" l2 >"$work/l2/scenario-l2.sh"
	chmod 755 "$work/l2/scenario-l2.sh"
	tb_copy_bin "$work/l2" /usr/bin/sockperf
	# fio's disk: for the test disk's configurations and the NVMe's
	[ -z "$DISK_SEL$NVME_SEL" ] || bench_pack_blk "$work/l1" "$work/l2"
	# L2's nvme driver, loaded only where the NVMe is (bench_nvme_l2)
	# shellcheck disable=SC2046 # a list of names
	[ -z "$NVME_SEL" ] || bench_pack_l2_group "$work/l2" nvme $(scenario_var BENCH_NVME_L2_MODULES)
	# Modules the scenario's L2 needs beyond the base's (the e1000 driver;
	# for passthrough, the e1000e's), and L1's for passthrough (vfio) and
	# for vsock (AF_VSOCK and vhost_vsock, as the vhost-vsock scenario's).
	local l2mods l1mods=''
	l2mods=$(scenario_var L2_EXTRA_MODULES)
	if [ -n "$PT_SEL" ]; then
		l2mods="$l2mods e1000e"
		l1mods=$(scenario_var BENCH_PT_L1_MODULES)
	fi
	[ -z "$NVME_SEL" ] || l1mods="$l1mods $(scenario_var BENCH_NVME_L1_MODULES)"
	[ -z "$VSOCK_SEL" ] || l1mods="$l1mods $BENCH_VSOCK_L1_MODULES"
	if [ -n "$l1mods" ]; then
		# shellcheck disable=SC2086 # lists of names
		tb_add_modules "$work/l1" $TB_L1_MODULES $l1mods
		tb_drop_base_libs "$work/l1" "$TB_L1_BASE"
	fi
	tb_add_l2_extras "$work/l2" "" "$l2mods"
	# Libraries the L2 base already has stay out of the overlay.
	tb_drop_base_libs "$work/l2" "$TB_L2_BASE"
	tb_concat_initrd "$work/l1/l2/initrd.gz" "$TB_L2_BASE" "$work/l2"
	tb_concat_initrd "$initrd" "$TB_L1_BASE" "$work/l1"
	rm -rf "$work"
}

# bench_fio_image OUT: an ext2 image with fio, its loader (ld.so) and
# every library it links (lib/), for L2 to mount read-only. Debian's fio
# links librbd, glusterfs, ... directly, with BIND_NOW: all of them must
# load (86 MB), more than L2's 256 MiB should hold in its initramfs. ext2
# (mke2fs -d, no root needed, 0.2 s) rather than squashfs (27-33 MB, but
# 26-50 s to make here and decompressed at emulated speed in L2).
bench_fio_image() {
	local out=$1 root lib mb
	command -v fio >/dev/null || tb_die "no fio on this host (tests/install-deps.sh installs it)"
	root=$(mktemp -d "$TB_CACHE/run.fio.XXXXXX")
	mkdir -p "$root/lib"
	cp -L "$(command -v fio)" "$root/fio"
	cp -L /lib64/ld-linux-x86-64.so.2 "$root/ld.so"
	for lib in $(tb_libs_of "$(command -v fio)"); do cp -L "$lib" "$root/lib/"; done
	mb=$(($(du -sm "$root" | cut -f1) + 16))
	mke2fs -q -t ext2 -m 0 -E root_owner=0:0 -d "$root" "$out" "${mb}M" >/dev/null ||
		tb_die "mke2fs could not make fio's image"
	rm -rf "$root"
}

# bench_pack_blk L1DIR L2DIR: what the block configurations need: fio's
# image and the loop module (the test disk's device) in L1, and in L2 the
# ext4 modules (which mount ext2) at a path of their own, loaded only when
# a VM has fio's disk (bench_blk_l2), so other boots do not pay for them.
bench_pack_blk() {
	local l1=$1 l2=$2 m n
	mkdir -p "$l1/bench" "$l1/lib/modules/bench" "$l2/lib/modules/bench"
	bench_fio_image "$l1/bench/fio.img"
	bench_unxz_module "$(tb_module_closure loop | tail -n1)" "$l1/lib/modules/bench/loop.ko"
	: >"$l2/lib/modules/bench/order"
	for m in $(tb_module_closure crc32c_generic ext4); do
		n=${m##*/}
		n=${n%.xz}
		bench_unxz_module "$m" "$l2/lib/modules/bench/$n"
		echo "${n%.ko}" >>"$l2/lib/modules/bench/order"
	done
}

# The vsock and balloon parts (bench/bench-vsock.sh): L1's modules for
# AF_VSOCK and vhost-vsock, L2's for the guest's devices (each group apart,
# in its load order, without what the L2 base loads already).
BENCH_VSOCK_L1_MODULES="vsock vmw_vsock_virtio_transport_common vhost_vsock"
BENCH_VSOCK_L2_MODULES="vsock vmw_vsock_virtio_transport_common vmw_vsock_virtio_transport"
BENCH_BALLOON_L2_MODULES="virtio_balloon"

# bench_pack_vb L1DIR L2DIR: bench-vsock.sh in both, curl in L1 (skiff's
# API), and L2's module groups under lib/modules/bench-vsock and
# lib/modules/bench-balloon (bench_vb_l2 loads a group only when its device
# is there).
bench_pack_vb() {
	local l1=$1 l2=$2
	cp "$TB_ROOT/bench/bench-vsock.sh" "$l1/testbed/"
	cp "$TB_ROOT/bench/bench-vsock.sh" "$l2/testbed/"
	tb_copy_bin "$l1" /usr/bin/curl
	tb_drop_base_libs "$l1" "$TB_L1_BASE"
	# shellcheck disable=SC2086 # lists of names
	bench_pack_l2_group "$l2" vsock $BENCH_VSOCK_L2_MODULES
	# shellcheck disable=SC2086
	bench_pack_l2_group "$l2" balloon $BENCH_BALLOON_L2_MODULES
}

# bench_pack_l2_group L2DIR GROUP MODULES...: MODULES and their
# dependencies, less the base's, in L2DIR/lib/modules/bench-GROUP/ with
# their load order in its file "order".
bench_pack_l2_group() {
	local l2=$1 group=$2 m n base
	shift 2
	# shellcheck disable=SC2086 # a list of names
	base=" $(tb_module_closure $TB_L2_MODULES | tr '\n' ' ') "
	mkdir -p "$l2/lib/modules/bench-$group"
	: >"$l2/lib/modules/bench-$group/order"
	for m in $(tb_module_closure "$@"); do
		case "$base" in *" $m "*) continue ;; esac
		n=${m##*/}
		n=${n%.xz}
		bench_unxz_module "$m" "$l2/lib/modules/bench-$group/$n"
		echo "${n%.ko}" >>"$l2/lib/modules/bench-$group/order"
	done
}

# bench_unxz_module FILE OUT: a module, decompressed (busybox insmod).
bench_unxz_module() {
	[ -n "$1" ] || tb_die "a module the block configurations need is missing in $(tb_moddir)"
	case "$1" in
	*.xz) xz -dc "$1" >"$2" ;;
	*) cp "$1" "$2" ;;
	esac
}

# ---- rounds ----

L0_PID=
stop_l0() {
	local p
	[ -n "$L0_PID" ] || return 0
	# tb_boot_l0's child is timeout(1) (or flock while it waits): TERM
	# makes timeout stop QEMU.
	for p in $(ps -o pid= --ppid "$L0_PID" 2>/dev/null); do
		kill "$p" 2>/dev/null || true
	done
	wait "$L0_PID" 2>/dev/null || true
	L0_PID=
}
interrupted=0
on_signal() {
	interrupted=1
	echo
	tb_say "interrupted: stopping the current round, reporting what was measured"
	stop_l0
}
trap on_signal INT TERM
TB_L0_FILE_PATHS=''
trap 'stop_l0; rm -f "${INITRD:-}" $TB_L0_FILE_PATHS' EXIT

csv_inter() { # the items of $1 also in $2
	local x r=
	for x in ${1//,/ }; do in_list "$x" "$2" && r=$r${r:+,}$x; done
	echo "$r"
}
NATIVE_SEL=$(csv_inter "$configs" "$NATIVE_CONFIGS")
QEMU_SEL=$(csv_inter "$configs" "$QEMU_CONFIGS")
KVMTOOL_SEL=$(csv_inter "$configs" "$KVMTOOL_CONFIGS")
FENCED_SEL=$(csv_inter "$configs" "$FENCED_CONFIGS")
BASE_SEL=$(csv_inter "$configs" "$BASE_CONFIGS") BASE_REV=none
if [ -n "$BASE_SEL" ]; then
	[ -n "${BENCH_BASE:-}" ] || tb_die "$BASE_SEL: set BENCH_BASE to the commit to compare with"
	BASE_REV=$(git -C "$TB_ROOT" rev-parse --short=12 --verify -q "${BENCH_BASE}^{commit}") ||
		tb_die "BENCH_BASE=$BENCH_BASE: no such commit"
fi
DISK_SEL=$(csv_inter "$configs" "$DISK_CONFIGS")
VSOCK_SEL=$(csv_inter "$configs" "$VSOCK_CONFIGS")
BLKONLY_SEL=$(csv_inter "$configs" "$BLKONLY_CONFIGS")
PT_SEL=$(csv_inter "$configs" "$PT_CONFIGS")
# snap, migrate and migrate-busy (bench/bench-snapmig.sh, sourced by the
# round in L1; skiff's API by curl).
SM_SEL=$(csv_inter "$workloads" snap,migrate,migrate-busy)
# migrate-busy's load (bench/bench-migbusy.sh, in L1 and L2)
MB_SEL=$(csv_inter "$workloads" migrate-busy)
# vsock configurations or the balloon workload (bench/bench-vsock.sh)
VB_SEL=$VSOCK_SEL$(csv_inter "$workloads" balloon)
# the cpu workload (bench/bench-cpu.sh, in L1 and L2)
CPU_SEL=$(csv_inter "$workloads" cpu)
NVME_SEL=$(csv_inter "$configs" "$NVME_CONFIGS")
PT_L0_ARGS='' PT_L1_APPEND=''
if [ -n "$PT_SEL$NVME_SEL" ]; then
	# The e1000e's, the NVMe's or both, behind one IOMMU (bench_l0_args).
	PT_L0_ARGS=$(
		# shellcheck disable=SC1090
		. "$SCENARIO_FILE"
		bench_l0_args "$([ -z "$PT_SEL" ] && echo 0 || echo 1)" "$([ -z "$NVME_SEL" ] && echo 0 || echo 1)"
	)
	PT_L1_APPEND=$(scenario_var BENCH_PT_L1_APPEND)
fi

plan=$(python3 "$ROUNDS" plan --configs "$configs" --workloads "$workloads" \
	--reps "$reps" --seed "$seed" --native "$NATIVE_SEL" --disks "$DISK_SEL" \
	--vsocks "$VSOCK_SEL" --blk-only "$BLKONLY_SEL" --nvmes "$NVME_SEL")
total=$(awk -F'\t' '$1 == "total" { print $2 }' <<<"$plan")
design=$(awk -F'\t' '$1 == "balance" { print $2 }' <<<"$plan")

"$TB_DIR/build-images.sh"
# The NVMe's image in L0 (@nvb@ in the L0 arguments): made for this run,
# zero-filled, removed at exit. The results' meta keeps the placeholder:
# they name no path of this machine.
L0_ARGS=$PT_L0_ARGS
if [ -n "$NVME_SEL" ]; then
	nvme_mb=$(scenario_var BENCH_NVME_MB)
	tb_l0_files bench "nvb:${nvme_mb}M" "$PT_L0_ARGS"
	L0_ARGS=$TB_L0_ARGS
	dd if=/dev/zero of="${TB_L0_FILE_PATHS##* }" bs=1M count="$nvme_mb" conv=notrunc status=none ||
		tb_die "cannot fill the NVMe's image"
fi
INITRD=$(mktemp "$TB_CACHE/run.bench-initrd.XXXXXX")
tb_say "building the L1 image for the rounds"
bench_build_initrd "$INITRD"

machine="$(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1), $(uname -sr)"
skiff_rev=$(git -C "$TB_ROOT" describe --always --dirty 2>/dev/null || echo unknown)
python3 "$ROUNDS" init "$results" \
	--meta "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)" --meta "machine=$machine" \
	--meta "command=$command" --meta "reps=$reps" --meta "baseline=$baseline" \
	--meta "configs=$configs" --meta "workloads=$workloads" \
	--meta "secs_per_run=$secs" --meta "seed=$seed" --meta "skiff=$skiff_rev" --meta "skiff_base=$BASE_REV" \
	--meta "order=$design" --meta "contaminated_if=others use > ${CONTAM_PCT}% of the host's CPUs during a run" \
	--meta "qemu=$(qemu-system-x86_64 --version | head -n1)" \
	--meta "kvmtool=$(if [ -n "$KVMTOOL_SEL" ]; then cat "$TB_KVMTOOL.commit" 2>/dev/null || echo unknown; else echo none; fi)" \
	--meta "testbed=L0 QEMU/TCG -smp 2 -m 4G, L1 and L2 Linux $(tb_kernel_version), L2 1 vCPU 256 MiB" \
	--meta "l0_extra=$(tr -s "\t\n " "   " <<<"$PT_L0_ARGS")" --meta "l1_extra_append=$PT_L1_APPEND" --meta "trace=${BENCH_TRACE:-}"

# Bound of one round: L1's boot, then per configuration its L2 boot and
# exit, each workload's bound and the data transfer. L1 bounds each step
# itself; this only stops a round that hangs anyway, and so does the stall
# watchdog: no console output for STALL_S seconds (L1 prints a line at least
# every run; an L2 boot's wait for "ready" is bounded by 120 s in L1).
nw=$(tr ',' '\n' <<<"$workloads" | grep -vc '^boot$' || true)
per_cfg=$((120 + 60 + nw * (secs + 40) + 60))
STALL_S=${BENCH_STALL_S:-$((180 + secs))} # the variable: for testing the watchdog
# A round that dies (L1 hung, say) is made up at the end for the
# configurations it lost, and contaminated runs are redone, in at most
# MAKEUP_MAX extra rounds per suite.
MAKEUP_MAX=${BENCH_MAKEUP_MAX:-4}
tb_say "$total runs in $reps rounds: configs $configs; workloads $workloads; ${secs}s runs; baseline $baseline"
tb_say "output: $out"
t0=$(date +%s)
done_runs=0 active=0

# The host's own noise, as a witness: CPU seconds the whole machine was
# busy (and stolen by its hypervisor) during a round, against what this
# script's children (the round's L0, mostly) used. "others" is everyone
# else, e.g. builds of other engineers. Goes into the results' meta.
host_cpu() { # busy steal own, in clock ticks; run `times >FILE` first
	local t
	t=$(tail -n1 "$out/logs/.times")
	awk -v t="$t" '$1 == "cpu" {
		split(t, a, " "); own = 0
		for (i = 1; i <= 2; i++) {
			m = a[i]; sub(/s$/, "", m); split(m, b, "m")
			own += b[1] * 60 + b[2]
		}
		printf "%d %d %.0f\n", $2 + $3 + $4 + $7 + $8, $9, own * 100 }' /proc/stat
}
note_host_load() {
	local label=$1 before=$2 after
	times >"$out/logs/.times"
	after=$(host_cpu)
	python3 "$ROUNDS" init "$results" --meta "host_cpu_round_$label=$(awk -v a="$after" -v b="$before" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		busy = (x[1] - y[1]) / 100; steal = (x[2] - y[2]) / 100; own = (x[3] - y[3]) / 100
		printf "busy %.0f s, bench (L0) %.0f s, others %.0f s, stolen %.0f s", busy, own, (busy > own ? busy - own : 0), steal }')"
}

# wait_quiet: before a round, wait (up to QUIET_MAX_S) until the machine
# is nearly idle: less than QUIET_PCT % of all CPUs busy over 5 s. The L0
# lock serializes this checkout's testbed runs, not other checkouts' (or
# builds), and a second L0 on 2 cores halves everything measured.
QUIET_MAX_S=${BENCH_QUIET_MAX_S:-900} QUIET_PCT=25
busy_pct() {
	local a b
	a=$(awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat)
	sleep 5
	b=$(awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat)
	awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " ")
		d = y[2] - x[2]; printf "%d\n", (d > 0 ? 100 * (y[1] - x[1]) / d : 0) }'
}
wait_quiet() {
	local waited=0 pct
	[ "$QUIET_MAX_S" -gt 0 ] || return 0
	while pct=$(busy_pct) && [ "$pct" -ge "$QUIET_PCT" ]; do
		[ "$interrupted" = 0 ] || return 0
		if [ "$waited" -ge "$QUIET_MAX_S" ]; then
			tb_say "the machine is still ${pct}% busy after ${waited}s: running anyway (see host_cpu_round_* in the report)"
			return 0
		fi
		[ "$waited" -gt 0 ] || tb_say "waiting for the machine to quiet down (${pct}% busy: $(ps -eo pcpu=,comm= --sort=-pcpu | head -n 3 | awk '{ printf "%s%s %s%%", (NR > 1 ? ", " : ""), $2, $1 }'))"
		sleep 10
		waited=$((waited + 15))
	done
}

# run_round REP ORDER NRUNS LABEL [KEEP MAKEUP]: one L0+L1 boot running
# the configurations of ORDER; ingests its data (only the runs KEEP lists,
# "config/workload,...", when given; the MAKEUP-th extra round unpacks
# into raw/r<REP>-m<MAKEUP>/, not over round REP's files). Adds
# "REP ORDER KEEP" lines to makeups for the configurations that sent no
# data and for contaminated runs.
run_round() {
	local rep=$1 order=$2 nruns=$3 label=$4 n_cfg bound log rc=0 frc=0 stalled=() keep=()
	[ $# -lt 5 ] || keep=(--keep "$5" --makeup "$6")
	n_cfg=$(tr ',' '\n' <<<"$order" | grep -c .)
	bound=$((120 + n_cfg * per_cfg))
	log=$out/logs/round-$label.log
	: >"$log"
	wait_quiet
	tb_say "round $label: $order"
	python3 "$ROUNDS" init "$results" --meta "order_round_$label=$order"
	# shellcheck disable=SC2034 # read by tb_boot_l0
	TB_L0_APPEND="console=ttyS0 quiet panic=-1 bench_rep=$rep bench_configs=$order bench_workloads=$workloads bench_secs=$secs${BENCH_TRACE:+ bench_trace=$BENCH_TRACE}"
	times >"$out/logs/.times" # in this shell: its children's CPU so far
	host_before=$(host_cpu)
	tb_boot_l0 "$INITRD" "$log" "$bound" "$L0_ARGS" "$PT_L1_APPEND" &
	L0_PID=$!
	# In the background: a trapped signal interrupts `wait`, not a
	# foreground command.
	python3 "$ROUNDS" follow --log "$log" --pid "$L0_PID" --total "$total" \
		--done "$done_runs" --active-before "$active" --state "$out/logs/.active" \
		--stall "$STALL_S" --host-load "$out/logs/host-load.tsv" &
	wait $! || frc=$?
	if [ "$frc" = 3 ]; then
		stalled=(--stalled)
		# Not "$log.l0": tb_boot_l0's own dump, before its bound.
		tb_l0_dump >"$log.stall"
		stop_l0
		cat "$log.stall" >>"$log"
		rm -f "$log.stall"
	fi
	[ -z "$L0_PID" ] || wait "$L0_PID" || rc=$?
	L0_PID=
	note_host_load "$label" "$host_before"
	python3 "$ROUNDS" ingest --log "$log" --out "$out" --results "$results" \
		--rep "$rep" --configs "$order" --workloads "$workloads" \
		--native "$NATIVE_SEL" --disks "$DISK_SEL" --vsocks "$VSOCK_SEL" \
		--blk-only "$BLKONLY_SEL" --nvmes "$NVME_SEL" --l0-rc "$rc" \
		"${stalled[@]}" "${keep[@]}" \
		--lost "$out/logs/.lost" --redo "$out/logs/.redo" \
		--host-load "$out/logs/host-load.tsv" --contam-pct "$CONTAM_PCT" || true
	local lost redo c w
	lost=$(cat "$out/logs/.lost" 2>/dev/null || true)
	redo=$(cat "$out/logs/.redo" 2>/dev/null || true)
	rm -f "$out/logs/.lost" "$out/logs/.redo"
	# A lost configuration is rerun whole (the runs this round was to keep).
	if [ -n "$lost" ]; then
		local k=''
		for c in ${lost//,/ }; do
			for w in ${workloads//,/ }; do
				[ $# -lt 5 ] || in_list "$c/$w" "$5" || continue
				k=$k${k:+,}$c/$w
			done
		done
		makeups+=("$rep $lost $k")
	fi
	if [ -n "$redo" ]; then
		local cfgs=''
		for c in ${redo//,/ }; do
			in_list "${c%%/*}" "$cfgs" || cfgs=$cfgs${cfgs:+,}${c%%/*}
		done
		makeups+=("$rep $cfgs $redo")
	fi
	done_runs=$((done_runs + nruns))
	active=$(awk -v a="$active" '{ printf "%.1f", a + $1 }' "$out/logs/.active" 2>/dev/null || echo "$active")
}

# runs_not_applying CONFIG: how many of the workloads CONFIG skips
# (blk-* without a test disk, nvme-* without the NVMe, vsock-* without a
# vsock, all but blk-* for a blk-only one).
runs_not_applying() {
	local w k=0
	for w in ${workloads//,/ }; do
		if in_list "$1" "$BLKONLY_SEL"; then
			case "$w" in blk-*) ;; *) k=$((k + 1)) ;; esac
			continue
		fi
		case "$w" in
		blk-*) in_list "$1" "$DISK_SEL" || k=$((k + 1)) ;;
		nvme-*) in_list "$1" "$NVME_SEL" || k=$((k + 1)) ;;
		vsock-*) in_list "$1" "$VSOCK_SEL" || k=$((k + 1)) ;;
		esac
	done
	echo "$k"
}

makeups=()
while IFS=$'\t' read -r kind rep order nruns <&3; do
	[ "$kind" = round ] || continue
	[ "$interrupted" = 0 ] || break
	run_round "$rep" "$order" "$nruns" "$rep"
done 3<<<"$plan"

n_makeup=0
while [ "${#makeups[@]}" -gt 0 ] && [ "$interrupted" = 0 ] && [ "$n_makeup" -lt "$MAKEUP_MAX" ]; do
	read -r rep order keep <<<"${makeups[0]}"
	makeups=("${makeups[@]:1}")
	n_makeup=$((n_makeup + 1))
	nruns=0
	for c in ${order//,/ }; do
		for w in ${workloads//,/ }; do
			in_list "$c" "$NATIVE_SEL" && in_list "$w" "$VM_ONLY_WORKLOADS" && continue
			nruns=$((nruns + 1))
		done
		nruns=$((nruns - $(runs_not_applying "$c")))
	done
	total=$((total + nruns))
	tb_say "extra round for rep $rep: $order (redoing $keep)"
	run_round "$rep" "$order" "$nruns" "$rep-makeup$n_makeup" "$keep" "$n_makeup"
done
[ "${#makeups[@]}" = 0 ] || tb_say "not redone (limit $MAKEUP_MAX extra rounds): ${makeups[*]}"
tb_say "done in $(($(date +%s) - t0))s, of which ${active%.*}s in rounds (the rest: waiting for other testbed users)"
report_args=(--out "$out" --baseline "$baseline")
[ "$plots" = 1 ] || report_args+=(--no-plots)
python3 "$BENCH/report.py" "$results" "${report_args[@]}"
summary_args=(--baseline "$baseline" --out "$out/summary.md")
[ "$plots" = 0 ] || summary_args+=(--plot "$out")
python3 "$BENCH/skiffbench/summary.py" "$results" "${summary_args[@]}" || true
cat "$out/summary.md" 2>/dev/null || true
echo "full report: $out/report.md"
[ "$interrupted" = 0 ] || exit 130
