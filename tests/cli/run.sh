#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Host-side command-line tests: bad input must give exactly one line on
# stderr and exit status 2, before any guest runs (so these need no usable
# KVM). Prints "cli: N passed, N failed". Every command runs under a bound
# (SKIFF_CLI_TIMEOUT_S, default 30 s; each takes well under a second): a
# hang fails as "FAIL CMD: timed out after N s". tests/cli/runners.sh,
# run last, checks that the runners' bounds work.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
# shellcheck source=tests/timeout.sh
. tests/timeout.sh
CLI_SECS=${SKIFF_CLI_TIMEOUT_S:-30}
SKIFF=${SKIFF:-build/skiff}
KERNEL=$(find .cache/kernel/boot -name "vmlinuz-*" 2>/dev/null | sort | head -n1)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

# expect STATUS PATTERN -- ARGS...: skiff exits STATUS with one stderr line
# matching PATTERN.
expect() {
	local want=$1 pat=$2
	shift 3
	bounded "$1" "$CLI_SECS" "$@" >"$T/out" 2>"$T/err" </dev/null
	local rc=$? lines
	lines=$(wc -l <"$T/err")
	if [ "$rc" -eq 124 ]; then
		fail=$((fail + 1))
		echo "FAIL $(cut -c1-100 <<<"$*"): timed out after $CLI_SECS s"
	elif [ "$rc" -eq "$want" ] && [ "$lines" -eq 1 ] && grep -qE "$pat" "$T/err"; then
		pass=$((pass + 1))
		echo "ok   $(cut -c1-100 <<<"$*") -> $rc: $(cut -c1-100 "$T/err")"
	else
		fail=$((fail + 1))
		echo "FAIL $(cut -c1-100 <<<"$*") -> status $rc (want $want), $lines stderr lines:"
		sed 's/^/     /' "$T/err"
	fi
}

head -c 4096 /dev/urandom >"$T/notkernel"
expect 2 "cannot open kernel" -- "$SKIFF" run --kernel "$T/missing"
expect 2 "not a bzImage" -- "$SKIFF" run --kernel "$T/notkernel"
expect 2 "not a regular file" -- "$SKIFF" run --kernel "$T"
expect 2 "invalid --mem" -- "$SKIFF" run --kernel "$T/notkernel" --mem 0
expect 2 "invalid --mem" -- "$SKIFF" run --kernel "$T/notkernel" --mem 12Q
expect 2 "invalid --cpus" -- "$SKIFF" run --kernel "$T/notkernel" --cpus 0
expect 2 "invalid --cpus" -- "$SKIFF" run --kernel "$T/notkernel" --cpus 1000
expect 2 "unknown option" -- "$SKIFF" run --kernel "$T/notkernel" --frobnicate
# The dedicated-CPU mode's options (issue 38): told before the kernel is read.
expect 2 "invalid --cpus '2,pin=': empty CPU list" -- "$SKIFF" run --kernel "$T/notkernel" --cpus 2,pin=
expect 2 "invalid --cpus .*listed twice" -- "$SKIFF" run --kernel "$T/notkernel" --cpus 2,pin=0,0
expect 2 "invalid --cpus .*2 vCPUs but 1 host CPU" -- "$SKIFF" run --kernel "$T/notkernel" --cpus 2,pin=0
expect 2 "invalid --cpus .*not one this process may run on" -- \
	"$SKIFF" run --kernel "$T/notkernel" --cpus 1,pin=1023
expect 2 "invalid --iothreads .*bad CPU list" -- "$SKIFF" run --kernel "$T/notkernel" --iothreads 1,pin=0-
expect 2 "invalid --halt-poll" -- "$SKIFF" run --kernel "$T/notkernel" --halt-poll -1
expect 2 "invalid --cpu-pm 'yes'" -- "$SKIFF" run --kernel "$T/notkernel" --cpu-pm yes
expect 2 "invalid --unpack" -- "$SKIFF" run --kernel "$T/notkernel" --unpack sideways
expect 2 "invalid --console-filter 'pretty': use safe, off or caret" -- "$SKIFF" run --kernel "$T/notkernel" --console-filter pretty
expect 2 "invalid --iothreads '0': use 1 to 8" -- "$SKIFF" run --kernel "$T/notkernel" --iothreads 0
expect 2 "invalid --iothreads '9': use 1 to 8" -- "$SKIFF" run --kernel "$T/notkernel" --iothreads 9
expect 2 "invalid --iothreads 'abc': use 1 to 8" -- "$SKIFF" run --kernel "$T/notkernel" --iothreads abc
expect 2 "needs a value" -- "$SKIFF" run --kernel "$T/notkernel" --iothreads
# Issue 35.4: --log-level. A warning the command line can cause without
# KVM (SKIFF_SECCOMP_TEST naming no thread, read before the kernel is):
# shown at info, the default, hidden at error; a bad level is bad input.
expect 2 "invalid --log-level 'loud': use error, warn, info or debug" -- "$SKIFF" run --kernel "$T/notkernel" --log-level loud
expect 2 "not a bzImage" -- env SKIFF_SECCOMP_TEST=nosuchrole:x "$SKIFF" run --kernel "$T/notkernel" --log-level error
bounded skiff "$CLI_SECS" env SKIFF_SECCOMP_TEST=nosuchrole:x "$SKIFF" run --kernel "$T/notkernel" \
	--log-level info >/dev/null 2>"$T/err" </dev/null
if [ "$(grep -c 'seccomp test: ignoring SKIFF_SECCOMP_TEST=nosuchrole:x' "$T/err")" = 1 ] &&
	grep -q "not a bzImage" "$T/err"; then
	pass=$((pass + 1))
	echo "ok   --log-level info shows the warning --log-level error hides"
else
	fail=$((fail + 1))
	echo "FAIL --log-level info: want the seccomp test warning and the error:"
	sed 's/^/     /' "$T/err"
fi
expect 2 "needs a value" -- "$SKIFF" run --kernel
expect 2 "no kernel" -- "$SKIFF" run
expect 2 "unknown command" -- "$SKIFF" frobnicate
expect 2 "no command" -- "$SKIFF"
# --config-file (Firecracker's JSON) and --no-api: bad files are bad input.
expect 2 "no-api needs --config-file" -- "$SKIFF" run --no-api
expect 2 "exclude each other" -- "$SKIFF" run --no-api --config-file "$T/x.json" --api-sock "$T/a.sock"
expect 2 "exclude each other" -- "$SKIFF" run --config-file "$T/x.json" --kernel "$T/notkernel"
expect 2 "cannot open --config-file .*missing.json" -- "$SKIFF" run --no-api --config-file "$T/missing.json"
printf '{"boot-source": {"kernel_image_path": "%s"},' "$T/notkernel" >"$T/trunc.json"
expect 2 "invalid --config-file .*trunc.json" -- "$SKIFF" run --no-api --config-file "$T/trunc.json"
# Issue 32.3: as Firecracker's VmmConfig, unknown top-level keys are
# ignored (the start goes on to the kernel), null is an absent optional
# section, drives is required and duplicate keys are refused.
printf '{"boot-source": {"kernel_image_path": "%s"}, "drives": [], "frob": 1, "logger": null}' "$T/notkernel" >"$T/unknown.json"
expect 2 "not a bzImage" -- "$SKIFF" run --no-api --config-file "$T/unknown.json"
printf '{"boot-source": {"kernel_image_path": "%s"}}' "$T/notkernel" >"$T/nodrives.json"
expect 2 "missing field .drives." -- "$SKIFF" run --no-api --config-file "$T/nodrives.json"
printf '{"boot-source": {"kernel_image_path": "%s"}, "drives": [], "drives": []}' "$T/notkernel" >"$T/dup.json"
expect 2 "duplicate field .drives." -- "$SKIFF" run --no-api --config-file "$T/dup.json"
# Issue 33.1: the config file's vsock is --vsock's, checked before any VM.
printf '{"boot-source": {"kernel_image_path": "%s"}, "drives": [], "vsock": {"guest_cid": 3}}' "$T/notkernel" >"$T/vsock.json"
expect 2 "vsock: missing field .uds_path." -- "$SKIFF" run --no-api --config-file "$T/vsock.json"
printf '{"boot-source": {"kernel_image_path": "%s"}, "drives": [], "vsock": {"guest_cid": 2, "uds_path": "%s"}}' "$T/notkernel" "$T/v.sock" >"$T/vsock2.json"
expect 2 "vsock: Cannot create backend for vsock device: .*invalid cid=2" -- "$SKIFF" run --no-api --config-file "$T/vsock2.json"
printf '{"boot-source": {"kernel_image_path": "%s"}, "drives": [], "vsock": {"vsock_id": "v", "guest_cid": 3, "uds_path": "%s"}}' "$T/notkernel" "$T/v.sock" >"$T/vsock3.json"
expect 2 "not a bzImage" -- "$SKIFF" run --no-api --config-file "$T/vsock3.json"
# backend=vhost (skiff_options): no uds_path; checked, then the kernel.
printf '{"boot-source": {"kernel_image_path": "%s"}, "drives": [], "vsock": {"guest_cid": 3, "skiff_options": "backend=vhost"}}' "$T/notkernel" >"$T/vsock4.json"
expect 2 "not a bzImage" -- "$SKIFF" run --no-api --config-file "$T/vsock4.json"
printf '{"boot-source": {"kernel_image_path": "%s"}, "drives": [], "vsock": {"guest_cid": 3, "skiff_options": "backend=hybrid"}}' "$T/notkernel" >"$T/vsock5.json"
expect 2 "vsock: Cannot create backend for vsock device: .*uds=PATH is required" -- "$SKIFF" run --no-api --config-file "$T/vsock5.json"
expect 2 "backend=vhost needs ioeventfd kicks" -- "$SKIFF" run --kernel "$T/notkernel" --no-ioeventfd --vsock cid=3,backend=vhost
expect 2 "invalid cid=4294967295" -- "$SKIFF" run --kernel "$T/notkernel" --vsock cid=4294967295,backend=vhost
printf '{"boot-source": {"kernel_image_path": "%s"}, "drives": [], "mmds-config": {}}' "$T/notkernel" >"$T/mmds.json"
expect 2 "mmds-config: The requested operation is not supported" -- "$SKIFF" run --no-api --config-file "$T/mmds.json"
printf '{"boot-source": {"kernel_image_path": "%s", "initrd": "x"}}' "$T/notkernel" >"$T/field.json"
expect 2 "boot-source: unknown field .initrd." -- "$SKIFF" run --no-api --config-file "$T/field.json"
printf '{"boot-source": {"kernel_image_path": "%s"}, "machine-config": {"vcpu_count": "2", "mem_size_mib": 128}}' "$T/notkernel" >"$T/type.json"
expect 2 "machine-config: invalid type: string, expected u8" -- "$SKIFF" run --no-api --config-file "$T/type.json"
printf '[]' >"$T/array.json"
expect 2 "invalid type: sequence, expected a map" -- "$SKIFF" run --no-api --config-file "$T/array.json"
printf '{"drives": []}' >"$T/noboot.json"
expect 2 "missing field .boot-source." -- "$SKIFF" run --no-api --config-file "$T/noboot.json"
printf '{"boot-source": {"kernel_image_path": "%s"}, "drives": [{"drive_id": "root", "path_on_host": "%s", "is_root_device": true, "is_read_only": false, "skiff_options": "poll=sometimes"}]}' "$T/notkernel" "$T/notkernel" >"$T/badopt.json"
expect 2 "invalid poll=sometimes" -- "$SKIFF" run --no-api --config-file "$T/badopt.json"
printf '{"boot-source": {"kernel_image_path": "%s"}, "drives": []}' "$T/notkernel" >"$T/notkernel.json"
expect 2 "not a bzImage" -- "$SKIFF" run --no-api --config-file "$T/notkernel.json"

# --vfio-pci is checked while parsing: no VM, no kernel needed.
expect 2 "malformed PCI address" -- "$SKIFF" run --kernel "$T/notkernel" --vfio-pci 0000:zz:00.0
expect 2 "malformed PCI address" -- "$SKIFF" run --kernel "$T/notkernel" --vfio-pci 00:1f.8
expect 2 "malformed PCI address" -- "$SKIFF" run --kernel "$T/notkernel" --vfio-pci ",mmap=on"
expect 2 "no PCI device 0000:7f:1f.7" -- "$SKIFF" run --kernel "$T/notkernel" --vfio-pci 7f:1f.7
expect 2 "invalid mmap=1 \(use on or off\)" -- "$SKIFF" run --kernel "$T/notkernel" --vfio-pci "00:00.0,mmap=1"
# A device the host has: without an IOMMU it has no group; with one it is
# not bound to vfio-pci here, or there is no vfio module.
dev=$(find /sys/bus/pci/devices -mindepth 1 -maxdepth 1 -printf "%f\n" 2>/dev/null | sort | head -n1)
if [ -n "$dev" ]; then
	expect 2 "no IOMMU group|not bound to vfio-pci|bound to .*, not vfio-pci|no /dev/vfio/vfio" -- \
		"$SKIFF" run --kernel "$T/notkernel" --vfio-pci "$dev"
fi
if [ -n "$KERNEL" ]; then
	head -c 4096 "$KERNEL" >"$T/truncated"
	head -c $(($(stat -c %s "$KERNEL") - 100000)) "$KERNEL" >"$T/truncated2"
	truncate -s 160M "$T/bigrd"
	expect 2 "truncated bzImage" -- "$SKIFF" run --kernel "$T/truncated"
	expect 2 "truncated bzImage" -- "$SKIFF" run --kernel "$T/truncated2"
	expect 2 "initrd .* does not fit" -- "$SKIFF" run --kernel "$KERNEL" --initrd "$T/bigrd" --mem 128M
	expect 2 "cannot open initrd" -- "$SKIFF" run --kernel "$KERNEL" --initrd "$T/missing"
	expect 2 "too small for the kernel" -- "$SKIFF" run --kernel "$KERNEL" --mem 16M
	expect 2 "cannot write --stats-json" -- "$SKIFF" run --kernel "$KERNEL" --stats-json "$T/no/such/dir/s.json"
	expect 2 "cannot listen on" -- "$SKIFF" run --kernel "$KERNEL" --api-sock "$T/no/such/dir/api.sock"
	echo keep >"$T/not-a-socket"
	expect 2 "exists and is not a socket" -- "$SKIFF" run --kernel "$KERNEL" --api-sock "$T/not-a-socket"
	grep -q keep "$T/not-a-socket" || {
		fail=$((fail + 1))
		echo "FAIL --api-sock replaced a regular file"
	}
	expect 2 "command line too long" -- "$SKIFF" run --kernel "$KERNEL" --cmdline "$(head -c 5000 /dev/zero | tr '\0' a)"
	# Disk options are checked when the disk is attached (after the VM
	# exists, before any guest code runs).
	truncate -s 1M "$T/disk.img"
	expect 2 "invalid poll=sometimes" -- "$SKIFF" run --kernel "$KERNEL" --disk "$T/disk.img,poll=sometimes"
	expect 2 "invalid poll-idle=x" -- "$SKIFF" run --kernel "$KERNEL" --iothreads 2 --disk "$T/disk.img,poll=adaptive,poll-idle=x"
	expect 2 "poll= needs ioeventfd" -- "$SKIFF" run --kernel "$KERNEL" --no-ioeventfd --disk "$T/disk.img,poll=always"
	# No access to /dev/kvm: an unprivileged user (the device is root-only
	# here; on hosts where it is world-accessible this check is skipped).
	if [ "$(id -u)" = 0 ] && ! setpriv --reuid=65534 --regid=65534 --clear-groups test -w /dev/kvm 2>/dev/null &&
		setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$KERNEL"; then
		expect 2 "cannot open /dev/kvm" -- setpriv --reuid=65534 --regid=65534 --clear-groups "$SKIFF" run --kernel "$KERNEL"
		expect 2 "cannot open /dev/kvm" -- setpriv --reuid=65534 --regid=65534 --clear-groups "$SKIFF" probe
	fi
else
	echo "note: no cached kernel (.cache/kernel); kernel-based checks skipped"
fi
# skiff-jailer (issue 36): bad arguments are one line, exit 2, and leave
# nothing in the chroot base; as root, a static busybox runs jailed as the
# uid, in its chroot with only its device nodes, and the jail is not reused.
JAILER=${JAILER:-build/skiff-jailer}
BB=$(command -v busybox || true)
if [ -x "$JAILER" ]; then
	J=$T/jails
	mkdir -p "$J"
	jl() { "$JAILER" --chroot-base-dir "$J" "$@"; }
	# jail_verdict OK DESC: a check of a jailed run (its status in rc, its
	# output in jail.out and jail.err) passes when OK is 0; a failure
	# shows the run.
	jail_verdict() {
		if [ "$1" = 0 ]; then
			pass=$((pass + 1))
			echo "ok   skiff-jailer: $2"
		else
			fail=$((fail + 1))
			echo "FAIL skiff-jailer: $2: status $rc, output:"
			sed 's/^/     /' "$T/jail.out" "$T/jail.err"
		fi
	}
	expect 2 "missing --uid" -- "$JAILER" --chroot-base-dir "$J" --id vm1 --exec-file /bin/true --gid 1000
	expect 2 "invalid --id" -- "$JAILER" --chroot-base-dir "$J" --id ../vm1 --exec-file /bin/true --uid 1000 --gid 1000
	expect 2 "invalid --exec-file" -- "$JAILER" --chroot-base-dir "$J" --id vm1 --exec-file true --uid 1000 --gid 1000
	# A quoted argument's newline stays out of the one line (review 11).
	expect 2 "invalid --id 'vm1\?skiff-jailer: ok'" -- "$JAILER" --chroot-base-dir "$J" --id $'vm1\nskiff-jailer: ok' --exec-file /bin/true --uid 1000 --gid 1000
	expect 2 "invalid --uid '0'" -- "$JAILER" --chroot-base-dir "$J" --id vm1 --exec-file /bin/true --uid 0 --gid 1000
	expect 2 "invalid --cgroup" -- "$JAILER" --chroot-base-dir "$J" --id vm1 --exec-file /bin/true --uid 1000 --gid 1000 --cgroup ../../cgroup.procs=1
	expect 2 "invalid --resource-limit" -- "$JAILER" --chroot-base-dir "$J" --id vm1 --exec-file /bin/true --uid 1000 --gid 1000 --resource-limit cpu=1
	expect 2 "invalid --chroot-base-dir" -- "$JAILER" --chroot-base-dir rel --id vm1 --exec-file /bin/true --uid 1000 --gid 1000
	expect 2 "cannot open --exec-file" -- "$JAILER" --chroot-base-dir "$J" --id vm1 --exec-file "$T/missing" --uid 1000 --gid 1000
	expect 2 "dynamically linked" -- "$JAILER" --chroot-base-dir "$J" --id vm1 --exec-file "$(pwd)/build/skiff" --uid 1000 --gid 1000
	expect 2 "cannot open --netns" -- "$JAILER" --chroot-base-dir "$J" --id vm1 --exec-file "$(pwd)/build/skiff-static" --uid 1000 --gid 1000 --netns "$T/nons"
	# A FIFO named as the exec file or the netns hung the root jailer in
	# open(2); a file that is no network namespace was found only at
	# setns, after the jail was made (review 11).
	mkfifo "$T/fifo"
	echo "not a namespace" >"$T/notns"
	expect 2 "exec-file .*is not a regular file" -- "$JAILER" --chroot-base-dir "$J" --id vm1 --exec-file "$T/fifo" --uid 1000 --gid 1000
	expect 2 "netns .*is not a network namespace" -- "$JAILER" --chroot-base-dir "$J" --id vm1 --exec-file "$(pwd)/build/skiff-static" --uid 1000 --gid 1000 --netns "$T/fifo"
	expect 2 "netns .*is not a network namespace" -- "$JAILER" --chroot-base-dir "$J" --id vm1 --exec-file "$(pwd)/build/skiff-static" --uid 1000 --gid 1000 --netns "$T/notns"
	expect 2 "netns .*is not a network namespace" -- "$JAILER" --chroot-base-dir "$J" --id vm1 --exec-file "$(pwd)/build/skiff-static" --uid 1000 --gid 1000 --netns /proc/self/ns/mnt
	# The cgroup root from the environment must be cgroup v2: the root
	# jailer wrote the values into any directory it named (review 3).
	mkdir -p "$T/cgfake"
	expect 2 "not a cgroup v2 file system" -- env SKIFF_JAILER_CGROUP_ROOT="$T/cgfake" "$JAILER" --chroot-base-dir "$J" --id vm1 --exec-file "$(pwd)/build/skiff-static" --uid 1000 --gid 1000 --cgroup pids.max=10 -- --version
	if [ -n "$(ls -A "$T/cgfake")" ]; then
		fail=$((fail + 1))
		echo "FAIL skiff-jailer: wrote $(ls -A "$T/cgfake") in a cgroup root that is not cgroup v2"
	fi
	if [ -z "$(ls -A "$J")" ]; then
		pass=$((pass + 1))
		echo "ok   skiff-jailer: bad arguments left nothing in the chroot base"
	else
		fail=$((fail + 1))
		echo "FAIL skiff-jailer: bad arguments left $(ls -A "$J")"
	fi
	if [ "$(id -u)" = 0 ] && [ -n "$BB" ] && file -L "$BB" 2>/dev/null | grep -q static; then
		cp "$BB" "$T/busybox"
		# A host file the jail must not reach.
		echo secret >"$T/host-only"
		# fd 7, open on it when the jailer starts, must not reach the jail
		# (every inherited descriptor but stdio is closed: issue 36.1).
		"$JAILER" --id vm1 --exec-file "$T/busybox" --uid 1000 --gid 1000 --chroot-base-dir "$J" \
			-- sh -c "/busybox id -u; /busybox id -g; /busybox id -G; pwd; \
				/busybox ls /dev /dev/net | /busybox tr '\n' ' '; echo; \
				/busybox cat '$T/host-only' 2>&1 || echo no-host-path; \
				/busybox cat <&7 2>&- || echo fd7-closed; echo > /made && echo wrote" \
			>"$T/jail.out" 2>"$T/jail.err" 7<"$T/host-only"
		rc=$?
		want="1000
1000
1000
/
/dev: kvm net  /dev/net: tun 
cat: can't open '$T/host-only': No such file or directory
no-host-path
fd7-closed
wrote"
		[ "$rc" = 0 ] && [ "$(cat "$T/jail.out")" = "$want" ] && [ -e "$J/busybox/vm1/root/made" ]
		jail_verdict $? "busybox ran as 1000:1000, no groups, in its chroot, no inherited fd"
		# The caller's umask is not the jail's: under umask 077 the jail's
		# /dev and /dev/net were root's 0700 and the UID reached no node
		# (review 11).
		(umask 077 && bounded "$JAILER" "$CLI_SECS" "$JAILER" --id vm-umask --exec-file "$T/busybox" \
			--uid 1000 --gid 1000 --chroot-base-dir "$J" -- sh -c "/busybox ls /dev/net" \
			>"$T/jail.out" 2>"$T/jail.err")
		rc=$?
		[ "$(cat "$T/jail.out")" = tun ]
		jail_verdict $? "under umask 077 the jailed UID reaches /dev/net/tun"
		# --daemonize from a process-group leader (setsid(1) here; a shell
		# with job control): setsid(2) refused it, exit 1 (review 11).
		bounded setsid "$CLI_SECS" setsid -w "$JAILER" --id vm-daemon --exec-file "$T/busybox" \
			--uid 1000 --gid 1000 --chroot-base-dir "$J" --daemonize -- sh -c "echo > /ran" \
			>"$T/jail.out" 2>"$T/jail.err"
		rc=$?
		for _ in $(seq 100); do
			[ -e "$J/busybox/vm-daemon/root/ran" ] && break
			sleep 0.1
		done
		[ "$rc" = 0 ] && [ -e "$J/busybox/vm-daemon/root/ran" ]
		jail_verdict $? "--daemonize from a process-group leader runs the jailed file"
		# The resource limits are the jailed file's: fsize=0 killed the
		# --new-pid-ns parent writing the pid file (SIGXFSZ, status 153)
		# while the jailed file ran on (review 11).
		bounded "$JAILER" "$CLI_SECS" "$JAILER" --id vm-fsize --exec-file "$T/busybox" --uid 1000 --gid 1000 \
			--chroot-base-dir "$J" --new-pid-ns --resource-limit fsize=0 -- true >"$T/jail.out" 2>"$T/jail.err"
		rc=$?
		[ "$rc" = 0 ] && grep -qE '^[0-9]+$' "$J/busybox/vm-fsize/root/busybox.pid"
		jail_verdict $? "--new-pid-ns with fsize=0 writes the pid file"
		expect 2 "no-file=99999999999: at most" -- "$JAILER" --id vm-nofile --exec-file "$T/busybox" --uid 1000 --gid 1000 --chroot-base-dir "$J" --resource-limit no-file=99999999999 -- true
		if [ -e "$J/busybox/vm-nofile" ]; then
			fail=$((fail + 1))
			echo "FAIL skiff-jailer: a refused no-file left its jail"
		fi
		expect 2 "jail .*/busybox/vm1 exists" -- "$JAILER" --id vm1 --exec-file "$T/busybox" --uid 1000 --gid 1000 --chroot-base-dir "$J" -- true
		# Nothing of the jail's mounts is left in the host's namespace.
		if grep -q "$J" /proc/self/mountinfo; then
			fail=$((fail + 1))
			echo "FAIL skiff-jailer: a jail mount is left in the host's namespace"
		else
			pass=$((pass + 1))
			echo "ok   skiff-jailer: no mount left in the host's namespace"
		fi
	else
		echo "note: not root or no static busybox: the jailed run is skipped"
	fi
fi
# The synopsis in docs/CLI.md (the reference the README links to) is the
# one `skiff run --help` prints (both come from the option tables).
bounded "$SKIFF" "$CLI_SECS" "$SKIFF" run --help | sed -n '2,/^Options:/p' | sed '$d' >"$T/synopsis"
sed -n '/^skiff run \[/,/^skiff probe/p' docs/CLI.md | sed '$d' >"$T/readme"
if [ -s "$T/synopsis" ] && diff -u "$T/readme" "$T/synopsis" >"$T/diff"; then
	pass=$((pass + 1))
	echo "ok   docs/CLI.md synopsis matches skiff run --help"
else
	fail=$((fail + 1))
	echo "FAIL docs/CLI.md synopsis differs from skiff run --help:"
	sed 's/^/     /' "$T/diff"
fi
# The runners' own bounds (not from inside the runner test's own run).
if [ "${SKIFF_CLI_NESTED:-0}" != 1 ]; then
	if out=$(tests/cli/runners.sh 2>&1); then
		pass=$((pass + 1))
		echo "ok   the runners' bounds: $out"
	else
		fail=$((fail + 1))
		echo "FAIL the runners' bounds:"
		printf '     %s\n' "${out//$'\n'/$'\n'     }"
	fi
fi

# ok_if DESC COMMAND...: passes when COMMAND succeeds; shows its output if
# not.
ok_if() {
	local desc=$1
	shift
	if "$@" >"$T/chk" 2>&1; then
		pass=$((pass + 1))
		echo "ok   $desc"
	else
		fail=$((fail + 1))
		echo "FAIL $desc:"
		sed 's/^/     /' "$T/chk"
	fi
}

# One line, "skiff VERSION", VERSION from the build's commit (the tree
# may have changed since: the commit is the prefix checked).
version_ok() {
	local out
	out=$("$SKIFF" --version) && [ "$out" = "$("$SKIFF" version)" ] || return 1
	echo "$out"
	[ "$(wc -l <<<"$out")" = 1 ] && [[ $out =~ ^skiff\ [^\ ]+$ ]] || return 1
	[ ! -e .git ] || [[ $out == "skiff $(git describe --always)"* ]]
}

# make install honours DESTDIR and PREFIX: skiff, skiff-jailer and the
# static skiff a jail execs, the man page and the bash completion, and
# nothing is written outside DESTDIR.
install_ok() {
	local d=$T/inst
	make --no-print-directory -s install DESTDIR="$d" PREFIX=/opt/sk || return 1
	find "$d" -type f | sort
	[ -x "$d/opt/sk/bin/skiff" ] && [ -x "$d/opt/sk/bin/skiff-jailer" ] &&
		[ -x "$d/opt/sk/bin/skiff-static" ] && [ -s "$d/opt/sk/share/man/man1/skiff.1" ] &&
		[ -s "$d/opt/sk/share/bash-completion/completions/skiff" ] &&
		[ "$(find "$d" -type f | wc -l)" = 5 ]
}

# Every option and device key `skiff run --help` names is in the man page
# (an entry of its own) and every option in the completion; groff, where
# installed, reads the page without a warning.
generated_ok() {
	local n bad=0
	"$SKIFF" help --man | sed -e 's/\\-/-/g' -e 's/\\f[BIR]//g' >"$T/man" || return 1
	"$SKIFF" help --bash-completion >"$T/completion" && bash -n "$T/completion" || return 1
	"$SKIFF" run --help | sed -n -e 's/^  \(--[a-z-]*\).*/\1/p' \
		-e 's/^  \([a-z][a-z-]*\)\([= ].*\)\{0,1\}$/\1/p' | sort -u >"$T/names"
	[ "$(wc -l <"$T/names")" -gt 20 ] || return 1
	while read -r n; do
		grep -qE -- "^$n( |=|\$)" "$T/man" || { echo "man page: no $n"; bad=1; }
		[[ $n != --* ]] || grep -qE -- "[ \"]${n}[ \")]" "$T/completion" ||
			{ echo "completion: no $n"; bad=1; }
	done <"$T/names"
	if command -v groff >/dev/null; then
		"$SKIFF" help --man | groff -man -ww -z 2>&1 | tee "$T/groff"
		[ ! -s "$T/groff" ] || bad=1
	fi
	return "$bad"
}

# The link checker itself finds a missing file and a missing heading (and
# passes a good link), so "no broken link" below means something.
links_checker_ok() {
	cat >"$T/doc.md" <<-'EOF'
		# Top
		[a](doc.md#top) [b](gone.md) [c](doc.md#gone)
		`[d](x.md)`
	EOF
	if tests/check-links.py "$T/doc.md" >"$T/links"; then
		echo "no broken link found"
		return 1
	fi
	cat "$T/links"
	grep -q ': gone.md: no such file$' "$T/links" || return 1
	grep -q ': doc.md#gone: no heading #gone$' "$T/links" || return 1
	[ "$(grep -c ': no ' "$T/links")" -eq 2 ]
}

ok_if "skiff --version prints the build's commit" version_ok
ok_if "make install DESTDIR=... PREFIX=... installs skiff, skiff-jailer, skiff-static, skiff.1, completion" install_ok
ok_if "the man page and completion name every option --help names" generated_ok
ok_if "the link checker finds a missing file and a missing heading" links_checker_ok
ok_if "every relative link in the docs resolves (tests/check-links.py)" tests/check-links.py
expect 2 "usage: skiff help" -- "$SKIFF" help --frob
expect 2 "usage: skiff version" -- "$SKIFF" version extra
echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
