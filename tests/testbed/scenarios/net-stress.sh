# SPDX-License-Identifier: Apache-2.0
# A hunt for the rare L2 failures seen under network load (issue 3): a
# guest that stops answering with its vCPU busy in KVM, or a silent reset
# (KVM_EXIT_SHUTDOWN, "triple fault"). L1 boots L2 under each VMM of
# STRESS_VMS in turn, STRESS_BOOTS times, and drives the bench's workloads
# against it for STRESS_S seconds per boot. When L2 stops answering, L1
# records what KVM sees before killing the VMM: the debugfs exit counters
# over 2 s, a one-second kvm_exit trace summarized by reason and guest RIP
# (symbolize with the kernel's System.map on the host), and skiff's own
# counters through its control socket. QEMU runs the same load: a failure
# it shares points at the testbed (TCG's nested SVM), not at skiff.
# SLOW: run it by name. PASS when no boot failed. Link-local only.
TIMEOUT=3000
SLOW=1
PEERS=qemu

STRESS_VMS="skiff-trap skiff-ioeventfd qemu"
STRESS_BOOTS=3
STRESS_S=150
L1_IP=169.254.10.1
L2_IP=169.254.10.2
QUIT_PORT=9999
SOCK=/tmp/skiff.sock

stress_counters() {
	for f in /sys/kernel/debug/kvm/*; do
		[ -f "$f" ] && read -r v <"$f" 2>/dev/null && echo "${f##*/} $v"
	done
}

# stress_diagnose VMPID: what the stuck guest does, on L1's console.
stress_diagnose() {
	echo "stress: DIAG begin"
	stress_counters >/tmp/c0
	sleep 2
	stress_counters >/tmp/c1
	awk 'NR == FNR { a[$1] = $2; next } $2 - a[$1] != 0 { print "stress: DIAG kvm", $1, $2 - a[$1] }' \
		/tmp/c0 /tmp/c1
	t=/sys/kernel/tracing
	[ -e $t/trace ] || mount -t tracefs nodev $t 2>/dev/null
	if [ -e $t/events/kvm/kvm_exit/enable ]; then
		echo >$t/trace
		for e in kvm_exit kvm_inj_virq kvm_inj_exception kvm_msr kvm_pio kvm_mmio; do
			echo 1 >$t/events/kvm/$e/enable 2>/dev/null
		done
		sleep 1
		for e in kvm_exit kvm_inj_virq kvm_inj_exception kvm_msr kvm_pio kvm_mmio; do
			echo 0 >$t/events/kvm/$e/enable 2>/dev/null
		done
		sed -n 's/.*kvm_exit: \(.*\)/\1/p' $t/trace | awk '{ print $1, $2, $3, $4 }' |
			sort | uniq -c | sort -rn | head -n 15 | sed 's/^/stress: DIAG exit /'
		grep -v '^#' $t/trace | grep -v kvm_exit | awk '{ $1 = $2 = $3 = $4 = ""; print }' |
			sort | uniq -c | sort -rn | head -n 15 | sed 's/^/stress: DIAG other /'
		grep -v '^#' $t/trace | head -n 30 | sed 's/^/stress: DIAG raw /'
	else
		echo "stress: DIAG no kvm tracepoints"
	fi
	[ -S $SOCK ] && skiff stat $SOCK --once 2>&1 | head -n 40 | sed 's/^/stress: DIAG skiff /'
	echo "stress: DIAG end"
}

# stress_vm NAME: one boot under NAME with STRESS_S s of load. Appends to
# STRESS_BAD when L2 fails.
stress_vm() {
	name=$1
	case "$name" in
	skiff-trap) set -- skiff run --no-ioeventfd --api-sock $SOCK ;;
	skiff-ioeventfd) set -- skiff run --api-sock $SOCK ;;
	qemu)
		set -- qemu-system-x86_64 -M microvm,pcie=on -enable-kvm -cpu host \
			-m "$L2_MEM" -smp 1 -L /usr/share/qemu -nodefaults -no-user-config \
			-nographic -serial stdio -no-reboot \
			-kernel "$L2_KERNEL" -initrd "$L2_INITRD" -append "$L2_CMDLINE" \
			-netdev tap,id=n0,ifname=tap0,script=no,downscript=no,vhost=off \
			-device virtio-net-pci,netdev=n0,romfile=
		;;
	esac
	case "$name" in
	skiff*) set -- "$@" --kernel "$L2_KERNEL" --initrd "$L2_INITRD" --cmdline "$L2_CMDLINE" \
		--mem "$L2_MEM" --net tap=tap0 ;;
	esac
	rm -f /tmp/l2.log $SOCK
	ip neigh flush dev tap0 2>/dev/null
	"$@" </dev/null >/tmp/l2.log 2>/tmp/vmm.err &
	pid=$!
	i=0
	until grep -q "SKIFF-STRESS-L2: ready" /tmp/l2.log 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 1200 ] || ! kill -0 $pid 2>/dev/null; then
			STRESS_BAD="$STRESS_BAD [$name: not ready]"
			echo "stress: $name boot $2 not ready; $(tail -n 3 /tmp/vmm.err | tr '\n' ' ')"
			kill -9 $pid 2>/dev/null
			wait $pid
			return
		fi
		sleep 0.1
	done
	t_end=$(($(cut -d. -f1 /proc/uptime) + STRESS_S))
	n=0 why=
	while [ "$(cut -d. -f1 /proc/uptime)" -lt $t_end ]; do
		n=$((n + 1))
		timeout 40 iperf3 -c $L2_IP -R -t 3 >/dev/null 2>&1
		timeout 40 iperf3 -c $L2_IP -R -u -l 64 -b 0 -t 3 >/dev/null 2>&1
		timeout 40 iperf3 -c $L2_IP -t 3 >/dev/null 2>&1
		timeout 40 ping -c 20 -i 0.05 -W 2 $L2_IP >/dev/null 2>&1
		if ! kill -0 $pid 2>/dev/null; then
			why="VMM exited"
			break
		fi
		if ! ping -c 3 -W 5 $L2_IP >/dev/null 2>&1 && ! ping -c 3 -W 5 $L2_IP >/dev/null 2>&1; then
			why="L2 stopped answering"
			break
		fi
	done
	echo "stress: $name: $n load rounds${why:+, then $why}"
	if [ -n "$why" ]; then
		STRESS_BAD="$STRESS_BAD [$name: $why after $n rounds]"
		kill -0 $pid 2>/dev/null && stress_diagnose $pid
		echo "stress: $name vmm stderr: $(tail -n 5 /tmp/vmm.err | tr '\n' '|')"
		echo "stress: $name L2 console tail:"
		tail -n 15 /tmp/l2.log | sed 's/^/stress: L2| /'
		kill -9 $pid 2>/dev/null
	else
		nc -w 5 $L2_IP $QUIT_PORT </dev/null >/dev/null 2>&1
		i=0
		while kill -0 $pid 2>/dev/null && [ $i -lt 300 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -9 $pid 2>/dev/null
	fi
	wait $pid
	echo "stress: $name exit status $?"
}

l1() {
	tap_up "$L1_IP" || { fail "tap0 setup failed"; return; }
	STRESS_BAD=
	b=0
	while [ $b -lt $STRESS_BOOTS ]; do
		b=$((b + 1))
		for vm in $STRESS_VMS; do
			echo "stress: boot $b/$STRESS_BOOTS $vm"
			stress_vm "$vm" "$b"
		done
	done
	[ -z "$STRESS_BAD" ] || { fail "$STRESS_BAD"; return; }
	pass
}

l2() {
	wait_for /sys/class/net/eth0 || echo "stress: L2 has no eth0"
	ip addr add "$L2_IP/24" dev eth0 && ip link set eth0 up
	iperf3 -s -D >/dev/null 2>&1
	echo "SKIFF-STRESS-L2: ready"
	timeout 2400 nc -l -p "$QUIT_PORT" </dev/null >/dev/null 2>&1
}
