# SPDX-License-Identifier: Apache-2.0
# A snapshot round trip of a multi-queue virtio-net card (issue 34.1), on
# net-mq's multi_queue tap0 and helpers (SCENARIO_BASE: its file is read
# first, in L1 and L2 too). Twice, with the built-in data path and with
# vhost=on: L1 configures `skiff run --api-sock` with 2 vCPUs and one card
# (a pair per vCPU: Linux enables both at probe, VQ_PAIRS_SET 2), L2 pings
# L1 and then waits, pinging 169.254.14.3, which L1 adds to tap0 only once
# the guest is restored: L1 pauses it, snapshots, SIGKILLs skiff, loads
# the snapshot in a fresh one (refused before: "multi-queue pairs
# enabled"). Then L2 sends an iperf3 stream pinned to CPU 1, whose packets
# must raise pair 1's interrupts both ways (input.1, output.1: the
# restored card serves pair 1 and its tap queue is attached), and rebinds
# the driver (a reset of the restored card; the new driver enables pair 1
# again) for one more stream on CPU 1. SLOW: the default suite's bounds
# are full (tb_bounds_budget).
SCENARIO_BASE=net-mq
SLOW=1
TIMEOUT=300
L1_EXTRA_FILES="/usr/bin/curl"
EXPECT="SKIFF-L2: init
snapshot-mq: user restored
snapshot-mq: vhost restored"

SMQ_GO=169.254.14.3
SMQ_STATE=/tmp/smq.state
SMQ_MEM=/tmp/smq.mem

# smq_pass MODE SKIFF_OPTIONS: boot, snapshot, kill, load, check.
smq_pass() {
	SMQ_WHY=""
	api_boot /tmp/smq1.sock || { SMQ_WHY="no API socket"; return 1; }
	api_want /tmp/smq1.sock PUT /boot-source "{\"kernel_image_path\": \"$L2_KERNEL\", \"initrd_path\": \"$L2_INITRD\", \"boot_args\": \"console=ttyS0 reboot=k panic=1 quiet\"}" 204 &&
		api_want /tmp/smq1.sock PUT /network-interfaces/eth0 "{\"iface_id\": \"eth0\", \"host_dev_name\": \"tap0\", \"skiff_options\": \"$2\"}" 204 &&
		api_want /tmp/smq1.sock PUT /machine-config '{"vcpu_count": 2, "mem_size_mib": 256}' 204 &&
		api_want /tmp/smq1.sock PUT /actions '{"action_type": "InstanceStart"}' 204 ||
		{ SMQ_WHY="configuration refused"; return 1; }
	i=0
	while ! l2_saw "SKIFF-L2-MARK smq-ready" && [ $i -lt 900 ]; do
		sleep 0.2
		i=$((i + 1))
	done
	l2_saw "SKIFF-L2-MARK smq-ready" && [ -z "$(mq_l2_value bad)" ] ||
		{ SMQ_WHY="L2 not ready: $(mq_l2_value bad)"; return 1; }
	: >"$SMQ_STATE" && : >"$SMQ_MEM"
	api_want /tmp/smq1.sock PATCH /vm '{"state": "Paused"}' 204 &&
		api_want /tmp/smq1.sock PUT /snapshot/create "{\"snapshot_type\": \"Full\", \"snapshot_path\": \"$SMQ_STATE\", \"mem_file_path\": \"$SMQ_MEM\"}" 204 ||
		{ SMQ_WHY="snapshot refused"; return 1; }
	kill -KILL "$(pidof skiff)"
	wait "$boot_pid"
	api_boot /tmp/smq2.sock || { SMQ_WHY="no API socket for the load"; return 1; }
	api_want /tmp/smq2.sock PUT /snapshot/load "{\"snapshot_path\": \"$SMQ_STATE\", \"mem_backend\": {\"backend_type\": \"File\", \"backend_path\": \"$SMQ_MEM\"}, \"resume_vm\": true}" 204 ||
		{ SMQ_WHY="load refused: $(tail -n 3 /tmp/vmm.err)"; return 1; }
	ip addr add "$SMQ_GO/24" dev tap0
	wait "$boot_pid" # L2 powers off when done
	ip addr del "$SMQ_GO/24" dev tap0
	l2_saw "SKIFF-L2-MARK mq-done" || { SMQ_WHY="L2 did not finish after the load (skiff exited $(cat /tmp/vmm.rc))"; return 1; }
	! grep -q '^SKIFF-L2: init' /tmp/l2.log || { SMQ_WHY="L2 booted again"; return 1; }
	bad=$(mq_l2_value bad)
	[ -z "$bad" ] || { SMQ_WHY="L2 says: $bad"; return 1; }
	[ "$(cat /tmp/vmm.rc)" = 0 ] || { SMQ_WHY="the restored skiff exited $(cat /tmp/vmm.rc)"; return 1; }
	echo "snapshot-mq: $1 restored"
}

l1() {
	{ ip tuntap add tap0 mode tap multi_queue && ip addr add "$MQ_L1/24" dev tap0 &&
		ip link set tap0 up; } || { fail "tap0 (multi_queue) setup failed"; return; }
	iperf3 -s -p 5202 >/tmp/iperf3-b.log 2>&1 &
	for m in user vhost; do
		o=""
		[ $m = user ] || o="vhost=on"
		if ! smq_pass "$m" "$o"; then
			fail "$m: $SMQ_WHY"
			tail -n 20 /tmp/vmm.err
			kill -KILL "$(pidof skiff)" 2>/dev/null
			killall iperf3 2>/dev/null
			return
		fi
	done
	killall iperf3 2>/dev/null
	pass
}

# ---- L2 ----

# smq_stream: an iperf3 stream pinned to CPU 1 raises pair 1's interrupts
# both ways; "" or what went wrong.
smq_stream() {
	i1=$(mq_irqs input.1) o1=$(mq_irqs output.1)
	iperf3 -c "$MQ_L1" -p 5202 -A 1 -t 2 >/dev/null 2>&1 || echo "[iperf3 on CPU 1 $1]"
	echo "snapshot-mq: $1: input.1 $i1 -> $(mq_irqs input.1), output.1 $o1 -> $(mq_irqs output.1)" >&2
	[ "$(mq_irqs input.1)" -gt "$i1" ] && [ "$(mq_irqs output.1)" -gt "$o1" ] ||
		echo "[pair 1 idle $1]"
}

l2() {
	bad=""
	[ "$(mq_count /sys/class/net/eth0/queues/rx-*)" = 2 ] || bad="$bad [not 2 queue pairs]"
	ip addr add "$MQ_L2/24" dev eth0 && ip link set eth0 up &&
		ping -c 3 -i 0.2 -W 5 "$MQ_L1" >/dev/null 2>&1 || bad="$bad [eth0 setup or ping failed]"
	[ -z "$bad" ] || echo "SKIFF-L2-MARK bad=$bad"
	echo "SKIFF-L2-MARK smq-ready"
	# Until L1 says the guest was restored (bounded: 200 s).
	k=0
	until ping -c 1 -W 1 "$SMQ_GO" >/dev/null 2>&1 || [ $k -ge 200 ]; do k=$((k + 1)); done
	echo "SKIFF-L2-MARK smq-go after $k pings"
	bad="$bad$(smq_stream "after the load")"
	if mq_rebind; then
		bad="$bad$(smq_stream "after the rebind")"
	else
		bad="$bad [driver rebind failed]"
	fi
	[ -z "$bad" ] || echo "SKIFF-L2-MARK bad=$bad"
	echo "SKIFF-L2-MARK mq-done"
}
