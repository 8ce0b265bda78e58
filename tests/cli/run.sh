#!/bin/bash
# Host-side command-line tests: bad input must give exactly one line on
# stderr and exit status 2, before any guest runs (so these need no usable
# KVM). Prints "cli: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
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
	"$@" >"$T/out" 2>"$T/err" </dev/null
	local rc=$? lines
	lines=$(wc -l <"$T/err")
	if [ "$rc" -eq "$want" ] && [ "$lines" -eq 1 ] && grep -qE "$pat" "$T/err"; then
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
expect 2 "invalid --iothreads '0': use 1 to 8" -- "$SKIFF" run --kernel "$T/notkernel" --iothreads 0
expect 2 "invalid --iothreads '9': use 1 to 8" -- "$SKIFF" run --kernel "$T/notkernel" --iothreads 9
expect 2 "invalid --iothreads 'abc': use 1 to 8" -- "$SKIFF" run --kernel "$T/notkernel" --iothreads abc
expect 2 "needs a value" -- "$SKIFF" run --kernel "$T/notkernel" --iothreads
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
printf '{"boot-source": {"kernel_image_path": "%s"}, "frob": 1}' "$T/notkernel" >"$T/unknown.json"
expect 2 "unknown field .frob." -- "$SKIFF" run --no-api --config-file "$T/unknown.json"
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
printf '{"boot-source": {"kernel_image_path": "%s"}}' "$T/notkernel" >"$T/notkernel.json"
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
# The README's synopsis is the one `skiff run --help` prints (both come
# from the option tables).
"$SKIFF" run --help | sed -n '2,/^Options:/p' | sed '$d' >"$T/synopsis"
sed -n '/^skiff run \[/,/^skiff probe/p' README.md | sed '$d' >"$T/readme"
if [ -s "$T/synopsis" ] && diff -u "$T/readme" "$T/synopsis" >"$T/diff"; then
	pass=$((pass + 1))
	echo "ok   README synopsis matches skiff run --help"
else
	fail=$((fail + 1))
	echo "FAIL README synopsis differs from skiff run --help:"
	sed 's/^/     /' "$T/diff"
fi
echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
