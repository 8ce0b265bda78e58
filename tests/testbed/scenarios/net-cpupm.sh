# SPDX-License-Identifier: Apache-2.0
# The dedicated-CPU mode (issue 38): the network scenario's path with
# --cpu-pm on and pinned vCPUs, so that L2 idles in HLT without exiting and
# must still wake for its timer, virtio-net's interrupts and its IPIs.
# Two boots, each with skiff's --stats-json:
#   pm1   --cpus 1,pin=1 --iothreads 1,pin=0: ping L1 (the vCPU halts
#         between echoes), NET_XFER_MB MiB each way with busybox nc, checked
#         by sha256, an idle pause, then poweroff;
#   pm2   --cpus 2,pin=0-1: both CPUs come online, a ping from a process
#         pinned to CPU 1 and a pipe between CPU 0 and CPU 1 (wake-ups that
#         are IPIs), then poweroff.
# Each must exit 0 with KVM's halt_exits present and 0 (L1 has binary stats) and
# skiff must not say the host kept HLT exits. The SMP guest must run native
# spinlocks (no PV unhalt with HLT in the guest: "PV spinlocks disabled, no
# host support" in dmesg), and each vCPU's rescheduling interrupts (RES in
# /proc/interrupts) must grow across the pipe workload: IPIs reached vCPUs
# that were halted in the guest. In the default suite: 55 s measured
# (two L2 boots and a few seconds of traffic).
# Metrics: pmN.ping_{min,avg,max}_ms, pmN.kvm_exits (KVM's exits, all
# reasons), pmN.halt_exits, pm1.throughput_nc_{down,up}_mbps,
# pm1.tx_held_carried (virtio-net's held TX completions that an RX
# interrupt carried: must be above 0, the card's TX hold under cpu-pm).
# Link-local addresses only, and only inside L1/L2.

TIMEOUT=200
EXPECT="SKIFF-L2: init
SKIFF-L2-MARK pm1-done
SKIFF-L2-MARK pm2-done"

NET_L1=169.254.10.1
NET_L2=169.254.10.2
NET_XFER_MB=8

pm_l2_value() {
	sed -n "s/^SKIFF-L2-MARK $1=//p" /tmp/l2.log | head -n1
}

pm_sha() {
	sha256sum <"$1" | cut -d' ' -f1
}

pm_random() {
	dd if=/dev/urandom of="$1" bs=1M count="$NET_XFER_MB" 2>/dev/null &&
		[ "$(wc -c <"$1")" = $((NET_XFER_MB * 1048576)) ]
}

# pm_kvm_value FILE NAME: KVM's counter NAME in a --stats-json file, or "".
pm_kvm_value() {
	sed -n "/\"kvm\": {/,/}/s/^ *\"$2\": \([0-9]*\).*/\1/p" "$1" | head -n1
}

# pm_check TAG FILE: skiff exited 0, kept no HLT exit, and KVM counted none.
pm_check() {
	[ "$VMM_RC" = 0 ] || { fail "$1: skiff exited $VMM_RC"; return 1; }
	if grep -q -- "--cpu-pm: the host keeps the guest's.*HLT" /tmp/vmm.err; then
		fail "$1: the host kept HLT exits: $(grep -m1 -- '--cpu-pm' /tmp/vmm.err)"
		return 1
	fi
	grep -- "--cpu-pm" /tmp/vmm.err # MWAIT kept is expected without host MWAIT
	halts=$(pm_kvm_value "$2" halt_exits)
	exits=$(pm_kvm_value "$2" exits)
	echo "net-cpupm: $1: KVM halt_exits=${halts:-absent} exits=${exits:-absent}"
	[ -n "$exits" ] && metric "$1.kvm_exits" "$exits"
	[ -n "$halts" ] && metric "$1.halt_exits" "$halts"
	# L1's kernel has KVM's binary stats: an absent counter proves nothing.
	[ -n "$halts" ] || { fail "$1: no KVM halt_exits in skiff's stats"; return 1; }
	[ "$halts" = 0 ] || { fail "$1: $halts HLT exits with --cpu-pm on"; return 1; }
}

l1() {
	tap_up "$NET_L1" || { fail "tap0 setup failed"; return; }
	pm_random /tmp/down.bin || { fail "cannot make /tmp/down.bin"; return; }
	down_sha=$(pm_sha /tmp/down.bin)
	nc -l -p 5001 -e cat /tmp/down.bin &
	down_pid=$!
	nc -l -p 5002 -e sh -c 'cat >/tmp/up.bin' &
	up_pid=$!
	# L2's command line says which part it runs.
	base=$L2_CMDLINE
	L2_CMDLINE="$base pm=1"
	skiff_boot_l2 --cpus 1,pin=1 --iothreads 1,pin=0 --cpu-pm on --net tap=tap0 \
		--stats-json /tmp/pm1.json
	kill "$down_pid" "$up_pid" 2>/dev/null
	pm_check pm1 /tmp/pm1.json || return
	# One pair, HLT in the guest: the card holds TX completions, and the
	# echo replies' interrupts carry them (docs/CLI.md, virtio-net).
	carried=$(sed -n 's/^ *"virtio-net0 held notifications carried": \([0-9]*\).*/\1/p' /tmp/pm1.json | head -n1)
	echo "net-cpupm: pm1: held TX completions carried by another interrupt: ${carried:-absent}"
	metric pm1.tx_held_carried "${carried:-0}"
	[ "${carried:-0}" -gt 0 ] || { fail "pm1: no held TX completion rode on an RX interrupt"; return; }
	l2_saw "SKIFF-L2-MARK pm1-done" || { fail "pm1: L2 did not finish its checks"; return; }
	[ "$(pm_l2_value down_sha)" = "$down_sha" ] ||
		{ fail "pm1: download corrupted: L2 got $(pm_l2_value down_sha)"; return; }
	[ "$(pm_l2_value up_sha)" = "$(pm_sha /tmp/up.bin 2>/dev/null)" ] ||
		{ fail "pm1: upload corrupted"; return; }

	L2_CMDLINE="$base pm=2"
	skiff_boot_l2 --cpus 2,pin=0-1 --cpu-pm on --net tap=tap0 --stats-json /tmp/pm2.json
	L2_CMDLINE=$base
	pm_check pm2 /tmp/pm2.json || return
	l2_saw "SKIFF-L2-MARK pm2-done" || { fail "pm2: L2 did not finish its checks"; return; }
	[ "$(pm_l2_value online)" = 0-1 ] ||
		{ fail "pm2: L2's online CPUs are '$(pm_l2_value online)', not 0-1"; return; }
	case $(pm_l2_value spinlocks) in
	*"no host support"*) ;;
	*enabled*) fail "pm2: PV spinlocks with HLT in the guest: $(pm_l2_value spinlocks)"; return ;;
	*) echo "net-cpupm: pm2: no PV spinlock line in L2's dmesg" ;;
	esac
	for c in 0 1; do
		grew=$(pm_l2_value "res_grew_cpu$c")
		[ "$grew" = yes ] || { fail "pm2: no IPI reached CPU $c ($grew)"; return; }
	done
	pass
}

# ---- L2 ----

# pm_ping TAG [taskset -c N]: 10 pings 0.2 s apart (the vCPU halts between
# them), as metrics TAG.ping_*.
pm_ping() {
	tag=$1
	shift
	"$@" ping -c 10 -i 0.2 -W 5 "$NET_L1" >/tmp/ping.txt 2>&1
	cat /tmp/ping.txt
	rtt=$(sed -n 's#.*min/avg/max = \([0-9.]*\)/\([0-9.]*\)/\([0-9.]*\).*#\1 \2 \3#p' /tmp/ping.txt)
	[ -n "$rtt" ] || return 1
	# shellcheck disable=SC2086 # three numbers
	set -- $rtt
	metric "$tag.ping_min_ms" "$1"
	metric "$tag.ping_avg_ms" "$2"
	metric "$tag.ping_max_ms" "$3"
	grep -q " 0% packet loss" /tmp/ping.txt
}

pm_rate() {
	awk "BEGIN { d = $2 - $1; if (d < 0.01) d = 0.01;
		printf \"%.1f\n\", $NET_XFER_MB * 8.388608 / d }"
}

# Rescheduling interrupts received by CPU $1 so far.
pm_res() {
	awk -v c="$1" '$1 == "RES:" { print $(c + 2) }' /proc/interrupts
}

# pm_grew CPU BEFORE AFTER: a mark saying whether the count grew.
pm_grew() {
	if [ "${3:-0}" -gt "${2:-0}" ] 2>/dev/null; then
		echo "SKIFF-L2-MARK res_grew_cpu$1=yes"
	else
		echo "SKIFF-L2-MARK res_grew_cpu$1=no: ${2:-none} -> ${3:-none}"
	fi
}

l2_pm1() {
	pm_ping pm1 || { fail "pm1: ping failed"; return; }
	t0=$(cut -d' ' -f1 /proc/uptime)
	nc "$NET_L1" 5001 </dev/null >/tmp/down.bin
	t1=$(cut -d' ' -f1 /proc/uptime)
	echo "SKIFF-L2-MARK down_sha=$(pm_sha /tmp/down.bin)"
	rm -f /tmp/down.bin
	pm_random /tmp/up.bin || { fail "pm1: cannot make /tmp/up.bin"; return; }
	echo "SKIFF-L2-MARK up_sha=$(pm_sha /tmp/up.bin)"
	t2=$(cut -d' ' -f1 /proc/uptime)
	nc "$NET_L1" 5002 </tmp/up.bin
	t3=$(cut -d' ' -f1 /proc/uptime)
	metric pm1.throughput_nc_down_mbps "$(pm_rate "$t0" "$t1")"
	metric pm1.throughput_nc_up_mbps "$(pm_rate "$t2" "$t3")"
	# Idle: only the timer wakes the vCPU.
	sleep 2
	echo "SKIFF-L2-MARK pm1-done"
}

l2_pm2() {
	echo "SKIFF-L2-MARK online=$(cat /sys/devices/system/cpu/online)"
	echo "SKIFF-L2-MARK spinlocks=$(dmesg | grep -m1 'PV spinlocks' | sed 's/.*PV spinlocks //')"
	pin=""
	if taskset -c 1 true 2>/dev/null; then
		pin="taskset -c 1"
	else
		echo "net-cpupm: no taskset in L2: the ping and the pipe run unpinned"
	fi
	# shellcheck disable=SC2086 # "taskset -c 1" is three words, or none
	pm_ping pm2 $pin || { fail "pm2: ping from CPU 1 failed"; return; }
	r0=$(pm_res 0) r1=$(pm_res 1)
	# A pipe between two CPUs: each write wakes a reader halted on the
	# other one, by IPI.
	# shellcheck disable=SC2086,SC2016 # as above; the loop is the inner shell's
	$pin sh -c 'i=0; while [ $i -lt 300 ]; do echo $i; sleep 0.01; i=$((i + 1)); done' |
		${pin:+taskset -c 0} cat >/dev/null
	r0b=$(pm_res 0) r1b=$(pm_res 1)
	echo "net-cpupm: RES cpu0 $r0 -> $r0b, cpu1 $r1 -> $r1b"
	pm_grew 0 "$r0" "$r0b"
	pm_grew 1 "$r1" "$r1b"
	echo "SKIFF-L2-MARK pm2-done"
}

l2() {
	ip addr add "$NET_L2/24" dev eth0 && ip link set eth0 up ||
		{ fail "eth0 setup failed"; return; }
	case " $(cat /proc/cmdline) " in
	*" pm=1 "*) l2_pm1 ;;
	*" pm=2 "*) l2_pm2 ;;
	*) fail "no pm= on L2's command line" ;;
	esac
}
