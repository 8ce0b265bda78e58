# SPDX-License-Identifier: Apache-2.0
# skiff jailed (issue 36): in L1, skiff-jailer starts the static skiff as
# UID 1000 in /srv/jailer/skiff-static/jail1/root, in a cgroup v2 leaf
# with memory.max and pids.max, on a tap owned by UID 1000. curl
# configures it through the API socket inside the jail (every path is the
# jail's: the kernel, initrd and disk are copied in, as a caller of
# Firecracker's jailer does); L2 boots with a disk and a network and L1
# pings it. From L1: the process runs as 1000:1000 with no groups, no
# capabilities and no_new_privs; its root and cwd are the jail; it is in
# the cgroup; a host file is not reachable from its root. SendCtrlAltDel
# ends it; no jail mount is left in L1's namespace; the jail and the
# cgroup are removed as a caller does. Bad arguments: one line, exit 2,
# nothing made. In the default set (quick: one boot).
TIMEOUT=120
L1_EXTRA_FILES="/usr/bin/curl"
EXPECT="SKIFF-L2: init
SKIFF-L2-MARK jail up"

JL_L1=169.254.30.1
JL_L2=169.254.30.2
JL_BASE=/srv/jailer
JL_ROOT=/srv/jailer/skiff-static/jail1/root
JL_SOCK=/srv/jailer/skiff-static/jail1/root/api.sock
JL_CG=/sys/fs/cgroup/skiff/jail1

# jl_want METHOD PATH JSON WANT: one API request, whose status must be WANT.
jl_want() {
	code=$(/usr/bin/curl -s -o /tmp/jl.body -w '%{http_code}' -X "$1" --unix-socket "$JL_SOCK" \
		-H 'Content-Type: application/json' -d "$3" "http://localhost$2")
	echo "jail: $1 $2 -> $code $(cat /tmp/jl.body 2>/dev/null)"
	[ "$code" = "$4" ]
}

# jl_status KEY: a line of the jailed skiff's /proc status, tabs as spaces.
jl_status() {
	sed -n "s/^$1:[[:space:]]*//p" "/proc/$JL_PID/status" | tr '\t' ' '
}

# Bad arguments leave nothing behind.
jl_bad_args() {
	/usr/bin/skiff-jailer --id ../x --exec-file /usr/bin/skiff-static --uid 1000 --gid 1000 \
		2>/tmp/jl.err
	rc=$?
	[ "$rc" = 2 ] && [ "$(wc -l </tmp/jl.err)" = 1 ] && grep -q "invalid --id" /tmp/jl.err &&
		[ ! -e "$JL_BASE" ] && [ ! -e /sys/fs/cgroup/skiff ]
}

jl_setup() {
	grep -q " /sys/fs/cgroup cgroup2 " /proc/mounts ||
		{ mkdir -p /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup; } || return 1
	# A persistent tap of UID 1000's: attached without CAP_NET_ADMIN.
	ip tuntap add tap0 mode tap user 1000 && ip addr add "$JL_L1/24" dev tap0 &&
		ip link set tap0 up
}

# Starts the jail and waits for skiff's socket; the VM's files go in.
jl_start() {
	(vmm_boot_l2 /usr/bin/skiff-jailer --id jail1 --exec-file /usr/bin/skiff-static \
		--uid 1000 --gid 1000 --chroot-base-dir "$JL_BASE" --cgroup-version 2 \
		--cgroup memory.max=768M --cgroup pids.max=64 --resource-limit no-file=1024 \
		-- run --api-sock /api.sock) &
	boot_pid=$!
	i=0
	while [ ! -S "$JL_SOCK" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -S "$JL_SOCK" ] || return 1
	JL_PID=$(pidof skiff-static)
	cp "$L2_KERNEL" "$JL_ROOT/vmlinuz" && cp "$L2_INITRD" "$JL_ROOT/initrd.gz" &&
		truncate -s 8M "$JL_ROOT/rootfs.img" && chown 1000:1000 "$JL_ROOT/rootfs.img"
}

jl_boot() {
	jl_want PUT /boot-source '{"kernel_image_path": "/vmlinuz", "initrd_path": "/initrd.gz", "boot_args": "console=ttyS0 reboot=k panic=1 pci=off quiet"}' 204 &&
		jl_want PUT /drives/rootfs '{"drive_id": "rootfs", "path_on_host": "/rootfs.img", "is_root_device": true, "is_read_only": false}' 204 &&
		jl_want PUT /network-interfaces/net1 '{"iface_id": "net1", "guest_mac": "06:00:AC:10:00:03", "host_dev_name": "tap0"}' 204 &&
		jl_want PUT /machine-config '{"vcpu_count": 1, "mem_size_mib": 256}' 204 &&
		jl_want PUT /actions '{"action_type": "InstanceStart"}' 204 || return 1
	i=0
	while [ $i -lt 900 ] && ! grep -q "^SKIFF-L2-MARK jail up" /tmp/l2.log 2>/dev/null; do
		sleep 0.2
		i=$((i + 1))
	done
	grep -q "^SKIFF-L2-MARK jail up" /tmp/l2.log && ping -c 3 -W 2 "$JL_L2" >/dev/null
}

# What L1 sees of the jailed process.
jl_checks() {
	echo "jail: pid $JL_PID Uid $(jl_status Uid) Gid $(jl_status Gid) Groups '$(jl_status Groups)' CapEff $(jl_status CapEff) NoNewPrivs $(jl_status NoNewPrivs)"
	echo "jail: cgroup $(cat "/proc/$JL_PID/cgroup"); root holds: $(echo "/proc/$JL_PID/root/"*)"
	[ "$(jl_status Uid)" = "1000 1000 1000 1000" ] || { JL_WHY="not UID 1000"; return 1; }
	[ "$(jl_status Gid)" = "1000 1000 1000 1000" ] || { JL_WHY="not GID 1000"; return 1; }
	[ -z "$(jl_status Groups | tr -d ' ')" ] || { JL_WHY="supplementary groups left"; return 1; }
	for c in CapInh CapPrm CapEff CapAmb; do
		[ "$(jl_status $c)" = 0000000000000000 ] || { JL_WHY="$c is $(jl_status $c)"; return 1; }
	done
	[ "$(jl_status NoNewPrivs)" = 1 ] || { JL_WHY="no_new_privs is off"; return 1; }
	grep -qx "0::/skiff/jail1" "/proc/$JL_PID/cgroup" || { JL_WHY="not in the cgroup"; return 1; }
	grep -qx "$JL_PID" "$JL_CG/cgroup.procs" || { JL_WHY="cgroup.procs lacks it"; return 1; }
	[ "$(cat "$JL_CG/memory.max")" = $((768 << 20)) ] || { JL_WHY="memory.max not set"; return 1; }
	[ "$(cat "$JL_CG/pids.max")" = 64 ] || { JL_WHY="pids.max not set"; return 1; }
	# Its root and cwd are the jail's directory (same inode), not L1's /.
	want=$(stat -L -c %d:%i "$JL_ROOT")
	[ "$(stat -L -c %d:%i "/proc/$JL_PID/root/")" = "$want" ] &&
		[ "$(stat -L -c %d:%i "/proc/$JL_PID/cwd/")" = "$want" ] ||
		{ JL_WHY="its root is not the jail"; return 1; }
	# A host file: not there through its root (its only way to a path).
	echo secret >/tmp/jl-host-only
	[ ! -e "/proc/$JL_PID/root/tmp/jl-host-only" ] && [ ! -e "/proc/$JL_PID/root/bin/sh" ] &&
		[ ! -e "/proc/$JL_PID/root/proc/self" ] || { JL_WHY="a host path is reachable"; return 1; }
	d=/proc/$JL_PID/root/dev
	[ "$(echo "$d/"* "$d/net/"*)" = "$d/kvm $d/net $d/net/tun" ] ||
		{ JL_WHY="/dev holds more than kvm and net/tun"; return 1; }
}

jl_stop() {
	if jl_want PUT /actions '{"action_type": "SendCtrlAltDel"}' 204; then
		wait "$boot_pid"
	else
		kill "$JL_PID" 2>/dev/null
		wait "$boot_pid"
	fi
	rc=$(cat /tmp/vmm.rc 2>/dev/null)
	[ "$rc" = 0 ] || { JL_WHY="skiff exited '$rc'"; return 1; }
	if grep -q "$JL_BASE" /proc/self/mountinfo; then
		JL_WHY="a jail mount is left in L1's namespace"
		return 1
	fi
	# The caller's cleanup (SECURITY.md): the directory, then the cgroup.
	rm -rf "$JL_BASE/skiff-static/jail1" && rmdir "$JL_CG" ||
		{ JL_WHY="the jail or its cgroup could not be removed"; return 1; }
}

l1() {
	jl_bad_args || { fail "bad arguments: status $rc, $(cat /tmp/jl.err)"; return; }
	jl_setup || { fail "cgroup2 or tap0 setup failed"; return; }
	if ! jl_start; then
		fail "the jailed skiff made no API socket: $(cat /tmp/vmm.err)"
		return
	fi
	JL_WHY=""
	if ! jl_boot; then
		JL_WHY="the jailed boot or the ping failed"
	else
		jl_checks
	fi
	BAD=$JL_WHY
	JL_WHY=""
	jl_stop || BAD="$BAD [exit: $JL_WHY]"
	if [ -n "$BAD" ]; then fail "$BAD; skiff said: $(tail -n 3 /tmp/vmm.err | tr '\n' ' ')"; else pass; fi
}

l2() {
	wait_for /sys/class/net/eth0 && wait_for /dev/vda || { fail "L2 lacks eth0 or vda"; return; }
	ip addr add "$JL_L2/24" dev eth0 && ip link set eth0 up || { fail "eth0 setup failed"; return; }
	echo "SKIFF-L2-MARK jail up"
	i=0
	while [ $i -lt 1200 ]; do
		sleep 0.5
		i=$((i + 1))
	done
}
