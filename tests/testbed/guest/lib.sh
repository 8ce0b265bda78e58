# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# Functions for scenario scripts inside L1 and L2 (busybox ash: POSIX sh).
# Installed at /testbed/lib.sh; the generated /scenario-l1.sh and
# /scenario-l2.sh source it, set SCENARIO, source the scenario file and call
# its l1 or l2 function.

# This busybox runs its own applets before anything in PATH (it is built
# "standalone"), so the real tools copied into the image are reached through
# functions: iproute2's ip (busybox ip cannot make taps) and, in L1, GNU date.
[ -x /usr/sbin/ip ] && ip() { /usr/sbin/ip "$@"; }
[ -x /usr/bin/date ] && date() { /usr/bin/date "$@"; }

# Result and metric markers, read by the host from L0's console log.
pass() { echo "SKIFF-RESULT: PASS $SCENARIO"; }
fail() { echo "SKIFF-RESULT: FAIL $SCENARIO $*"; }
metric() { echo "SKIFF-METRIC: $1=$2"; }

# Nanoseconds since the epoch. L1 has GNU date (busybox date lacks %N);
# elsewhere fall back to /proc/uptime (10 ms resolution).
now_ns() {
	t=$(date +%s%N 2>/dev/null)
	case "$t" in
	*N | '') awk '{ printf "%.0f\n", $1 * 1e9 }' /proc/uptime ;;
	*) echo "$t" ;;
	esac
}

# wait_for PATH: waits up to 10 s for PATH to exist (device nodes and
# network interfaces appear asynchronously, after the driver's probe).
wait_for() {
	wf_i=0
	while [ ! -e "$1" ] && [ $wf_i -lt 100 ]; do
		sleep 0.1
		wf_i=$((wf_i + 1))
	done
	[ -e "$1" ]
}

# tap_up ADDR: makes tap0 (iproute2: busybox ip cannot) with ADDR/24 and
# brings it up; fails if any step does. L1 only, link-local ADDR only.
tap_up() {
	ip tuntap add tap0 mode tap && ip addr add "$1/24" dev tap0 && ip link set tap0 up
}

# wait_sock PATH: waits up to 10 s for a Unix socket at PATH (a VMM's
# API socket, a migration's listener).
wait_sock() {
	ws_i=0
	while [ ! -S "$1" ] && [ $ws_i -lt 100 ]; do
		sleep 0.1
		ws_i=$((ws_i + 1))
	done
	[ -S "$1" ]
}

# api_want SOCK METHOD PATH JSON WANT: one request to skiff's API socket
# SOCK by curl (the scenario's L1_EXTRA_FILES), printed with its status
# and body (the body in $API_BODY, /tmp/api.body unless set; JSON empty:
# no body sent); true if the status is WANT.
api_want() {
	aw_body=${API_BODY:-/tmp/api.body}
	if [ -n "$4" ]; then
		aw_code=$(/usr/bin/curl -s -o "$aw_body" -w '%{http_code}' -X "$2" --unix-socket "$1" \
			-H 'Content-Type: application/json' -d "$4" "http://localhost$3")
	else
		aw_code=$(/usr/bin/curl -s -o "$aw_body" -w '%{http_code}' -X "$2" --unix-socket "$1" \
			"http://localhost$3")
	fi
	echo "$SCENARIO: $2 $3 -> $aw_code $(cat "$aw_body" 2>/dev/null)"
	[ "$aw_code" = "$5" ]
}

# api_boot SOCK [ARGS...]: `skiff run --api-sock SOCK ARGS` under vmm_boot_l2 in the
# background (its pid in boot_pid); true once the socket is there.
api_boot() {
	ab_sock=$1
	shift
	rm -f "$ab_sock"
	(vmm_boot_l2 skiff run --api-sock "$ab_sock" "$@") &
	boot_pid=$!
	wait_sock "$ab_sock"
}

# mig_target SOCK URL [JSON]: a migration's target, `skiff run --api-sock
# SOCK` in the background (tgt_pid; its console in /tmp/l2-target.log,
# its stderr in /tmp/target.err), and its PUT /migration/receive
# {"receiver_url": URL[, JSON]} in the background too (recv_pid, the body
# in /tmp/recv.body). True once SOCK is there. mig_target_done then waits
# for the receive, prints it, and is true if it answered 204.
mig_target() {
	rm -f "$1"
	skiff run --api-sock "$1" </dev/null >/tmp/l2-target.log 2>/tmp/target.err &
	tgt_pid=$!
	wait_sock "$1" || return 1
	(
		API_BODY=/tmp/recv.body api_want "$1" PUT /migration/receive \
			"{\"receiver_url\": \"$2\"${3:+, $3}}" 204 >/tmp/recv.out 2>&1
		echo $? >/tmp/recv.rc
	) &
	recv_pid=$!
}

mig_target_done() {
	wait "$recv_pid"
	cat /tmp/recv.out
	[ "$(cat /tmp/recv.rc)" = 0 ]
}

# Defaults for booting L2 from L1; a scenario may override them.
L2_KERNEL=/l2/vmlinuz
L2_INITRD=/l2/initrd.gz
L2_CMDLINE="console=ttyS0 quiet panic=-1"
L2_MEM=256M
L2_TIMEOUT=240 # seconds; an L2 boot under emulation takes up to ~60 s

# vmm_boot_l2 CMD [ARGS...]: run a VMM that boots L2 with its serial console
# on stdout, relaying the console to L1's (so L0's log shows L2's lines) and
# to /tmp/l2.log, with stderr in /tmp/vmm.err. Sets:
#   VMM_RC       the VMM's exit status (143: killed after L2_TIMEOUT s)
#   L2_INIT_MS   ms from the VMM's start to L2's "SKIFF-L2: init" line, or ""
# and emits the metric l2_start_to_init_ms. Returns VMM_RC.
vmm_boot_l2() {
	rm -f /tmp/l2.log /tmp/vmm.err /tmp/vmm.rc /tmp/l2-init.ns
	cr=$(printf '\r')
	t0=$(now_ns)
	# The exit status goes through a file: the reader loop runs in a
	# subshell, and busybox ash pipelines report only the last command.
	# fd 3: L1's console, for the watcher (its lines stay out of l2.log,
	# and it holds no end of the pipe the reader waits on).
	exec 3>&1
	{
		timeout "$L2_TIMEOUT" "$@" </dev/null 2>/tmp/vmm.err &
		vb_pid=$!
		l2_watch "$vb_pid" >&3 &
		vb_watch=$!
		wait "$vb_pid"
		echo $? >/tmp/vmm.rc
		kill "$vb_watch" 2>/dev/null
	} | while IFS= read -r line; do
		line=${line%"$cr"}
		case "$line" in
		# Not anchored: SeaBIOS (QEMU q35, pc) leaves terminal escapes
		# before it (as in the bench's relay).
		*"SKIFF-L2: init"*) [ -e /tmp/l2-init.ns ] || now_ns >/tmp/l2-init.ns ;;
		esac
		printf '%s\n' "$line"
		printf '%s\n' "$line" >>/tmp/l2.log
	done
	exec 3>&-
	VMM_RC=$(cat /tmp/vmm.rc 2>/dev/null || echo 255)
	L2_INIT_MS=
	if [ -e /tmp/l2-init.ns ]; then
		L2_INIT_MS=$((($(cat /tmp/l2-init.ns) - t0) / 1000000))
		metric l2_start_to_init_ms "$L2_INIT_MS"
	fi
	t=$(sed -n 's/.*SKIFF-L2: init uptime=\([0-9.]*\).*/\1/p' /tmp/l2.log 2>/dev/null | head -n1)
	[ -n "$t" ] && metric l2_uptime_at_init_s "$t"
	if [ "$VMM_RC" != 0 ]; then
		echo "vmm_boot_l2: $1 exited $VMM_RC; its stderr:"
		tail -n 20 /tmp/vmm.err
	fi
	return "$VMM_RC"
}

# l2_watch PID: while PID (vmm_boot_l2's timeout) runs, each time L2's
# console has been silent for L2_WATCH_S seconds, prints what the VMM is
# doing: per thread its state, CPU ticks, wait channel and kernel stack,
# then the taps' counters and KVM's for the VM. A scenario that stalls then
# shows where (a vCPU halted in kvm_vcpu_block while the I/O thread sleeps
# in ep_poll and the tap's queue drops: a lost wake-up; a vCPU spinning:
# the guest). Informational: it never fails a scenario.
L2_WATCH_S=90 L2_WATCH_POLL_S=5
l2_watch() {
	lw_size=-1 lw_quiet=0
	while kill -0 "$1" 2>/dev/null; do
		sleep "$L2_WATCH_POLL_S"
		lw_s=$(wc -c </tmp/l2.log 2>/dev/null || echo 0)
		if [ "$lw_s" != "$lw_size" ]; then
			lw_size=$lw_s lw_quiet=0
			continue
		fi
		lw_quiet=$((lw_quiet + L2_WATCH_POLL_S))
		[ $((lw_quiet % L2_WATCH_S)) = 0 ] && l2_watch_dump "$1" "$lw_quiet"
	done
}

l2_watch_dump() {
	# busybox's timeout execs the VMM in its own process (PID $1) and
	# watches from a child; GNU timeout runs the VMM as its child.
	vpid=$1
	if [ "$(cat "/proc/$1/comm" 2>/dev/null)" = timeout ]; then
		vpid=$(cat "/proc/$1/task/$1/children" 2>/dev/null || pgrep -P "$1")
		vpid=${vpid%% *}
	fi
	echo "l2-watch: L2 silent for $2 s; VMM pid ${vpid:-?} ($(cat /proc/loadavg))"
	[ -n "$vpid" ] || return 0
	for t in /proc/"$vpid"/task/*; do
		# stat: 2 comm, 3 state, 14 utime, 15 stime (ticks)
		echo "l2-watch: task ${t##*/} $(cut -d' ' -f2,3,14,15 "$t/stat") wchan=$(cat "$t/wchan")"
		sed 's/^/l2-watch:     /' "$t/stack" 2>/dev/null | head -n 8
	done
	ip -s link 2>/dev/null | grep -A5 ': tap' | sed 's/^/l2-watch: /'
	for f in /sys/kernel/debug/kvm/"$vpid"-*/; do
		[ -d "$f" ] || continue
		for c in exits halt_exits halt_wakeup irq_injections irq_exits io_exits; do
			echo "l2-watch: kvm $c $(cat "$f$c" 2>/dev/null)"
		done
	done
}

# skiff_boot_l2 [SKIFF ARGS...]: boot L2 under skiff (with --timing), as
# vmm_boot_l2 does, then emit skiff's start→first KVM_RUN time as the metric
# skiff_first_kvm_run_us.
skiff_boot_l2() {
	rc=0
	vmm_boot_l2 skiff run --kernel "$L2_KERNEL" --initrd "$L2_INITRD" \
		--cmdline "$L2_CMDLINE" --mem "$L2_MEM" --timing "$@" || rc=$?
	us=$(sed -n 's/^skiff: first KVM_RUN after \([0-9]*\) us.*/\1/p' /tmp/vmm.err | head -n1)
	[ -n "$us" ] && metric skiff_first_kvm_run_us "$us"
	return "$rc"
}

# l2_saw LINE: whether L2's console (of the last vmm_boot_l2) had LINE.
l2_saw() { grep -qxF "$1" /tmp/l2.log 2>/dev/null; }

# l2_held_download ADDR L1 BOUND (in L2; migrate-vhost, snapshot-vhost):
# eth0 at ADDR/24, then what L1 sends on port 5200 waits unread in the
# socket (8 MiB receive buffer from the start: the window stays open)
# until L1 ends the connection it holds on 5201, so that only vhost wrote
# it to guest memory. Says what waited (the receive queue of local port
# 0x1450, /proc/net/tcp) and the md5 of what came; BOUND seconds at most
# for each connection.
l2_held_download() {
	wait_for /sys/class/net/eth0 || { fail "L2 lacks eth0"; return 1; }
	ip addr add "$1/24" dev eth0 && ip link set eth0 up || { fail "eth0 setup failed"; return 1; }
	echo "4096 16777216 16777216" >/proc/sys/net/ipv4/tcp_rmem
	hd_i=0
	until ping -c 1 -W 1 "$2" >/dev/null 2>&1 || [ $hd_i -ge 20 ]; do
		hd_i=$((hd_i + 1))
	done
	exec 3>&1
	timeout "$3" nc "$2" 5200 </dev/null 2>/dev/null | {
		timeout "$3" nc "$2" 5201 </dev/null >/dev/null 2>&1
		echo "SKIFF-L2-MARK queued $(awk '$3 ~ /:1450$/ { split($5, q, ":"); print q[2] }' /proc/net/tcp)" >&3
		cat
	} >/tmp/down
	echo "SKIFF-L2-MARK down md5=$(md5sum </tmp/down | cut -d' ' -f1) bytes=$(wc -c </tmp/down)"
}

# sh_quote WORD...: the words, each single-quoted, for eval "set -- ...":
# a command line kept as one string (the bench's restore and migration
# target) or made by a function (qemu_l2_argv). No fork unless a word
# holds a quote.
sh_quote() {
	for sq_a in "$@"; do
		case "$sq_a" in *\'*) sq_a=$(printf '%s' "$sq_a" | sed "s/'/'\\\\''/g") ;; esac
		printf "'%s' " "$sq_a"
	done
}

# qemu_l2_argv MACHINE KERNEL MEM CPUS CMDLINE: QEMU booting L2 as the
# bench runs its peer (bench/bench-round.sh, bench_vm), quoted for
# eval "set -- $(qemu_l2_argv ...)", devices after it: KVM with L1's
# CPU, no default devices or user config, the console on stdout, no
# reboot, L2_INITRD. The firmware is the scenario's PEERS=qemu (the bench
# packs the same: tb_pack_qemu).
qemu_l2_argv() {
	sh_quote qemu-system-x86_64 -M "$1" -enable-kvm -cpu host -m "$3" -smp "$4" \
		-L /usr/share/qemu -nodefaults -no-user-config -nographic -serial stdio \
		-no-reboot -name l2,debug-threads=on -kernel "$2" -initrd "$L2_INITRD" -append "$5"
}

# qemu_vfio_dev ADDR: QEMU's -device for L1's function ADDR (on vfio-pci)
# as its users pass one: no option ROM (skiff's rom=off default).
qemu_vfio_dev() { echo "vfio-pci,host=$1,rombar=0"; }

# l2_ping_phase L1_IP L2_IP COUNT (in L2): eth0 up at L2_IP/24, three
# pings to warm the path, then "SKIFF-L2-MARK phase=rr" (for L1's counters
# to start) and COUNT pings 10 ms apart, summed up as "SKIFF-L2-MARK rr:"
# lines. Returns 1 if eth0 did not come up.
l2_ping_phase() {
	ip addr add "$2/24" dev eth0 && ip link set eth0 up || {
		echo "SKIFF-L2-MARK eth0 failed"
		return 1
	}
	ping -c 3 -i 0.2 -W 5 "$1" >/dev/null 2>&1
	echo "SKIFF-L2-MARK phase=rr"
	sleep 0.5
	ping -q -c "$3" -i 0.01 "$1" | tail -n 2 | sed 's/^/SKIFF-L2-MARK rr: /'
}

# expect_usage_error DESC WHAT SKIFF-ARGS...: one bad-input case. Appends
# DESC to BAD unless skiff exits 2 with exactly one stderr line matching the
# extended regex WHAT (case-insensitive): the line must be about what the
# case breaks, or the case tests nothing.
expect_usage_error() {
	desc=$1 what=$2
	shift 2
	rc=0
	timeout 60 skiff "$@" </dev/null >/tmp/bad.out 2>/tmp/bad.err || rc=$?
	lines=$(wc -l </tmp/bad.err)
	echo "bad input: $desc: rc=$rc stderr_lines=$lines: $(head -n1 /tmp/bad.err)"
	if [ "$rc" != 2 ] || [ "$lines" != 1 ]; then
		BAD="$BAD [$desc: rc=$rc lines=$lines]"
	elif ! grep -qiE -- "$what" /tmp/bad.err; then
		BAD="$BAD [$desc: message not about /$what/]"
	fi
}

# ---- traces in L1 (boot-trace, net-trace, l1-textpatch) ----

# tracefs_up: sets TR to L1's tracefs, mounting it if needed.
tracefs_up() {
	TR=/sys/kernel/tracing
	[ -e $TR/trace ] || mount -t tracefs nodev $TR 2>/dev/null
}

# bt_symbolize FILE: FILE's lines "COUNT WHAT 0xRIP ..." with the kernel
# symbol of RIP appended. L2 runs the kernel at its link address (skiff
# loads it unpacked, nokaslr besides); L1 runs the same kernel shifted by
# KASLR, so L1's /proc/kallsyms, less that shift, names L2's RIPs.
bt_symbolize() {
	text=$(awk '$3 == "_text" { print $1; exit }' /proc/kallsyms)
	shift_by=$((0x$text - 0xffffffff81000000))
	{
		awk '$2 == "T" || $2 == "t" { print $1, $3 }' /proc/kallsyms
		n=0
		while read -r line; do
			n=$((n + 1))
			rip=$(echo "$line" | awk '{ print $3 }')
			case "$rip" in
			0xffffffff*) printf 'ffffffff%08x ~%d\n' $(((rip + shift_by) & 0xffffffff)) $n ;;
			esac
		done <"$1"
	} | sort | awk '$2 ~ /^~/ { print substr($2, 2), last; next } { last = $2 }' |
		sort -n >/tmp/syms
	n=0
	while read -r line; do
		n=$((n + 1))
		echo "$line $(awk -v n=$n '$1 == n { print $2 }' /tmp/syms)"
	done <"$1"
}

# ---- PCI devices (passthrough: the vfio scenario and the harness) ----

# pci_find VENDOR DEVICE: the address of the (last) PCI device with these
# ids (0x8086 0x10d3), or failure.
pci_find() {
	pf_a=''
	for pf_d in /sys/bus/pci/devices/*; do
		[ "$(cat "$pf_d/vendor")" = "$1" ] && [ "$(cat "$pf_d/device")" = "$2" ] && pf_a=${pf_d##*/}
	done
	[ -n "$pf_a" ] && echo "$pf_a"
}

# pci_netif DRIVER: the interface whose device's driver is DRIVER.
pci_netif() {
	for pn_n in /sys/class/net/*; do
		case "$(readlink "$pn_n/device/driver" 2>/dev/null)" in
		*/"$1")
			echo "${pn_n##*/}"
			return 0
			;;
		esac
	done
	return 1
}

# pci_bind ADDR DRIVER: ADDR bound to DRIVER alone (unbound from any other
# and probed with DRIVER only); nothing if it already is.
pci_bind() {
	pb_d=/sys/bus/pci/devices/$1
	case "$(readlink "$pb_d/driver" 2>/dev/null)" in */"$2") return 0 ;; esac
	[ ! -e "$pb_d/driver" ] || echo "$1" >"$pb_d/driver/unbind"
	echo "$2" >"$pb_d/driver_override" && echo "$1" >/sys/bus/pci/drivers_probe
	case "$(readlink "$pb_d/driver" 2>/dev/null)" in */"$2") return 0 ;; esac
	return 1
}
