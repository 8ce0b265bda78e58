# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Variables here are used by the scripts that source this file; the commas
# in TB_L0_CMD are QEMU's.
# shellcheck disable=SC2034,SC2054
# Shared host-side functions of the nested testbed. Source it; do not run it.
#
# Why nested: this machine's /dev/kvm is a software KVM that cannot run guest
# kernel code at usable speed. So L0 is QEMU/TCG emulating an AMD CPU with SVM,
# L1 is a Debian kernel + busybox initramfs that loads kvm-amd, and skiff runs
# in L1 to boot the L2 guest. See tests/testbed/README.md.

TB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TB_ROOT=$(cd "$TB_DIR/../.." && pwd)
TB_CACHE=${TB_CACHE:-$TB_ROOT/.cache/testbed}
TB_KCACHE=${TB_KCACHE:-$TB_ROOT/.cache/kernel}
TB_LOGS=$TB_CACHE/logs
TB_L1_BASE=$TB_CACHE/l1-base.cpio.gz
TB_L2_BASE=$TB_CACHE/l2-base.cpio.gz
TB_SKIFF=${SKIFF:-$TB_ROOT/build/skiff}

# Modules each level loads, in any order: tb_module_closure orders them by
# their dependencies. Networking ones in L1 serve tap/vhost-net backends.
TB_L1_MODULES="irqbypass ccp kvm kvm-amd tun tap vhost_iotlb vhost vhost_net"
TB_L2_MODULES="virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev
	virtio_pci failover net_failover virtio_net virtio_blk pvpanic pvpanic-mmio"

# L0: the outer QEMU with a software CPU that emulates AMD SVM, so L1 gets a
# working (hardware-like) kvm-amd. -nic none: nothing may leave the machine.
# TB_QEMU picks another QEMU binary for L0 (issue 39: QEMU 10 from
# bookworm-backports, tests/testbed/freeze-count.sh --qemu).
# TB_L0_ACCEL, TB_L0_CPU and TB_L0_SMP change L0's accelerator options, CPU
# model and CPU count: the levers of issue 39.3, each measured by
# freeze-count.sh (which records them beside the QEMU version).
TB_QEMU=${TB_QEMU:-qemu-system-x86_64}
TB_L0_ACCEL=${TB_L0_ACCEL:-tcg}
TB_L0_CPU=${TB_L0_CPU:-EPYC,+svm}
TB_L0_SMP=${TB_L0_SMP:-2}
TB_L0_CMD=("$TB_QEMU" -machine q35 -accel "$TB_L0_ACCEL" -cpu "$TB_L0_CPU"
	-smp "$TB_L0_SMP" -m 4G -nographic -no-reboot -nic none)
TB_L0_APPEND="console=ttyS0 quiet panic=-1"

tb_say() { echo "testbed: $*"; }
tb_die() {
	echo "testbed: error: $*" >&2
	exit 1
}

# The guest kernel fetched by tests/install-deps.sh (never the host's /boot).
tb_kernel_version() {
	local v
	v=$(find "$TB_KCACHE/boot" -maxdepth 1 -name 'vmlinuz-*' 2>/dev/null | sort | tail -n1)
	[ -n "$v" ] || tb_die "no guest kernel in $TB_KCACHE: run tests/install-deps.sh"
	echo "${v##*/vmlinuz-}"
}
tb_vmlinuz() { echo "$TB_KCACHE/boot/vmlinuz-$(tb_kernel_version)"; }
tb_moddir() { echo "$TB_KCACHE/lib/modules/$(tb_kernel_version)"; }

# Shared libraries a dynamic binary needs, as absolute paths (ldd's view),
# including the dynamic loader itself.
tb_libs_of() {
	ldd "$1" 2>/dev/null | awk '
		$2 == "=>" && $3 ~ /^\// { print $3 }
		$1 ~ /^\// { print $1 }' | sort -u
}

# Copy FILE into the staging tree DEST at path DESTPATH (default: same path),
# with its shared libraries at their own paths. cp -L: Debian's libraries and
# /lib64/ld-linux-x86-64.so.2 are symlinks, an initramfs needs real files.
tb_copy_bin() {
	local dest=$1 file=$2 at=${3:-$2} lib
	mkdir -p "$dest$(dirname "$at")"
	cp -L "$file" "$dest$at"
	for lib in $(tb_libs_of "$file"); do
		mkdir -p "$dest$(dirname "$lib")"
		cp -L "$lib" "$dest$lib"
	done
}

# busybox-static plus a symlink per applet, except the names in SKIP (a
# space-separated list) that a real tool from another package provides.
tb_add_busybox() {
	local dest=$1 skip=" ${2:-} " path name
	mkdir -p "$dest/bin"
	cp -L /bin/busybox "$dest/bin/busybox"
	while read -r path; do
		name=${path##*/}
		case "$skip" in *" $name "*) continue ;; esac
		[ "$path" = bin/busybox ] && continue
		mkdir -p "$dest/$(dirname "$path")"
		ln -sf /bin/busybox "$dest/$path"
	done < <(/bin/busybox --list-full)
}

# Print the module files for NAMES and all they depend on, dependencies
# first (busybox insmod does not resolve them). Modules that do not exist as
# files are built in: skipped. Names may use - or _ (kvm-amd = kvm_amd).
tb_module_closure() {
	local moddir f n
	moddir=$(tb_moddir)
	declare -A path=() seen=()
	while read -r f; do
		n=${f##*/}
		n=${n%.xz}
		n=${n%.ko}
		path[${n//-/_}]=$f
	done < <(find "$moddir/kernel" -name '*.ko' -o -name '*.ko.xz')
	_tb_visit() {
		local m=${1//-/_} d
		[ -n "${seen[$m]:-}" ] && return 0
		seen[$m]=1
		[ -n "${path[$m]:-}" ] || return 0 # built in
		for d in $(modinfo -F depends "${path[$m]}" | tr ',' ' '); do
			_tb_visit "$d"
		done
		echo "${path[$m]}"
	}
	for n in "$@"; do _tb_visit "$n"; done
}

# Put the modules (decompressed: busybox insmod may lack xz support) flat in
# DEST/lib/modules/testbed/ and their load order in DEST/etc/testbed-modules,
# which the guest's /init reads.
tb_add_modules() {
	local dest=$1 f n
	shift
	mkdir -p "$dest/lib/modules/testbed" "$dest/etc"
	: >"$dest/etc/testbed-modules"
	# shellcheck disable=SC2068 # the word splitting of the module list is wanted
	for f in $(tb_module_closure $@); do
		n=${f##*/}
		n=${n%.xz}
		case "$f" in
		*.xz) xz -dc "$f" >"$dest/lib/modules/testbed/$n" ;;
		*) cp "$f" "$dest/lib/modules/testbed/$n" ;;
		esac
		echo "${n%.ko}" >>"$dest/etc/testbed-modules"
	done
}

# Skeleton every initramfs needs. /dev/console must exist before /init runs
# or init has no stdin/stdout (devtmpfs is mounted only by /init itself);
# making the node needs root, so without root /init redirects to it later.
tb_add_skeleton() {
	local dest=$1
	mkdir -p "$dest"/{bin,sbin,etc,proc,sys,dev,tmp,root,run,usr/bin,usr/sbin,lib64}
	if [ "$(id -u)" -eq 0 ]; then
		mknod -m 600 "$dest/dev/console" c 5 1
		mknod -m 666 "$dest/dev/null" c 1 3
	fi
}

# Pack DIR as a newc cpio into OUT (gzip'd if GZIP=1), padded with zeros to a
# multiple of 4 bytes: Linux reads concatenated archives, but an uncompressed
# one is recognized only at a 4-byte aligned offset.
tb_mkcpio() {
	local dir=$1 out=$2 gz=${3:-0} size
	(
		cd "$dir" || exit 1
		find . -mindepth 1 | LC_ALL=C sort |
			cpio -o -H newc -R 0:0 --quiet |
			if [ "$gz" = 1 ]; then gzip -6 -n; else cat; fi
	) >"$out"
	size=$(stat -c %s "$out")
	if [ $((size % 4)) -ne 0 ]; then
		head -c $((4 - size % 4)) /dev/zero >>"$out"
	fi
}

# QEMU as a peer VMM inside L1 (for comparisons and for testing the testbed
# itself): the binary, its libraries, and the firmware microvm and the
# -kernel loader need. Firmware in /usr/share/qemu is partly symlinks into
# other packages: cp -L. Run it in L1 with -L /usr/share/qemu.
tb_pack_qemu() {
	local dest=$1 fw
	tb_copy_bin "$dest" /usr/bin/qemu-system-x86_64
	mkdir -p "$dest/usr/share/qemu"
	for fw in bios-microvm.bin qboot.rom bios-256k.bin linuxboot_dma.bin \
		linuxboot.bin pvh.bin kvmvapic.bin multiboot_dma.bin; do
		[ -e "/usr/share/qemu/$fw" ] && cp -L "/usr/share/qemu/$fw" "$dest/usr/share/qemu/"
	done
	# q35's and pc's SeaBIOS (the bench's qemu-vfio, vfio-multi-qemu):
	# Debian keeps it in seabios's own directory.
	fw=bios-256k.bin
	[ -e "$dest/usr/share/qemu/$fw" ] || [ ! -e "/usr/share/seabios/$fw" ] ||
		cp -L "/usr/share/seabios/$fw" "$dest/usr/share/qemu/"
}

# kvmtool as a peer VMM inside L1: lkvm-static, built from a pinned commit
# by bench/build-kvmtool.sh (never committed). Nothing when it is not built.
TB_KVMTOOL=${TB_KVMTOOL:-$TB_ROOT/.cache/kvmtool/lkvm-static}
tb_pack_kvmtool() {
	[ -x "$TB_KVMTOOL" ] || return 0
	mkdir -p "$1/usr/bin"
	cp "$TB_KVMTOOL" "$1/usr/bin/lkvm"
}

# Run L0 with INITRD, console output to LOG, killed after TIMEOUT seconds;
# EXTRA_ARGS (words) go on L0's command line after the base's, EXTRA_APPEND
# on L1's kernel command line. Prints nothing; returns qemu's (or
# timeout's: 124) exit status. One L0 at a time on this machine: the flock
# serializes concurrent runs of this tree; TB_L0_LOCK (a file) names the
# lock to share with other checkouts.
# With KILL_AFTER (an extended regex) and DELAY_MS: once a console line
# matches KILL_AFTER, wait a random 0..DELAY_MS ms, then SIGKILL QEMU, a
# power cut for L1 (its RAM, page cache included, is gone; what QEMU wrote
# to its disk files stays). Sets TB_L0_KILLED (1 if that kill happened) and
# TB_L0_KILL_MS (the delay drawn).
# tb_l0_dump: what L0's monitor says about L1, twice 2 s apart (registers
# that stay put: a stuck L1; RFLAGS 0x202 with HLT=1: idle, waiting for an
# interrupt, whose LAPIC timer state follows). For a silent L1 before it is
# killed; tests/testbed/README.md has how to read it.
tb_l0_dump() {
	local i c
	# Whether L0 still runs L1 at all: QEMU stops a VM whose disk write
	# failed (werror=enospc: the host's disk full) or that paused, and
	# then no L1 clock moves (the LAPIC counts below stay put).
	echo "=== testbed: L0 monitor: info status ==="
	python3 "$TB_DIR/l0-monitor.py" "info status" 2>&1
	for i in 1 2; do
		echo "=== testbed: L0 monitor, sample $i: info registers -a ==="
		python3 "$TB_DIR/l0-monitor.py" "info registers -a" 2>&1
		for c in 0 1; do
			echo "=== testbed: L0 monitor, sample $i: info lapic $c ==="
			python3 "$TB_DIR/l0-monitor.py" "info lapic $c" 2>&1
		done
		[ "$i" = 2 ] || sleep 2
	done
}

# tb_l0_watch LOG BOUND: beside a running L0, output to LOG.l0 (which
# tb_boot_l0 appends to LOG once L0 has exited). Whenever L1's console
# (LOG) has been quiet for TB_L1_CHECK_S (30) s, it samples L1's CPUs
# through L0's monitor; if one is halted over a deliverable interrupt in
# both samples (l1-stuck.py), L0's TCG has lost its wake-up for good
# (neither later interrupts nor an NMI wake it: tests/testbed/README.md),
# so it says so and ends L0 through its monitor rather than wait for the
# bound; with TB_L1_STOP=0 (the bench, whose stall watchdog redoes the
# round) it only says so. A healthy L1 never gives that verdict, so a
# quiet step costs a look and nothing else. The look comes after a quiet
# spell, not only a silent L1: one stuck CPU leaves the other printing
# (2026-12-07: L1's watchdog wrote on, L2's vCPU thread waited runnable on
# the stuck CPU until the bound). The dump goes in the log once L1 has
# been silent for TB_L1_SILENT_S (60) s, so a freeze ends L0 within 90 s
# of L1's last line (issue 39.4). 40 s before the bound, the last dump,
# judged the same way.
tb_l0_watch() {
	local log=$1 bound=$2 t0=$SECONDS quiet=$SECONDS looked=$SECONDS size last=-1 dump
	local silent=${TB_L1_SILENT_S:-60} check=${TB_L1_CHECK_S:-30}
	local final=$((bound > 80 ? bound - 40 : bound / 2))
	while [ $((SECONDS - t0)) -lt "$final" ]; do
		sleep 5
		size=$(stat -c %s "$log" 2>/dev/null || echo 0)
		if [ "$size" != "$last" ]; then
			last=$size quiet=$SECONDS looked=$SECONDS
			continue
		fi
		[ $((SECONDS - looked)) -ge "$check" ] || continue
		looked=$SECONDS
		dump=$(tb_l0_dump)
		if tb_l1_stuck_say "$dump" "quiet for $((SECONDS - quiet)) s, at $((SECONDS - t0)) s"; then
			[ "${TB_L1_STOP:-1}" = 0 ] || { python3 "$TB_DIR/l0-monitor.py" quit >/dev/null 2>&1; return; }
		elif [ $((SECONDS - quiet)) -ge "$silent" ]; then
			quiet=$SECONDS
			printf '%s\n' "=== testbed: L1 silent for $silent s, at $((SECONDS - t0)) s ===" "$dump"
		fi
	done >>"$log.l0"
	dump=$(tb_l0_dump)
	tb_l1_stuck_say "$dump" "the last dump, at $((SECONDS - t0)) s" >>"$log.l0" || echo "$dump" >>"$log.l0"
}

# tb_l1_stuck_say DUMP WHEN: if l1-stuck.py finds a stuck CPU in DUMP,
# prints DUMP and the "testbed: L1 stuck" line classify-failure.py knows.
tb_l1_stuck_say() {
	local stuck
	stuck=$(python3 "$TB_DIR/l1-stuck.py" <<<"$1") || return 1
	printf '%s\n' "=== testbed: L1 looked at ($2) ===" "$1"
	echo "testbed: L1 stuck: ${stuck//$'\n'/; } (L0 lost the wake-up), $2"
}

tb_boot_l0() {
	local initrd=$1 log=$2 bound=$3 extra_args=${4:-} extra_append=${5:-}
	local kill_after=${6:-} delay_ms=${7:-0} rc=0 pid end
	local -a extra=() cmd=()
	# Words over any number of lines (scenario settings may wrap).
	[ -z "$extra_args" ] || read -r -d '' -a extra <<<"$extra_args" || true
	mkdir -p "$TB_CACHE"
	exec {lockfd}>"${TB_L0_LOCK:-$TB_CACHE/l0.lock}"
	if ! flock -n "$lockfd"; then
		tb_say "waiting for another L0 run to finish"
		flock "$lockfd"
	fi
	# The monitor socket is for looking at a frozen L1 from outside
	# (tests/testbed/l0-monitor.py 'info registers -a').
	cmd=("${TB_L0_CMD[@]}" "${extra[@]}"
		-monitor "unix:$TB_CACHE/l0.monitor,server=on,wait=off"
		-kernel "$(tb_vmlinuz)" -initrd "$initrd"
		-append "$TB_L0_APPEND${extra_append:+ $extra_append}")
	TB_L0_KILLED=0 TB_L0_KILL_MS=
	# stdin </dev/null: no terminal to put in raw mode, no input to L1.
	if [ -z "$kill_after" ]; then
		# A silent L1's CPUs (L0 ended at once if it left one stuck), and
		# just before the bound kills it what they are doing.
		rm -f "$log.l0"
		tb_l0_watch "$log" "$bound" </dev/null >/dev/null 2>&1 {lockfd}>&- &
		local dumper=$!
		timeout --kill-after=10 "$bound" "${cmd[@]}" </dev/null >"$log" 2>&1 || rc=$?
		kill "$dumper" 2>/dev/null || true
		wait "$dumper" 2>/dev/null || true
		# After QEMU has gone: its own writes cannot overwrite it.
		[ ! -s "$log.l0" ] || cat "$log.l0" >>"$log"
		rm -f "$log.l0"
	else
		# Not under timeout(1): $! must be QEMU itself, for SIGKILL. The
		# lock stays with this shell alone.
		"${cmd[@]}" </dev/null >"$log" 2>&1 {lockfd}>&- &
		pid=$!
		end=$((SECONDS + bound))
		while kill -0 "$pid" 2>/dev/null; do
			if grep -qE -- "$kill_after" "$log"; then
				TB_L0_KILL_MS=$(((RANDOM * 32768 + RANDOM) % (delay_ms + 1)))
				sleep "$((TB_L0_KILL_MS / 1000)).$(printf %03d $((TB_L0_KILL_MS % 1000)))"
				! kill -KILL "$pid" 2>/dev/null || TB_L0_KILLED=1
				break
			fi
			if [ "$SECONDS" -ge "$end" ]; then
				kill -KILL "$pid" 2>/dev/null || true
				rc=124
				break
			fi
			sleep 0.1
		done
		# Without bash's "Killed" notice on stderr.
		if [ "$rc" = 124 ]; then
			{ wait "$pid"; } 2>/dev/null || true
		else
			{ wait "$pid"; } 2>/dev/null || rc=$?
		fi
	fi
	exec {lockfd}>&-
	return "$rc"
}

# tb_l0_files SCENARIO SPECS ARGS: L0_FILES made for one trial. Each
# NAME:SIZE in SPECS becomes a fresh sparse file of SIZE (truncate's
# units) in TB_CACHE, and each @NAME@ in ARGS its path: sets TB_L0_ARGS
# to ARGS so rewritten, and appends the files' paths to TB_L0_FILE_PATHS
# (the caller removes them after the trial). Names: letters and digits.
tb_l0_files() {
	local name=$1 specs=$2 args=$3 spec fname size f
	for spec in $specs; do
		fname=${spec%%:*} size=${spec#*:}
		case "$fname" in '' | *[!a-z0-9]*) tb_die "L0_FILES: bad name in '$spec'" ;; esac
		f=$(mktemp "$TB_CACHE/run.$name.$fname.XXXXXX")
		TB_L0_FILE_PATHS="$TB_L0_FILE_PATHS $f"
		truncate -s "$size" "$f" || tb_die "L0_FILES: bad size in '$spec'"
		args=${args//@$fname@/$f}
	done
	TB_L0_ARGS=$args
}

# --- Per-run images: the small overlays appended to the cached bases. ---

# Copy build/skiff (or $SKIFF) and its libraries into the L1 staging tree.
# Returns 1 if there is no skiff binary (scenarios that need it then fail
# inside L1 with a clear message; L1-only scenarios still run).
tb_stage_skiff() {
	[ -x "$TB_SKIFF" ] || return 1
	tb_copy_bin "$1" "$TB_SKIFF" /usr/bin/skiff
	# The jailer and the static skiff it execs (scenario jail), when built.
	local f
	for f in skiff-jailer skiff-static; do
		[ ! -x "$(dirname "$TB_SKIFF")/$f" ] || cp "$(dirname "$TB_SKIFF")/$f" "$1/usr/bin/$f"
	done
}

# tb_concat_initrd OUT BASE [OVERLAY_DIR]: BASE followed by OVERLAY_DIR
# packed as an uncompressed cpio. Linux unpacks concatenated archives in
# order, later files replacing earlier ones: only the overlay is per run.
tb_concat_initrd() {
	local out=$1 base=$2 overlay=${3:-}
	if [ -n "$overlay" ]; then
		tb_mkcpio "$overlay" "$out.overlay"
		cat "$base" "$out.overlay" >"$out"
		rm -f "$out.overlay"
	else
		cp "$base" "$out"
	fi
}

# tb_drop_base_libs OVERLAY BASE: removes from the staging tree OVERLAY the
# libraries and modules (lib/, lib64/, usr/lib/) that the gzip'd image BASE
# already has: they come from the same host files.
tb_drop_base_libs() {
	local overlay=$1 base=$2 f
	while read -r f; do
		f=${f#./}
		case "$f" in
		lib/* | lib64/* | usr/lib/*) [ ! -f "$overlay/$f" ] || rm -f "$overlay/$f" ;;
		esac
	done < <(zcat "$base" | cpio -it --quiet 2>/dev/null)
}

# Host-side settings of scenario NAME, from its file in a subshell, as
# shell assignments to eval: S_TIMEOUT, S_SLOW, S_PEERS, S_EXPECT, S_HAS_L2,
# S_L2_FILES, S_L2_MODULES, S_L0_ARGS, S_L1_APPEND, S_L1_MODULES, S_L1_FILES,
# S_TRIALS (TB_TRIALS in the environment overrides it), S_DISK_MB,
# S_L0_FILES, S_KILL_AFTER, S_KILL_DELAY_MS, S_PHASE2.
# Scenarios live in tests/testbed/scenarios/; the benchmark's round is
# bench/bench-round.sh, found the same way by name.
# TB_SCENARIOS (a folder) replaces tests/testbed/scenarios (the tests of
# run-scenarios.sh use their own).
TB_SCENARIOS=${TB_SCENARIOS:-$TB_DIR/scenarios}
tb_scenario_file() {
	if [ -f "$TB_ROOT/bench/$1.sh" ] && [ ! -f "$TB_SCENARIOS/$1.sh" ]; then
		echo "$TB_ROOT/bench/$1.sh"
	else
		echo "$TB_SCENARIOS/$1.sh"
	fi
}
# tb_scenario_base FILE: the scenario FILE builds on (its SCENARIO_BASE=
# line: the full form of a quick one), or nothing.
tb_scenario_base() {
	sed -n 's/^SCENARIO_BASE=\([a-z0-9-]*\).*/\1/p' "$1" | head -n1
}
# tb_scenario_bases FILE: the files of every scenario FILE builds on, one
# a line, the deepest first: its base's base before its base
# (vfio-multi-qemu on vfio-multi on vfio). They go into L1 and L2 as one
# /testbed/base.sh, read before the scenario's own. Four deep at most: a
# loop is an error.
tb_scenario_bases() {
	local f=$1 base n=0 chain=()
	while base=$(tb_scenario_base "$f") && [ -n "$base" ]; do
		n=$((n + 1))
		[ "$n" -le 4 ] || tb_die "SCENARIO_BASE: more than 4 deep from $1"
		f=$(tb_scenario_file "$base")
		[ -f "$f" ] || tb_die "SCENARIO_BASE: no scenario $base (no $f)"
		chain=("$f" "${chain[@]}")
	done
	[ "$n" = 0 ] || printf '%s\n' "${chain[@]}"
}
tb_scenario_settings() {
	local file
	file=$(tb_scenario_file "$1")
	[ -f "$file" ] || tb_die "no scenario $1 (no $file)"
	(
		TIMEOUT=600 SLOW=0 PEERS="" EXPECT="" L2_EXTRA_FILES="" L2_EXTRA_MODULES=""
		L0_EXTRA_ARGS="" L1_EXTRA_APPEND="" L1_EXTRA_MODULES="" L1_EXTRA_FILES=""
		TRIALS=1 L0_DISK_MB="" L0_FILES="" L0_KILL_AFTER="" L0_KILL_DELAY_MS=0 L1_PHASE2=""
		# A quick form (SCENARIO_BASE=NAME) starts from its full scenario's
		# settings and functions (and that one's base's) and overrides some.
		tb_bases=$(tb_scenario_bases "$file") || exit 1
		while IFS= read -r base; do
			# shellcheck disable=SC1090
			[ -z "$base" ] || . "$base"
		done <<<"$tb_bases"
		# shellcheck disable=SC1090
		. "$file"
		printf 'S_TIMEOUT=%q S_SLOW=%q S_PEERS=%q S_EXPECT=%q S_HAS_L2=%q ' \
			"$TIMEOUT" "$SLOW" "$PEERS" "$EXPECT" \
			"$(declare -F l2 >/dev/null && echo 1 || echo 0)"
		printf 'S_L2_FILES=%q S_L2_MODULES=%q ' "$L2_EXTRA_FILES" "$L2_EXTRA_MODULES"
		printf 'S_L0_ARGS=%q S_L1_APPEND=%q S_L1_MODULES=%q S_L1_FILES=%q ' \
			"$L0_EXTRA_ARGS" "$L1_EXTRA_APPEND" "$L1_EXTRA_MODULES" "$L1_EXTRA_FILES"
		printf 'S_TRIALS=%q S_DISK_MB=%q S_L0_FILES=%q S_KILL_AFTER=%q S_KILL_DELAY_MS=%q ' \
			"${TB_TRIALS:-$TRIALS}" "$L0_DISK_MB" "$L0_FILES" "$L0_KILL_AFTER" \
			"$L0_KILL_DELAY_MS"
		printf 'S_PHASE2=%q\n' "$L1_PHASE2"
	)
}

# The wrapper that L1's or L2's /init runs: the guest library, the scenario
# file, then its l1 or l2 function. The scenario file is sourced by busybox
# ash, so it must be POSIX sh (see README.md).
tb_wrapper() {
	local name=$1 part=$2
	cat <<EOW
#!/bin/sh
# Generated by tests/testbed/lib.sh for scenario $name, part $part.
SCENARIO=$name
. /testbed/lib.sh
[ ! -f /testbed/base.sh ] || . /testbed/base.sh
. /testbed/scenario.sh
if type $part >/dev/null 2>&1; then $part; else fail "scenario has no $part function"; fi
EOW
}

# tb_add_l2_extras DEST FILES MODULES: a scenario's L2_EXTRA_FILES (each
# with its libraries) and L2_EXTRA_MODULES (with their dependencies) in the
# L2 overlay DEST, without what the L2 base already has. The overlay's
# /etc/testbed-modules lists the base's modules and then these, in load
# order, and replaces the base's list.
tb_add_l2_extras() {
	local dest=$1 files=$2 modules=$3 f
	[ -n "$files$modules" ] || return 0
	for f in $files; do
		[ -e "$f" ] || tb_die "L2_EXTRA_FILES: no $f on this host (tests/install-deps.sh installs it)"
		tb_copy_bin "$dest" "$f"
	done
	# shellcheck disable=SC2086 # lists of names
	[ -z "$modules" ] || tb_add_modules "$dest" $TB_L2_MODULES $modules
	tb_drop_base_libs "$dest" "$TB_L2_BASE"
}

# tb_build_run_initrd NAME OUT: the L1 initrd for one run of scenario NAME:
# L1 base + overlay (skiff, peers, scenario scripts, the L2 initrd = L2 base
# + overlay with the scenario's L2 part and extra files and modules).
tb_build_run_initrd() {
	local name=$1 out=$2 work file f bases base_files S_TIMEOUT S_SLOW S_PEERS S_EXPECT S_HAS_L2 \
		S_L2_FILES S_L2_MODULES S_L0_ARGS S_L1_APPEND S_L1_MODULES S_L1_FILES S_TRIALS \
		S_DISK_MB S_L0_FILES S_KILL_AFTER S_KILL_DELAY_MS S_PHASE2
	eval "$(tb_scenario_settings "$name")"
	file=$(tb_scenario_file "$name")
	work=$(mktemp -d "$TB_CACHE/run.XXXXXX")
	mkdir -p "$work/l1/testbed" "$work/l1/l2" "$work/l2/testbed"

	tb_stage_skiff "$work/l1" || true
	case " $S_PEERS " in *" qemu "*) tb_pack_qemu "$work/l1" ;; esac
	case " $S_PEERS " in *" kvmtool "*) tb_pack_kvmtool "$work/l1" ;; esac
	cp "$file" "$work/l1/testbed/scenario.sh"
	bases=$(tb_scenario_bases "$file") || exit 1
	if [ -n "$bases" ]; then
		mapfile -t base_files <<<"$bases"
		cat "${base_files[@]}" >"$work/l1/testbed/base.sh"
		cp "$work/l1/testbed/base.sh" "$work/l2/testbed/base.sh"
	fi
	tb_wrapper "$name" l1 >"$work/l1/scenario-l1.sh"
	chmod 755 "$work/l1/scenario-l1.sh"

	if [ "$S_HAS_L2" = 1 ]; then
		cp "$file" "$work/l2/testbed/scenario.sh"
		tb_wrapper "$name" l2 >"$work/l2/scenario-l2.sh"
		chmod 755 "$work/l2/scenario-l2.sh"
	fi
	tb_add_l2_extras "$work/l2" "$S_L2_FILES" "$S_L2_MODULES"
	if [ "$S_HAS_L2" = 1 ] || [ -n "$S_L2_FILES$S_L2_MODULES" ]; then
		tb_concat_initrd "$work/l1/l2/initrd.gz" "$TB_L2_BASE" "$work/l2"
	else
		tb_concat_initrd "$work/l1/l2/initrd.gz" "$TB_L2_BASE"
	fi
	# L1's extra files (with their libraries), in this run's overlay only.
	for f in $S_L1_FILES; do
		[ -e "$f" ] || tb_die "L1_EXTRA_FILES: no $f on this host (tests/install-deps.sh installs it)"
		tb_copy_bin "$work/l1" "$f"
	done
	# L1's extra modules: the overlay's load list (base's, then these)
	# replaces the base's, as for L2.
	if [ -n "$S_L1_MODULES" ]; then
		# shellcheck disable=SC2086 # lists of names
		tb_add_modules "$work/l1" $TB_L1_MODULES $S_L1_MODULES
	fi
	[ -z "$S_L1_FILES$S_L1_MODULES" ] || tb_drop_base_libs "$work/l1" "$TB_L1_BASE"
	tb_concat_initrd "$out" "$TB_L1_BASE" "$work/l1"
	rm -rf "$work"
}

# The default suite: every scenario that does not set SLOW=1, one a line.
tb_default_scenarios() {
	local f n S_SLOW
	for f in "$TB_SCENARIOS"/*.sh; do
		n=$(basename "$f" .sh)
		S_SLOW=$(eval "$(tb_scenario_settings "$n")" && echo "$S_SLOW")
		[ "$S_SLOW" = 1 ] || echo "$n"
	done
}

# tb_scenario_bound NAME: the longest a run of NAME can take, in seconds:
# its TIMEOUT per L0 boot, for each trial and phase.
tb_scenario_bound() {
	(
		eval "$(tb_scenario_settings "$1")"
		local phases=1
		[ -z "$S_PHASE2" ] || phases=2
		echo $((S_TIMEOUT * S_TRIALS * phases))
	)
}

# tb_bounds_budget NAME...: "SUM WORST": the sum of the scenarios' bounds,
# and that plus a retry of each of the two longest (issue 39.4: CI allows
# 90 minutes; the budget test wants SUM within 75 and WORST within 90).
tb_bounds_budget() {
	local n
	for n in "$@"; do tb_scenario_bound "$n"; done |
		sort -rn | awk '{ s += $1; if (NR <= 2) r += $1 } END { print s + 0, s + r }'
}

# The guest kernel's package and version, as install-deps.sh fetched it
# (the .deb it kept in TB_KCACHE: NAME_VERSION_ARCH.deb).
tb_kernel_package() {
	local k deb v=""
	k=$(tb_kernel_version) || return 1
	deb=$(find "$TB_KCACHE" -maxdepth 1 -name "linux-image-${k}_*.deb" 2>/dev/null | sort | tail -n1)
	if [ -n "$deb" ]; then
		v=${deb##*/}
		v=${v#*_}
		v=${v%_*}
		v=${v//%3a/:}
	fi
	echo "linux-image-$k ${v:-(version unknown: no .deb in ${TB_KCACHE#"$TB_ROOT"/})}"
}
