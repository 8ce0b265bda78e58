# SPDX-License-Identifier: Apache-2.0
# One round of the benchmark harness (bench/run.sh): in one L1 boot, every
# configuration of the plan once, in the plan's order. A VM configuration
# boots L2 once (the "boot" workload times that boot) and runs every other
# workload against it; "native-veth" runs them between L1's root network
# namespace and a second one over a veth pair (the ceiling, no VMM).
#
# Every measurement tool runs in L1; L2 only runs the servers (iperf3,
# sockperf) and answers ping. So "g2h" (guest to host) is iperf3 -R: the
# server in L2 sends. Around each workload L1 takes a snapshot of KVM's exit
# counters (debugfs, summed over live VMs: one VM at a time here), of the
# VMM's threads' CPU ticks (/proc/PID/task/*/stat, plus its vhost kernel
# threads) and of its memory (/proc/PID/smaps); bench_delta turns two
# snapshots into metrics. Each configuration's raw outputs go to the console
# as a base64 tar.gz between SKIFF-BENCH-DATA markers, for
# bench/skiffbench/rounds.py to unpack on the host.
#
# The plan comes from L1's kernel command line (bench/run.sh sets it):
#   bench_rep=N bench_configs=a,b bench_workloads=boot,tcp-g2h bench_secs=S
# Without one (tests/testbed/run-one.sh bench-round) it is a smoke test:
# every VM configuration, boot/ping/tcp-g2h, 2 s streams; PASS when every
# run produced its output (run-one.sh packs neither sockperf into L2 nor
# the veth module into L1: no rr, no native-veth). Link-local addresses
# only, inside L1 and L2.
TIMEOUT=900
SLOW=1
PEERS="qemu kvmtool"

# The configurations, one line each: NAME KIND [ARGS...]. Adding one is
# adding a line (and, if it needs new guest-visible hardware, nothing else:
# L2 brings up whatever eth0 it gets).
#   skiff ARGS   skiff run ... ARGS (--net tap=tap0 unless ARGS has a --net);
#                a first word bin=NAME runs the build NAME instead
#                (skiff-dma-fenced; skiff-base, the commit BENCH_BASE
#                names: bench/run.sh builds and packs them); a first word
#                coal=RXUS/RXFRAMES/TXUS/TXFRAMES has L2 set virtio-net's
#                notification coalescing with ethtool -C before the
#                workloads (skiff-coal, skiff-coal-tx, skiff-poll-coal-tx:
#                what a user tuning a guest for small packets, or for
#                latency, would set)
#   qemu OPTS    QEMU 7.2, by default -M microvm,pcie=on booting the
#                bzImage, virtio-net-pci on tap0. OPTS are words:
#                  machine=M   -M M instead (e.g. microvm,pcie=on,rtc=on; pc)
#                  kernel=pvh  boot the vmlinux skiff decompressed when the
#                              L1 image was built (PVH entry note), not
#                              the bzImage: the same kernel skiff boots
#                  nic=MODEL   -device MODEL instead of virtio-net-pci
#                  anything else is appended to the -netdev tap (vhost=on)
#   kvmtool OPTS kvmtool (lkvm, built by bench/build-kvmtool.sh from a
#                pinned commit; bench/run.sh drops these configurations
#                with one line when it is not built) booting the bzImage
#                with its own defaults, virtio-net on tap0. OPTS are words
#                appended to its -n (vhost=1)
#   native       no VM: L1 to a second network namespace over veth
# Every VM kind also takes mem=SIZE (L2's RAM, e.g. 2048M; default
# L2_MEM) and cpus=N (vCPUs; default 1) among its ARGS (bench_vm_words).
# The peers as their users would run them: qemu-vhost-off is microvm as
# QEMU sets it up (rtc=auto means no RTC under KVM: the guest polls a
# missing one), qemu-rtc gives it the RTC, qemu-rtc-pvh also boots the
# decompressed kernel as skiff does, qemu-pc is QEMU's default machine
# (SeaBIOS). skiff-unpack-guest has the guest decompress its kernel, as
# QEMU's bzImage boot does.
# skiff-poll's thresholds are scaled for the testbed, as in net-modes.sh:
# emulated time runs ~20x slow, so kicks come milliseconds apart.
BENCH_CONFIGS="
skiff-trap      skiff --no-ioeventfd
skiff-ioeventfd skiff
skiff-poll      skiff --net tap=tap0,poll=adaptive,poll-start=2,poll-window=20000,poll-idle=2000
skiff-vhost     skiff --net tap=tap0,vhost=on
skiff-unpack-guest skiff --unpack guest
qemu-vhost-on   qemu vhost=on
qemu-vhost-off  qemu vhost=off
qemu-rtc        qemu vhost=off machine=microvm,pcie=on,rtc=on
qemu-rtc-pvh    qemu vhost=off machine=microvm,pcie=on,rtc=on kernel=pvh
kvmtool         kvmtool
kvmtool-vhost   kvmtool vhost=1
native-veth     native
"
# Issue 13 point 4, run when named: VMM memory at other guest sizes (run
# them with --workloads boot,idle: memory is read at init and after the
# idle window) and 2-vCPU guests (for tcp-par). QEMU's memory peer is
# qemu-rtc (bzImage, RTC on): with kernel=pvh it would also map the 65 MB
# vmlinux file, which is no overhead of a VMM's own.
BENCH_WL4_CONFIGS="
skiff-mem128     skiff mem=128M
skiff-mem512     skiff mem=512M
skiff-mem2048    skiff mem=2048M
qemu-mem128      qemu vhost=off machine=microvm,pcie=on,rtc=on mem=128M
qemu-mem512      qemu vhost=off machine=microvm,pcie=on,rtc=on mem=512M
qemu-mem2048     qemu vhost=off machine=microvm,pcie=on,rtc=on mem=2048M
kvmtool-mem128   kvmtool mem=128M
kvmtool-mem512   kvmtool mem=512M
kvmtool-mem2048  kvmtool mem=2048M
skiff-2cpu       skiff cpus=2
skiff-vhost-2cpu skiff --net tap=tap0,vhost=on cpus=2
qemu-rtc-pvh-2cpu qemu vhost=off machine=microvm,pcie=on,rtc=on kernel=pvh cpus=2
kvmtool-2cpu     kvmtool cpus=2
"
# Configurations that exist but are not in the default plan: QEMU's default
# machine (SeaBIOS, which tb_pack_qemu packs from the host's Debian seabios;
# not yet run through a whole suite), the poll-idle sweep that chose
# skiff's default (docs/bench/2026-11-30-sweep-idle/), and the emulated e1000 (issue 10) in
# each coalesce mode against QEMU's. Thresholds scaled for
# the testbed as skiff-poll's are; the names give the testbed's poll-idle.
# qemu-vhost-rtc-pvh is QEMU's vhost on the machine qemu-rtc-pvh boots.
# skiff-cpupm and qemu-cpupm (issue 38): the guest's idle exits off
# (skiff --cpu-pm on; QEMU -overcommit cpu-pm=on), against skiff-ioeventfd
# and qemu-rtc-pvh, the same VMMs in their default mode.
# skiff-vhost-busy and qemu-vhost-busy have vhost-net busy-poll 50 µs
# (VHOST_SET_VRING_BUSYLOOP_TIMEOUT; QEMU's tap poll-us): vhost tuned
# for latency as each one's users would.
BENCH_EXTRA_CONFIGS="$BENCH_WL4_CONFIGS
qemu-pc          qemu vhost=off machine=pc
skiff-idle-250us skiff --net tap=tap0,poll=adaptive,poll-start=2,poll-window=20000,poll-idle=250
skiff-idle-1ms   skiff --net tap=tap0,poll=adaptive,poll-start=2,poll-window=20000,poll-idle=1000
skiff-idle-4ms   skiff --net tap=tap0,poll=adaptive,poll-start=2,poll-window=20000,poll-idle=4000
skiff-idle-16ms  skiff --net tap=tap0,poll=adaptive,poll-start=2,poll-window=20000,poll-idle=16000
skiff-e1000-off  skiff --net tap=tap0,model=e1000,coalesce=off
skiff-e1000-on   skiff --net tap=tap0,model=e1000,coalesce=on
skiff-e1000-all  skiff --net tap=tap0,model=e1000,coalesce=all
qemu-e1000       qemu vhost=off nic=e1000
skiff-dma-fenced skiff bin=skiff-dma-fenced
skiff-base       skiff bin=skiff-base
skiff-base-e1000-on skiff bin=skiff-base --net tap=tap0,model=e1000,coalesce=on
skiff-base-vsock-vhost skiff bin=skiff-base --vsock cid=3,backend=vhost
skiff-base-vsock-hybrid skiff bin=skiff-base --vsock cid=3,uds=/tmp/bench/vb.sock
skiff-base-cpupm skiff bin=skiff-base --cpu-pm on
skiff-coal       skiff coal=500/32/500/32
skiff-coal-tx    skiff coal=0/0/1000/64
skiff-poll-coal-tx skiff coal=0/0/1000/64 --net tap=tap0,poll=adaptive,poll-start=2,poll-window=20000,poll-idle=2000
qemu-vhost-rtc-pvh qemu vhost=on machine=microvm,pcie=on,rtc=on kernel=pvh
skiff-vhost-busy skiff --net tap=tap0,vhost=on,vhost-busyloop=50
qemu-vhost-busy  qemu vhost=on machine=microvm,pcie=on,rtc=on kernel=pvh poll-us=50
skiff-cpupm      skiff --cpu-pm on
qemu-cpupm       qemu vhost=off machine=microvm,pcie=on,rtc=on kernel=pvh cpu-pm
"
# PCI passthrough (issue 11): L1 on the e1000e itself (the ceiling) and L2
# under skiff driving it through VFIO, BARs mapped or every access trapped.
# @PT is the e1000e's PCI address in L1. A plan with one of these boots L0
# with BENCH_PT_L0_ARGS (an IOMMU, the e1000e below a root port and a
# virtio-net for L1, joined by a hub: as the vfio scenario) and L1 with
# BENCH_PT_L1_APPEND and BENCH_PT_L1_MODULES (bench_pt_configs, run.sh).
# The e1000e's side is BENCH_PT_IP (L2, or L1's namespace "benchpt"), L1's
# virtio-net BENCH_PT_L1_IP. Compare with skiff-e1000-on and
# skiff-ioeventfd, which reach L1 over tap0 in the same rounds.
# qemu-vfio (issue 37.4): QEMU passing the same e1000e as its users do
# (q35, -device vfio-pci,host=ADDR,rombar=0; SeaBIOS, as qemu-pc), its
# only NIC, in the same rounds as skiff-vfio.
BENCH_EXTRA_CONFIGS="$BENCH_EXTRA_CONFIGS
pt-native        native pt
skiff-vfio       skiff --vfio-pci @PT
skiff-vfio-trap  skiff --vfio-pci @PT,mmap=off
qemu-vfio        qemu vhost=off machine=q35 pt=@PT
"
# NVMe passthrough (issue 37.4): L0's NVMe function (QEMU's emulated
# nvme, 1b36:0010, on a PCIe root port of its own behind L0's IOMMU)
# passed to L2 by each VMM in the same rounds, QEMU as its users do (q35,
# -device vfio-pci,host=ADDR,rombar=0; SeaBIOS). @NVME is its PCI address
# in L1. L2 keeps its usual NIC on tap0 (virtio-net in user space under
# both): only L1's requests to fio go over it. Only they run the nvme-*
# workloads (bench_has_nvme), read-only, on the namespace.
BENCH_EXTRA_CONFIGS="$BENCH_EXTRA_CONFIGS
skiff-vfio-nvme  skiff --vfio-pci @NVME
qemu-vfio-nvme   qemu vhost=off machine=q35 nvme=@NVME
"
# vsock (issue 33.6, bench/bench-vsock.sh): skiff's hybrid vsock (L1 on
# its Unix socket, CONNECT PORT: skiff's threads carry the stream), skiff
# on the host kernel's vhost-vsock (L1 on AF_VSOCK) and QEMU's
# vhost-vsock-pci (the same), each beside its NIC, the guest at CID 3.
# Only they run the vsock-* workloads (bench_has_vsock: a --vsock, or the
# qemu word vsock).
BENCH_VSOCK_CID=3
BENCH_EXTRA_CONFIGS="$BENCH_EXTRA_CONFIGS
skiff-vsock-hybrid skiff --vsock cid=3,uds=/tmp/bench/v.sock
skiff-vsock-vhost  skiff --vsock cid=3,backend=vhost
qemu-vhost-vsock   qemu vhost=off machine=microvm,pcie=on,rtc=on kernel=pvh vsock
"
# L0's IOMMU, first (bench_l0_args puts it there once for both kinds).
BENCH_PT_L0_IOMMU="-device intel-iommu,intremap=off"
BENCH_PT_L0_ARGS="$BENCH_PT_L0_IOMMU
	-device pcie-root-port,id=rp0,bus=pcie.0,chassis=1,slot=1
	-netdev hubport,id=h0,hubid=0 -device e1000e,netdev=h0,bus=rp0
	-netdev hubport,id=h1,hubid=0 -device virtio-net-pci,netdev=h1"
BENCH_PT_L1_APPEND="intel_iommu=on iommu=pt"
BENCH_PT_L1_MODULES="vfio vfio_iommu_type1 vfio_virqfd vfio-pci-core vfio-pci virtio_pci
	virtio_net e1000e"
# The NVMe configurations' L0 (bench_l0_args): the NVMe as
# tests/testbed/scenarios/vfio-multi.sh gives it (intremap=off, so L1 allows
# unsafe interrupts), but alone on a root port (a PCIe endpoint, as an
# NVMe drive sits; its own IOMMU group) rather than behind vfio-multi's
# PCI bridge, which is there to put two functions in one group. @nvb@ is
# an image of BENCH_NVME_MB MiB bench/run.sh makes per run (zero-filled,
# so every block is a real page, as the test disk's) and removes after:
# scratch, and the workloads only read it.
BENCH_NVME_L0_ARGS="-device pcie-root-port,id=rp1,bus=pcie.0,chassis=2,slot=2
	-drive file=@nvb@,if=none,id=nvb,format=raw
	-device nvme,serial=bench0,drive=nvb,bus=rp1"
BENCH_NVME_MB=256
BENCH_NVME_L1_MODULES="vfio vfio_iommu_type1 vfio_virqfd vfio-pci-core vfio-pci"
# L2's nvme driver, loaded only by a VM that has the NVMe (bench_blk_l2);
# vfio-multi.sh's list and order (crc64-rocksoft finds its generic
# implementation by name, not through modinfo's depends).
BENCH_NVME_L2_MODULES="crct10dif_common crct10dif_generic crc-t10dif crc64 crc64-rocksoft
	crc64_rocksoft_generic t10-pi nvme-core nvme"
BENCH_PT_L1_IP=169.254.30.1
BENCH_PT_IP=169.254.30.2
# Block I/O (issue 13): each of these gives L2 a test disk and runs the
# blk-* workloads (fio in L2) besides the others; configurations without
# a disk skip the blk-* workloads (bench_has_disk, bench_disk_configs).
# The test disk is /dev/loop0 (BENCH_BLK_DEV) for every VMM; bench_vm adds
# the read-only disk with fio. skiff as is, polling its request queue
# (thresholds scaled as skiff-poll's), and with the disk on its own I/O
# thread (devices go round-robin in order: net io0, test disk io1, fio's
# disk io0), and with direct (O_DIRECT, as QEMU's cache=none), also
# polling. QEMU as its
# users tune it: cache=none, aio=io_uring (or
# native), and an iothread with its default adaptive polling.
BENCH_EXTRA_CONFIGS="$BENCH_EXTRA_CONFIGS
skiff-blk           skiff --disk /dev/loop0
skiff-blk-poll      skiff --disk /dev/loop0,poll=adaptive,poll-start=2,poll-window=20000,poll-idle=2000
skiff-blk-iothreads skiff --iothreads 2 --disk /dev/loop0
skiff-blk-direct    skiff --disk /dev/loop0,direct
skiff-blk-direct-poll skiff --disk /dev/loop0,direct,poll=adaptive,poll-start=2,poll-window=20000,poll-idle=2000
qemu-blk            qemu vhost=off disk=io_uring
qemu-blk-native     qemu vhost=off disk=native
qemu-blk-iothread   qemu vhost=off disk=io_uring iothread
"
# The world-switch table's block peers (issue 38): skiff-ioeventfd,
# skiff-cpupm, qemu-rtc-pvh and qemu-cpupm with the test disk as each
# one's users tune it (skiff direct; QEMU cache=none,aio=io_uring), run
# only for the blk-* workloads (blk-only: the others stay on the four
# without a disk, so their devices are those of earlier runs).
BENCH_EXTRA_CONFIGS="$BENCH_EXTRA_CONFIGS
skiff-ioeventfd-blk skiff blk-only --disk /dev/loop0,direct
skiff-cpupm-blk     skiff blk-only --cpu-pm on --disk /dev/loop0,direct
qemu-rtc-pvh-blk    qemu blk-only vhost=off machine=microvm,pcie=on,rtc=on kernel=pvh disk=io_uring
qemu-cpupm-blk      qemu blk-only vhost=off machine=microvm,pcie=on,rtc=on kernel=pvh cpu-pm disk=io_uring
"
# The emulated NIC's configurations need its driver in L2 (passthrough's
# e1000e driver is added by bench/run.sh when a plan has one).
L2_EXTRA_MODULES="e1000"
# The default workloads. They run in the plan's order, except idle, which
# runs first after boot (bench_idle_first). The VM_ONLY ones are skipped
# for native configurations (and bench/skiffbench/ingest.py's VM_ONLY
# must list the same).
BENCH_WORKLOADS="boot idle tcp-g2h tcp-h2g udp-g2h rr tcp-rr ping"
BENCH_VM_ONLY="boot idle snap migrate migrate-busy balloon cpu"
# Known but run only when named (--workloads): each adds a stream of
# BENCH_SECS per configuration, and the default suite should grow by at
# most ~30% (docs/bench/METHODS.md).
BENCH_EXTRA_WORKLOADS="udp64-g2h udp64-h2g tcp-par snap migrate migrate-busy vsock-h2g vsock-g2h vsock-rr balloon cpu"
# cpu (bench/bench-cpu.sh): a fixed CPU-bound job in L2, the control.
# snap, migrate and migrate-busy (issue 34.5, bench/bench-snapmig.sh and
# bench/bench-migbusy.sh) replace the VMM: they run last, in this order,
# and only under skiff and QEMU. migrate keeps the guest it always had (no
# load has run in it); migrate-busy, after it, moves a guest that has
# already moved once (plan it alone for a freshly booted one).
BENCH_SM_WORKLOADS="snap migrate migrate-busy"
# balloon (bench/bench-vsock.sh) leaves the guest changed: after the
# others, before those that replace the VMM; skiff and QEMU only.
BENCH_LAST_WORKLOADS="balloon $BENCH_SM_WORKLOADS"

# bench_sm_planned: the plan has snap, migrate or migrate-busy.
bench_sm_planned() {
	case " $BENCH_PLAN_WORKLOADS " in *" snap "* | *" migrate "* | *" migrate-busy "*) return 0 ;; esac
	return 1
}

# bench_balloon_planned: the plan has balloon (the VM then gets one).
bench_balloon_planned() {
	case " $BENCH_PLAN_WORKLOADS " in *" balloon "*) return 0 ;; esac
	return 1
}

# bench_sm_applies KIND: whether a VM kind has snap, migrate and balloon
# (BENCH_LAST_WORKLOADS): skiff and QEMU.
bench_sm_applies() { [ "$1" = skiff ] || [ "$1" = qemu ]; }

# bench_ctl_planned: the plan drives the VMM (snap, migrate, balloon): it
# then gets its API socket (skiff) or QMP (QEMU).
bench_ctl_planned() { bench_sm_planned || bench_balloon_planned; }
# udp64-*: the offered rate of 64-byte datagrams (iperf3 -b counts
# payload: 2 Mbit/s = ~3900 packets/s). Below what every configuration
# delivered at -b 0 (udp-g2h: 10-18k packets/s in the QUICK run of
# 2026-12-01), so loss then says the path dropped what a held-rate sender
# offered, not that a fast sender outran it.
BENCH_UDP64_RATE=2M

# The block workloads (fio in L2; bench_fio_job has their fio options).
BENCH_BLK_WORKLOADS="blk-randread-qd1 blk-randread-qd32 blk-randwrite-qd1 blk-randwrite-qd32 blk-seqread blk-seqwrite"
# The passed-through NVMe's (fio in L2 on its namespace, reads only:
# bench_fio_job), run only by the NVMe configurations.
BENCH_NVME_WORKLOADS="nvme-seqread nvme-randread-qd1 nvme-randread-qd32"
BENCH_WORKLOADS="$BENCH_WORKLOADS $BENCH_BLK_WORKLOADS $BENCH_NVME_WORKLOADS"
# The test disk: a raw image in L1's tmpfs (zero-filled, so every block is
# a real page), the same file for every VMM, seen through a loop device:
# Linux 6.1's tmpfs has no O_DIRECT, which QEMU's cache=none needs, and a
# block device has it. 512 MiB: L1 has 4 GiB, and skiff's buffered opens
# may cache a second copy of it in L1's page cache.
BENCH_BLK_IMG=/tmp/bench-blk.img
BENCH_BLK_DEV=/dev/loop0
BENCH_BLK_MB=512
# fio and its ~60 libraries (Debian's fio links librbd, glusterfs, ...:
# 86 MB, BIND_NOW) on an ext2 image bench/run.sh makes: L2 mounts it
# read-only instead of holding it in its 256 MiB.
BENCH_FIO_IMG=/bench/fio.img
BENCH_FIO_MNT=/mnt/fio
# fio with its own loader and libraries from that disk (none of L2's).
BENCH_FIO="$BENCH_FIO_MNT/ld.so --library-path $BENCH_FIO_MNT/lib $BENCH_FIO_MNT/fio"
BENCH_BLK_PORT=9998 # L2's fio server: "WORKLOAD SECS" in, fio's JSON out

BENCH_L1_IP=169.254.10.1
BENCH_L2_IP=169.254.10.2
BENCH_NS_L1_IP=169.254.20.1
BENCH_NS_IP=169.254.20.2
BENCH_MAC=02:73:6b:69:66:00 # skiff's default; QEMU gets the same
BENCH_SOCKPERF_PORT=11111
BENCH_QUIT_PORT=9999
BENCH_DIR=/tmp/bench
BENCH_READY_S=120 # start to "L2 ready" (boot + modules + eth0 up)
BENCH_KCACHE=$HOME/.cache/skiff # skiff's kernel cache in the L1 image (HOME from guest/l1-init)
BENCH_EXIT_S=30   # quit request to VMM exit, then SIGKILL

# bench_arg NAME DEFAULT: value of NAME= on the kernel command line.
bench_arg() {
	v=$(tr ' ' '\n' </proc/cmdline | sed -n "s/^$1=//p" | tail -n1)
	echo "${v:-$2}"
}

# bench_config_line NAME: "KIND ARGS..." of a configuration, or nothing.
bench_config_line() {
	printf '%s\n%s\n' "$BENCH_CONFIGS" "$BENCH_EXTRA_CONFIGS" |
		awk -v n="$1" '$1 == n { $1 = ""; sub(/^ /, ""); print; exit }'
}

bench_mark() { echo "SKIFF-BENCH: $*"; }

# ---- snapshots ----

# bench_snap PID: time, every counter of KVM's debugfs (summed over live
# VMs: one VM at a time here; the per-VM directories are skipped) and, with
# a PID, the CPU ticks of the VMM's threads (and of BENCH_EXTRA_TASKS, its
# vhost workers) and its memory. `read` rather than cat: no fork per file,
# the snapshot stays cheap.
bench_snap() {
	echo "time $(now_ns)"
	bs_pid=$1
	[ -n "$bs_pid" ] || return 0
	bench_snap_kvm
	for bs_t in /proc/"$bs_pid"/task/* $BENCH_EXTRA_TASKS; do
		read -r bs_s <"$bs_t/stat" 2>/dev/null || continue
		read -r bs_name <"$bs_t/comm" 2>/dev/null || continue
		# "tid (comm) state ppid ...": comm may hold spaces and ")".
		# shellcheck disable=SC2086 # the fields after the comm
		set -- ${bs_s##*) }
		echo "task ${bs_t##*/} $((${12} + ${13})) $bs_name"
	done
	# L1's interfaces' drops: a tap whose VMM does not read it fast enough
	# drops what it cannot queue (tx_dropped), so udp64-h2g's loss splits
	# into the tap's and L2's own.
	for bs_f in /sys/class/net/*/statistics/[rt]x_dropped; do
		bs_i=${bs_f#/sys/class/net/}
		[ "${bs_i%%/*}" = lo ] && continue
		read -r bs_v <"$bs_f" 2>/dev/null && echo "net ${bs_i%%/*}.${bs_f##*/} $bs_v"
	done
	# Guest RAM: the anonymous mappings at least as large as L2's RAM
	# (skiff: one mmap of --mem; QEMU: its RAM block). The rest of the
	# resident set is the VMM's own.
	awk -v mem="$BENCH_MEM_KIB" '
		/^[0-9a-f]+-[0-9a-f]+ / { anon = (NF < 6) }
		/^Size:/ { size = $2 }
		/^Rss:/ { rss += $2; if (anon && size >= mem) guest += $2 }
		END { if (rss) printf "mem %d %d\n", rss, guest }' "/proc/$bs_pid/smaps" 2>/dev/null
	# Resident memory by kind (anonymous: guest RAM and the VMM's heap;
	# file: its binary, libraries and firmware; shmem).
	while read -r bs_k bs_v _; do
		case "$bs_k" in RssAnon: | RssFile: | RssShmem:) echo "memst ${bs_k%:} $bs_v" ;; esac
	done <"/proc/$bs_pid/status" 2>/dev/null
}

bench_snap_kvm() {
	for bs_f in /sys/kernel/debug/kvm/*; do
		[ -f "$bs_f" ] && read -r bs_v <"$bs_f" 2>/dev/null && echo "kvm ${bs_f##*/} $bs_v"
	done
}

# bench_delta BEFORE AFTER: the metrics between two snapshots, key=value.
# Threads are named by comm (sanitized; vhost-PID -> vhost); a name held by
# several threads gets .2, .3 ... in thread-id (creation) order. A thread
# that started inside the window counts from 0; one that ended inside it is
# lost.
bench_delta() {
	{
		grep -v '^task ' "$2"
		grep '^task ' "$2" | sort -n -k2,2
	} | awk '
		function label(name) {
			gsub(/[^A-Za-z0-9_.-]/, "_", name)
			sub(/^vhost-[0-9]+$/, "vhost", name)
			return name
		}
		FNR == NR {
			if ($1 == "time") t0 = $2
			if ($1 == "kvm") k0[$2] = $3
			if ($1 == "task") c0[$2] = $3
			if ($1 == "net") n0[$2] = $3
			next
		}
		$1 == "time" { t1 = $2 }
		$1 == "kvm" { k1[$2] = $3 }
		$1 == "task" {
			name = $4; for (i = 5; i <= NF; i++) name = name " " $i
			name = label(name)
			seen[name]++
			if (seen[name] > 1) name = name "." seen[name]
			cpu[name] += ($3 - c0[$2]) / 100.0
		}
		$1 == "net" && ($2 in n0) { net[$2] = $3 - n0[$2] }
		$1 == "mem" { rss = $2; guest = $3; have_mem = 1 }
		$1 == "memst" { st[$2] = $3 }
		END {
			printf "window_s=%.3f\n", (t1 - t0) / 1e9
			if ("exits" in k1) {
				printf "kvm_exits=%d\n", k1["exits"] - k0["exits"]
				split("io_exits mmio_exits halt_exits irq_exits", names, " ")
				for (i = 1; i <= 4; i++) if (names[i] in k1) {
					short = names[i]; sub(/_exits$/, "", short)
					printf "exits_%s=%d\n", short, k1[names[i]] - k0[names[i]]
				}
			}
			# Every counter KVM has, as it has it (a few are gauges,
			# e.g. pages_4k: their delta is a change, not a count).
			# Counters missing before (no VM yet, at boot) count from 0.
			for (n in k1) printf "kvm.%s=%d\n", n, k1[n] - k0[n]
			for (n in cpu) printf "cpu_s.%s=%.2f\n", n, cpu[n]
			for (n in net) printf "net.%s=%d\n", n, net[n]
			if (have_mem) {
				printf "mem_rss_kib=%d\n", rss
				printf "mem_overhead_kib=%d\n", rss - guest
			}
			if ("RssAnon" in st) {
				printf "mem_rss_anon_kib=%d\nmem_rss_file_kib=%d\n", st["RssAnon"], st["RssFile"]
				printf "mem_rss_shmem_kib=%d\n", st["RssShmem"]
				if (have_mem) printf "mem_anon_overhead_kib=%d\n", st["RssAnon"] - guest
			}
		}' "$1" -
}

# ---- workloads ----

# bench_run_workload CONFIG W TARGET PID: one workload against TARGET, its
# outputs and metrics in BENCH_DIR/CONFIG/W/. A timeout leaves an "error".
bench_run_workload() {
	rw_c=$1 rw_w=$2 rw_ip=$3 rw_pid=$4
	rw_d=$BENCH_DIR/$rw_c/$rw_w
	mkdir -p "$rw_d"
	bench_mark "run rep=$BENCH_REP config=$rw_c workload=$rw_w"
	rw_s=$BENCH_SECS
	rw_bound=$((rw_s + 30))
	# snap and migrate(-busy) replace the VMM inside the window: its
	# counters before and after would be two processes' (their metrics are
	# their own).
	case "$rw_w" in snap | migrate | migrate-busy) rw_pid= ;; esac
	case "$rw_w" in
	blk-* | nvme-*)
		bench_blk_settle
		rm -f "$BENCH_DIR/$rw_c/job-run.snap" "$BENCH_DIR/$rw_c/job-end.snap"
		;;
	cpu) rm -f "$BENCH_DIR/$rw_c/job-run.snap" "$BENCH_DIR/$rw_c/job-end.snap" ;;
	# L2's memory used and freed, outside the window (bench-vsock.sh)
	balloon) bench_balloon_fill "$rw_ip" "$rw_d" ;;
	esac
	rw_t0=$(now_ns)
	! command -v bench_trace_on >/dev/null || bench_trace_on "$rw_w"
	bench_snap "$rw_pid" >"$rw_d/snap.before"
	rw_rc=0
	case "$rw_w" in
	tcp-g2h)
		timeout "$rw_bound" iperf3 -c "$rw_ip" -R -t "$rw_s" -J \
			>"$rw_d/iperf3.json" 2>&1 || rw_rc=$?
		;;
	tcp-h2g)
		timeout "$rw_bound" iperf3 -c "$rw_ip" -t "$rw_s" -J \
			>"$rw_d/iperf3.json" 2>&1 || rw_rc=$?
		;;
	udp-g2h)
		timeout "$rw_bound" iperf3 -c "$rw_ip" -R -u -l 64 -b 0 -t "$rw_s" -J \
			>"$rw_d/iperf3.json" 2>&1 || rw_rc=$?
		;;
	rr)
		timeout "$rw_bound" sockperf ping-pong -i "$rw_ip" -p "$BENCH_SOCKPERF_PORT" \
			-t "$rw_s" -m 64 >"$rw_d/sockperf.txt" 2>&1 || rw_rc=$?
		;;
	ping)
		timeout "$rw_bound" ping -c 10 -i 0.2 -W 5 "$rw_ip" \
			>"$rw_d/ping.txt" 2>&1 || rw_rc=$?
		;;
	blk-* | nvme-*)
		bench_blk_run "$rw_ip" "$rw_w" "$rw_s" "$rw_bound" >"$rw_d/fio.json" 2>&1 || rw_rc=$?
		;;
	cpu)
		bench_cpu_run "$rw_ip" "$BENCH_CPU_MIB" $((rw_bound + 60)) >"$rw_d/cpu.txt" 2>&1 || rw_rc=$?
		;;
	snap | migrate | migrate-busy) bench_sm_run "$rw_w" "$rw_d" ;;
	vsock-*)
		bench_vsock_run "$rw_w" "$BENCH_VSOCK_TARGET" "$rw_d" "$rw_s" "$rw_bound" || rw_rc=$?
		;;
	balloon) bench_balloon_run "$rw_d" ;;
	*) bench_run_wl4 "$rw_w" "$rw_ip" "$rw_d" "$rw_s" "$rw_bound" || rw_rc=$? ;;
	esac
	bench_snap "$rw_pid" >"$rw_d/snap.after"
	! command -v bench_trace_off >/dev/null || bench_trace_off "$rw_w" "$rw_d" "$rw_pid"
	bench_delta "$rw_d/snap.before" "$rw_d/snap.after" >"$rw_d/metrics"
	case "$rw_w" in
	blk-* | nvme-*) bench_blk_window "$rw_d" fio ;;
	cpu) bench_blk_window "$rw_d" cpu ;;
	esac
	# key=value lines a workload adds to the snapshots' (idle: idle_s).
	[ ! -e "$rw_d/metrics.extra" ] || cat "$rw_d/metrics.extra" >>"$rw_d/metrics"
	echo "$((($(now_ns) - rw_t0) / 1000000))" >"$rw_d/duration_ms"
	# 124/143: timeout killed it. Other failures show in the tool's output,
	# which the host's parsers reject with the reason.
	case "$rw_rc" in
	124 | 143 | 137) echo "$rw_w did not finish within ${rw_bound}s" >"$rw_d/error" ;;
	esac
	bench_mark "done rep=$BENCH_REP config=$rw_c workload=$rw_w rc=$rw_rc"
}

# bench_run_wl4 W TARGET DIR SECS BOUND: the workloads of issue 13 point
# 4 (docs/bench/METHODS.md), each bounded by BOUND seconds; the tool's exit status.
#   tcp-rr     sockperf ping-pong over TCP (L2's second server, --tcp)
#   udp64-g2h  iperf3 64-byte UDP at BENCH_UDP64_RATE, L2 sends
#   udp64-h2g  the same, L1 sends
#   tcp-par    iperf3 TCP, two parallel streams, L2 sends (for cpus=2)
#   idle       nothing: the VM left alone for SECS (what waiting costs)
bench_run_wl4() {
	w4_w=$1 w4_ip=$2 w4_d=$3 w4_s=$4 w4_bound=$5
	case "$w4_w" in
	tcp-rr)
		timeout "$w4_bound" sockperf ping-pong --tcp -i "$w4_ip" -p "$BENCH_SOCKPERF_PORT" \
			-t "$w4_s" -m 64 >"$w4_d/sockperf.txt" 2>&1
		;;
	udp64-g2h)
		timeout "$w4_bound" iperf3 -c "$w4_ip" -R -u -l 64 -b "$BENCH_UDP64_RATE" -t "$w4_s" -J \
			>"$w4_d/iperf3.json" 2>&1
		;;
	udp64-h2g)
		timeout "$w4_bound" iperf3 -c "$w4_ip" -u -l 64 -b "$BENCH_UDP64_RATE" -t "$w4_s" -J \
			>"$w4_d/iperf3.json" 2>&1
		;;
	tcp-par)
		timeout "$w4_bound" iperf3 -c "$w4_ip" -R -P 2 -t "$w4_s" -J \
			>"$w4_d/iperf3.json" 2>&1
		;;
	idle)
		# The snapshots around it bracket the sleep; idle_s marks the
		# sample for its per-second rates (metrics.py).
		sleep "$w4_s"
		echo "idle_s=$w4_s" >"$w4_d/metrics.extra"
		;;
	*) echo "unknown workload $w4_w" >"$w4_d/error" ;;
	esac
}

# bench_idle_first WORKLOADS...: the same list with idle first: the guest
# left alone right after boot, before traffic leaves state behind (TCP
# connections, timers, the servers' buffers).
bench_idle_first() {
	case " $* " in *" idle "*) echo idle ;; esac
	for if_w in "$@"; do
		case " idle $BENCH_LAST_WORKLOADS " in *" $if_w "*) ;; *) echo "$if_w" ;; esac
	done
	# Then balloon and the ones that replace the VMM, snap, migrate,
	# migrate-busy.
	for if_w in $BENCH_LAST_WORKLOADS; do
		case " $* " in *" $if_w "*) echo "$if_w" ;; esac
	done
}

# bench_fail_rest CONFIG WHY WORKLOADS...: record WHY for workloads that
# could not run, so the host counts them as failed runs, not as missing.
bench_fail_rest() {
	fr_c=$1 fr_why=$2
	shift 2
	for fr_w in "$@"; do
		mkdir -p "$BENCH_DIR/$fr_c/$fr_w"
		[ -e "$BENCH_DIR/$fr_c/$fr_w/metrics" ] ||
			echo "$fr_why" >"$BENCH_DIR/$fr_c/$fr_w/error"
	done
	case "$BENCH_BAD" in
	*"[$fr_c: $fr_why]"*) ;;
	*) BENCH_BAD="$BENCH_BAD [$fr_c: $fr_why]" ;;
	esac
}

# bench_ship CONFIG: the configuration's directory to the console, as
# base64 of a tar.gz with its sha256, for the host to unpack.
bench_ship() {
	(cd "$BENCH_DIR" && tar czf "$BENCH_DIR/ship.tgz" "$1")
	sum=$(sha256sum <"$BENCH_DIR/ship.tgz" | cut -d' ' -f1)
	echo "SKIFF-BENCH-DATA-BEGIN rep=$BENCH_REP config=$1"
	base64 "$BENCH_DIR/ship.tgz" | sed 's/^/SKIFF-BENCH-B64 /'
	echo "SKIFF-BENCH-DATA-END rep=$BENCH_REP config=$1 sha256=$sum"
	rm -f "$BENCH_DIR/ship.tgz"
}

# ---- a VM configuration ----

# bench_relay DIR: L2's console (from the VMM's stdout) to L1's console and
# DIR/l2.log, timestamping L2's init marker (with a snapshot of the VMM at
# that moment: the boot's cost) and its ready marker.
bench_relay() {
	cr=$(printf '\r')
	while IFS= read -r line; do
		line=${line%"$cr"}
		case "$line" in
		# Not anchored: SeaBIOS (-M pc) leaves terminal escapes before it.
		*"SKIFF-L2: init"*)
			if [ ! -e "$1/init.snap" ]; then
				bench_snap "$BENCH_VMM_PID" >"$1/init.snap.tmp"
				mv "$1/init.snap.tmp" "$1/init.snap"
			fi
			;;
		"SKIFF-BENCH-L2: ready"*) [ -e "$1/ready.ns" ] || now_ns >"$1/ready.ns" ;;
		# fio's own run inside a block workload, the cpu job's
		# (bench_blk_window).
		"SKIFF-BENCH-L2: fio-run"* | "SKIFF-BENCH-L2: cpu-run"*)
			bench_snap "$BENCH_VMM_PID" >"$1/job-run.snap"
			;;
		"SKIFF-BENCH-L2: fio-end"* | "SKIFF-BENCH-L2: cpu-end"*)
			bench_snap "$BENCH_VMM_PID" >"$1/job-end.snap"
			;;
		esac
		printf '%s\n' "$line"
		printf '%s\n' "$line" >>"$1/l2.log"
	done
}

# bench_first_exit PID FILE: the time of the VM's first KVM exit (its
# first KVM_RUN, within the poll's ~20 ms) into FILE, from the exit counter
# of PID's VM in L1's debugfs; the same probe for every VMM. Stops at L2's
# ready marker bound or when PID is gone.
bench_first_exit() {
	fe_i=0
	while [ $fe_i -lt $((BENCH_READY_S * 50)) ] && kill -0 "$1" 2>/dev/null; do
		for fe_f in /sys/kernel/debug/kvm/"$1"-*/exits; do
			[ -r "$fe_f" ] && read -r fe_v <"$fe_f" 2>/dev/null || continue
			if [ "${fe_v:-0}" -gt 0 ]; then
				now_ns >"$2"
				return 0
			fi
		done
		sleep 0.02
		fe_i=$((fe_i + 1))
	done
}

# bench_wait_file FILE SECONDS PID: wait for FILE while PID lives.
bench_wait_file() {
	i=0
	while [ ! -e "$1" ] && [ $i -lt $(($2 * 10)) ]; do
		kill -0 "$3" 2>/dev/null || break
		sleep 0.1
		i=$((i + 1))
	done
	[ -e "$1" ]
}

# bench_qemu_opts OPTS...: a qemu configuration's words (see BENCH_CONFIGS)
# into vm_m (machine), vm_k (kernel; empty: no vmlinux for kernel=pvh),
# vm_nic (device model), vm_o (",..." for the -netdev), vm_aio (disk=AIO:
# the test disk's aio=), vm_iot (iothread: the test disk on one), vm_pm
# (cpu-pm: -overcommit cpu-pm=on), vm_vsock (vsock: vhost-vsock-pci) and
# vm_nvme_addr (nvme=ADDR: the NVMe passed through beside the NIC).
bench_qemu_opts() {
	vm_o='' vm_m=microvm,pcie=on vm_k=$L2_KERNEL vm_nic=virtio-net-pci vm_aio='' vm_iot='' vm_pm=''
	vm_pt_addr='' vm_vsock='' vm_nvme_addr=''

	for vm_a in "$@"; do
		case "$vm_a" in
		cpu-pm) vm_pm=1 ;;
		vsock) vm_vsock=1 ;;
		disk=*) vm_aio=${vm_a#disk=} ;;
		iothread) vm_iot=1 ;;
		machine=*) vm_m=${vm_a#machine=} ;;
		pt=*) vm_pt_addr=${vm_a#pt=} ;;
		nvme=*) vm_nvme_addr=${vm_a#nvme=} ;;
		nic=*) vm_nic=${vm_a#nic=} ;;
		kernel=pvh)
			vm_k=
			for vm_f in "$BENCH_KCACHE"/vmlinux-*; do
				[ -f "$vm_f" ] && vm_k=$vm_f
			done
			;;
		*) vm_o="$vm_o,$vm_a" ;;
		esac
	done
}

# bench_kvmtool_opts OPTS...: a kvmtool configuration's -n value into vm_n:
# tap0 (existing, so no script runs), skiff's MAC, then OPTS.
bench_kvmtool_opts() {
	vm_n=mode=tap,tapif=tap0,guest_mac=$BENCH_MAC
	for vm_a in "$@"; do vm_n="$vm_n,$vm_a"; done
}

# bench_vm_words ARGS...: a configuration's mem=SIZE (MiB, e.g. 2048M) and
# cpus=N words, meant for every VM kind, into vm_mem and vm_cpus (default
# L2_MEM and 1), and blk-only (the VM runs only the blk-* workloads) into
# vm_blk_only (1 or 0); the other words, in order, into vm_args. A
# malformed one stays in vm_args, for the VMM to reject loudly.
bench_vm_words() {
	vm_mem=$L2_MEM vm_cpus=1 vm_args='' vm_blk_only=0
	for vw_a in "$@"; do
		case "$vw_a" in
		blk-only) vm_blk_only=1 && continue ;;
		mem=*M) bench_is_count "${vw_a%M}" mem= && vm_mem=${vw_a#mem=} && continue ;;
		cpus=*) bench_is_count "$vw_a" cpus= && vm_cpus=${vw_a#cpus=} && continue ;;
		esac
		vm_args="$vm_args${vm_args:+ }$vw_a"
	done
}

# bench_is_count WORD PREFIX: WORD is PREFIX and a positive decimal number.
bench_is_count() {
	ic_n=${1#"$2"}
	[ "$ic_n" != "$1" ] || return 1
	case "$ic_n" in '' | 0* | *[!0-9]*) return 1 ;; esac
}

# bench_mem_kib SIZE: KiB in a size of L2_MEM's form (256M).
bench_mem_kib() { echo $((${1%M} * 1024)); }

# bench_skiff_net ARGS...: skiff's NIC unless the configuration names one:
# tap0, except where the e1000e passed through is L2's NIC (@PT); the
# NVMe's configurations keep tap0.
bench_skiff_net() {
	case " $* " in *" --net "* | *" --vfio-pci @PT"*) ;; *) echo "--net tap=tap0" ;; esac
}

# bench_vm CONFIG KIND ARGS...: boot L2 under the VMM, run the workloads,
# ask L2 to power off, wait for the VMM (SIGKILL after BENCH_EXIT_S).
bench_vm() {
	vm_c=$1 vm_kind=$2
	shift 2
	vm_d=$BENCH_DIR/$vm_c
	bench_vm_words "$@"
	# shellcheck disable=SC2086 # words of the configuration line
	set -- $vm_args
	# Guest RAM is found in smaps by this size (bench_snap).
	BENCH_MEM_KIB=$(bench_mem_kib "$vm_mem")
	vm_disk=0 vm_ip=$BENCH_L2_IP vm_has_vsock=0 BENCH_VSOCK_TARGET='' vm_nvme=0
	# snap and migrate: the VMM's API (skiff) or QMP (QEMU), reset, and
	# the file of skiff's log (a migration's rounds are read from it).
	BENCH_SM_QMP=4444 BENCH_SM_API=$BENCH_DIR/api.sock BENCH_SM_ERR=$vm_d/vmm.err
	bench_has_disk "$@" && vm_disk=1
	bench_has_nvme "$@" && vm_nvme=1
	if bench_has_vsock "$@"; then
		vm_has_vsock=1
		BENCH_VSOCK_TARGET=$(bench_vsock_target "$@")
	fi
	# Not in $(...): the setup is once per round, its flag must stay set.
	if [ "$vm_disk" = 1 ] && ! bench_blk_setup >"$vm_d/blk-setup.err" 2>&1; then
		# shellcheck disable=SC2086 # a list of names
		bench_fail_rest "$vm_c" "test disk: $(tr '\n' ' ' <"$vm_d/blk-setup.err")" $BENCH_PLAN_WORKLOADS
		return
	fi
	case "$vm_kind" in
	skiff)
		# bin=NAME first: another build of skiff (skiff-dma-fenced)
		vm_bin=skiff
		case "${1:-}" in bin=*)
			vm_bin=${1#bin=}
			shift
			;;
		esac
		vm_cmd=
		case "${1:-}" in coal=*)
			vm_cmd=" bench_coal=${1#coal=}"
			shift
			;;
		esac
		vm_net=$(bench_skiff_net "$@")
		bench_vm_pt "$@" || return
		# shellcheck disable=SC2046,SC2086 # the words again, @PT replaced
		[ -z "$vm_pt" ] || set -- $vm_pt_args
		# shellcheck disable=SC2086 # vm_net is two words or none
		set -- "$vm_bin" run --kernel "$L2_KERNEL" --initrd "$L2_INITRD" \
			--cmdline "$L2_CMDLINE$vm_cmd" --mem "$vm_mem" --cpus "$vm_cpus" --timing \
			--stats-json "$vm_d/skiff-stats.json" $vm_net "$@"
		! bench_ctl_planned || set -- "$@" --api-sock "$BENCH_SM_API"
		# The balloon as Firecracker's users set it: statistics on (its
		# actual_mib is read from them), deflate on OOM.
		! bench_balloon_planned || set -- "$@" --balloon amount=0,deflate-on-oom=on,stats=1
		# fio's disk last: with --iothreads 2 the test disk has io1 alone.
		[ "$vm_disk$vm_nvme" = 00 ] || set -- "$@" --disk "$BENCH_FIO_IMG,ro"
		;;
	qemu)
		vm_cmd=
		bench_vm_pt "$@" || return
		# shellcheck disable=SC2046,SC2086 # the words again, @PT replaced
		[ -z "$vm_pt" ] || set -- $vm_pt_args
		bench_qemu_opts "$@"
		if [ -z "$vm_k" ]; then
			# shellcheck disable=SC2086 # a list of names
			bench_fail_rest "$vm_c" "no decompressed vmlinux in $BENCH_KCACHE (the L1 image was built without skiff)" $BENCH_PLAN_WORKLOADS
			return
		fi
		# The words vfio-multi-qemu's QEMU starts with too (guest/lib.sh).
		eval "set -- $(qemu_l2_argv "$vm_m" "$vm_k" "$vm_mem" "$vm_cpus" "$L2_CMDLINE$vm_cmd")"
		# Passthrough: the e1000e is L2's only NIC, as under skiff.
		if [ -n "$vm_pt_addr" ]; then
			set -- "$@" -device "$(qemu_vfio_dev "$vm_pt_addr")"
		else
			set -- "$@" -netdev "tap,id=n0,ifname=tap0,script=no,downscript=no$vm_o" \
				-device "$vm_nic,netdev=n0,mac=$BENCH_MAC,romfile="
		fi
		[ -z "$vm_pm" ] || set -- "$@" -overcommit cpu-pm=on
		! bench_ctl_planned || set -- "$@" -qmp "tcp:127.0.0.1:$BENCH_SM_QMP,server=on,wait=off"
		[ -z "$vm_vsock" ] || set -- "$@" -device "vhost-vsock-pci,guest-cid=$BENCH_VSOCK_CID"
		# skiff's balloon, QEMU's way: statistics every second too.
		! bench_balloon_planned ||
			set -- "$@" -device virtio-balloon-pci,id=balloon0,deflate-on-oom=on,guest-stats-polling-interval=1
		# The test disk as QEMU's users tune it (cache=none: O_DIRECT, no
		# page cache in L1), on an iothread if asked; fio's disk plain.
		if [ -n "$vm_aio" ]; then
			[ -z "$vm_iot" ] || set -- "$@" -object iothread,id=io0
			set -- "$@" -drive "file=$BENCH_BLK_DEV,if=none,id=d0,format=raw,cache=none,aio=$vm_aio" \
				-device "virtio-blk-pci,drive=d0${vm_iot:+,iothread=io0}" \
				-drive "file=$BENCH_FIO_IMG,if=none,id=d1,format=raw,readonly=on" \
				-device virtio-blk-pci,drive=d1
		fi
		# The NVMe beside the tap NIC, and fio's disk (skiff's rom=off
		# default is rombar=0).
		if [ -n "$vm_nvme_addr" ]; then
			set -- "$@" -device "$(qemu_vfio_dev "$vm_nvme_addr")" \
				-drive "file=$BENCH_FIO_IMG,if=none,id=d1,format=raw,readonly=on" \
				-device virtio-blk-pci,drive=d1
		fi
		;;
	kvmtool)
		if ! command -v lkvm >/dev/null; then
			# shellcheck disable=SC2086 # a list of names
			bench_fail_rest "$vm_c" "no lkvm in L1 (bench/build-kvmtool.sh)" $BENCH_PLAN_WORKLOADS
			return
		fi
		bench_kvmtool_opts "$@"
		# Its own kernel command line comes first (noapic noacpi
		# pci=conf1 reboot=k ... console=ttyS0); -p appends L2's. HOME:
		# where it keeps the socket "lkvm stop" uses.
		mkdir -p "$BENCH_DIR/lkvm"
		set -- env HOME="$BENCH_DIR/lkvm" lkvm run --name l2 -k "$L2_KERNEL" \
			-i "$L2_INITRD" -p "$L2_CMDLINE" -m "${vm_mem%M}" -c "$vm_cpus" -n "$vm_n"
		;;
	*)
		# shellcheck disable=SC2086 # a list of names
		bench_fail_rest "$vm_c" "unknown kind $vm_kind" $BENCH_PLAN_WORKLOADS
		return
		;;
	esac
	# As run, with L1's $HOME as ~ (the kernel cache is under it): the
	# reports name no path of the machine that made them.
	echo "$*" | sed "s|${HOME:-/nonexistent}/|~/|g" >"$vm_d/cmdline"
	# kept for snap's restore and migrate's target
	! bench_sm_planned || BENCH_SM_CMD=$(sh_quote "$@")
	ip neigh flush dev tap0 2>/dev/null
	bench_mark "start rep=$BENCH_REP config=$vm_c"
	rm -f "$BENCH_DIR/con.fifo"
	mkfifo "$BENCH_DIR/con.fifo"
	# The VMM's child blocks opening the FIFO until the relay opens it, so
	# t0 is taken before the VMM can start.
	"$@" </dev/null >"$BENCH_DIR/con.fifo" 2>"$vm_d/vmm.err" &
	BENCH_VMM_PID=$!
	BENCH_EXTRA_TASKS=
	vm_t0=$(now_ns)
	bench_relay "$vm_d" <"$BENCH_DIR/con.fifo" &
	vm_relay=$!
	# KVM's counters now too: L1 holds an idle VM whose counts must not
	# land in the boot's deltas.
	{
		echo "time $vm_t0"
		bench_snap_kvm
	} >"$vm_d/start.snap"
	bench_first_exit "$BENCH_VMM_PID" "$vm_d/first_exit.ns" &
	vm_poll=$!
	vm_why=
	if bench_wait_file "$vm_d/ready.ns" "$BENCH_READY_S" "$BENCH_VMM_PID"; then
		# The VMM's vhost workers are kernel threads "vhost-PID", made
		# when the driver starts the device: find them once it is up.
		BENCH_EXTRA_TASKS=$(grep -lx "vhost-$BENCH_VMM_PID" /proc/[0-9]*/comm 2>/dev/null |
			sed 's#/comm$##' | tr '\n' ' ')
		# ARP and a first exchange before measuring; L2 must answer.
		vm_i=0
		until ping -c 1 -W 2 "$vm_ip" >/dev/null 2>&1; do
			vm_i=$((vm_i + 1))
			[ $vm_i -lt 10 ] || { vm_why="L2 does not answer ping"; break; }
		done
	elif kill -0 "$BENCH_VMM_PID" 2>/dev/null; then
		vm_why="L2 not ready within ${BENCH_READY_S}s"
	else
		vm_why="VMM exited before L2 was ready: $(tail -n 2 "$vm_d/vmm.err" | tr '\n' ' ')"
	fi

	# boot: start -> L2's init marker, with the VMM's cost up to then.
	if [ "$vm_blk_only" = 0 ] && echo "$BENCH_PLAN_WORKLOADS" | grep -qw boot; then
		if [ -e "$vm_d/init.snap" ]; then
			mkdir -p "$vm_d/boot"
			bench_mark "run rep=$BENCH_REP config=$vm_c workload=boot"
			bench_delta "$vm_d/start.snap" "$vm_d/init.snap" >"$vm_d/boot/metrics"
			vm_init=$(awk '$1 == "time" { print $2 }' "$vm_d/init.snap")
			echo "boot_init_ms=$(((vm_init - vm_t0) / 1000000))" >>"$vm_d/boot/metrics"
			[ -e "$vm_d/ready.ns" ] &&
				echo "boot_ready_ms=$((($(cat "$vm_d/ready.ns") - vm_t0) / 1000000))" >>"$vm_d/boot/metrics"
			vm_us=$(sed -n 's/^skiff: first KVM_RUN after \([0-9]*\) us.*/\1/p' "$vm_d/vmm.err" | head -n1)
			[ -n "$vm_us" ] && awk -v u="$vm_us" 'BEGIN { printf "boot_first_kvm_run_ms=%.3f\n", u / 1000 }' >>"$vm_d/boot/metrics"
			[ -e "$vm_d/first_exit.ns" ] &&
				echo "boot_first_exit_ms=$((($(cat "$vm_d/first_exit.ns") - vm_t0) / 1000000))" >>"$vm_d/boot/metrics"
			# The guest's clock starts after its kernel is decompressed:
			# what comes before is firmware, loading and decompression.
			vm_up=$(sed -n 's/.*SKIFF-L2: init uptime=\([0-9.]*\).*/\1/p' "$vm_d/l2.log" | head -n1)
			[ -n "$vm_up" ] && awk -v u="$vm_up" -v i="$(((vm_init - vm_t0) / 1000000))" 'BEGIN {
				printf "boot_guest_uptime_ms=%.0f\nboot_pre_kernel_ms=%.0f\n", u * 1000, i - u * 1000 }' >>"$vm_d/boot/metrics"
			bench_mark "done rep=$BENCH_REP config=$vm_c workload=boot rc=0"
		else
			bench_fail_rest "$vm_c" "no L2 init marker: ${vm_why:-boot failed}" boot
		fi
	fi
	# shellcheck disable=SC2086 # a list of names
	for vm_w in $(bench_idle_first $BENCH_PLAN_WORKLOADS); do
		[ "$vm_w" = boot ] && continue
		bench_applies "$vm_w" "$vm_disk" "$vm_has_vsock" "$vm_blk_only" "$vm_nvme" || continue
		case " $BENCH_LAST_WORKLOADS " in *" $vm_w "*)
			if ! bench_sm_applies "$vm_kind"; then
				echo "bench: $vm_c: $vm_kind has no snapshot, live migration or balloon here: $vm_w skipped"
				continue
			fi
			;;
		esac
		if [ -z "$vm_why" ]; then
			bench_run_workload "$vm_c" "$vm_w" "$vm_ip" "$BENCH_VMM_PID"
		else
			bench_fail_rest "$vm_c" "$vm_why" "$vm_w"
		fi
	done

	# Ask L2 to power off; kill the VMM if it does not stop.
	[ -z "$vm_why" ] && nc -w 5 "$vm_ip" "$BENCH_QUIT_PORT" </dev/null >/dev/null 2>&1
	# kvmtool's guest has no ACPI (its default noacpi), so its poweroff
	# only halts: once L2 says it powers off, ask kvmtool to stop.
	if [ "$vm_kind" = kvmtool ]; then
		vm_i=0
		until grep -q 'SKIFF-L2: poweroff' "$vm_d/l2.log" 2>/dev/null || [ $vm_i -ge 50 ]; do
			sleep 0.1
			vm_i=$((vm_i + 1))
		done
		sleep 0.5
		HOME="$BENCH_DIR/lkvm" lkvm stop --name l2 >/dev/null 2>&1
	fi
	vm_i=0
	while kill -0 "$BENCH_VMM_PID" 2>/dev/null && [ $vm_i -lt $((BENCH_EXIT_S * 10)) ]; do
		sleep 0.1
		vm_i=$((vm_i + 1))
	done
	if kill -0 "$BENCH_VMM_PID" 2>/dev/null; then
		echo "bench: $vm_c still running ${BENCH_EXIT_S}s after the quit request: killed"
		kill -9 "$BENCH_VMM_PID"
	fi
	wait "$BENCH_VMM_PID"
	echo "$?" >"$vm_d/vmm.rc"
	[ -z "${BENCH_SM_UNTAP:-}" ] || bench_sm_untap
	wait "$vm_relay"
	kill "$vm_poll" 2>/dev/null
	wait "$vm_poll" 2>/dev/null
	rm -f "$BENCH_DIR/con.fifo"
}

# ---- native-veth ----

bench_native_setup() {
	[ -e /run/netns/bench ] && return 0
	[ -e /sys/module/veth ] || insmod /lib/modules/bench/veth.ko || return 1
	ip netns add bench &&
		ip link add veth0 type veth peer name veth1 &&
		ip link set veth1 netns bench &&
		ip addr add "$BENCH_NS_L1_IP/24" dev veth0 &&
		ip link set veth0 up &&
		ip netns exec bench ip addr add "$BENCH_NS_IP/24" dev veth1 &&
		ip netns exec bench ip link set veth1 up &&
		ip netns exec bench ip link set lo up &&
		ip netns exec bench iperf3 -s -D >/dev/null 2>&1 &&
		{ ip netns exec bench sockperf server -i "$BENCH_NS_IP" \
			-p "$BENCH_SOCKPERF_PORT" >/dev/null 2>&1 & } &&
		{ ip netns exec bench sockperf server --tcp -i "$BENCH_NS_IP" \
			-p "$BENCH_SOCKPERF_PORT" >/dev/null 2>&1 & } &&
		sleep 1
}

# bench_native CONFIG [pt]: the workloads with no VM: to a namespace over
# veth, or (pt) over the passthrough NIC with L1's own driver.
bench_native() {
	c=$1 n_ip=$BENCH_NS_IP
	if [ "${2:-}" = pt ]; then
		n_ip=$BENCH_PT_IP
		if ! bench_pt_native_setup >"$BENCH_DIR/$c/setup.err" 2>&1; then
			# shellcheck disable=SC2086 # a list of names
			bench_fail_rest "$c" "e1000e setup: $(tail -n 2 "$BENCH_DIR/$c/setup.err" | tr '\n' ' ')" $BENCH_PLAN_WORKLOADS
			bench_pt_native_stop
			return
		fi
	elif ! bench_native_setup; then
		# shellcheck disable=SC2086 # a list of names
		bench_fail_rest "$c" "veth/netns setup failed" $BENCH_PLAN_WORKLOADS
		return
	fi
	for w in $BENCH_PLAN_WORKLOADS; do
		case " $BENCH_VM_ONLY " in *" $w "*) continue ;; esac
		bench_applies "$w" 0 0 || continue
		bench_run_workload "$c" "$w" "$n_ip" ""
	done
	[ "${2:-}" != pt ] || bench_pt_native_stop
}

# ---- passthrough (VFIO) ----

# bench_pt_setup: once per round, the passthrough NIC's L1 side: the
# e1000e's address into BENCH_PT_ADDR, L1's virtio-net (its hub peer) up
# at BENCH_PT_L1_IP, the interrupt and reset settings vfio needs here
# (no interrupt remapping in L0's IOMMU; QEMU's e1000e resets only by its
# bus: see the vfio scenario). Messages on stdout; failure if any step
# failed.
bench_pt_setup() {
	[ -z "$BENCH_PT_ADDR" ] || return 0
	ps_addr=$(pci_find 0x8086 0x10d3)
	[ -n "$ps_addr" ] || { echo "no e1000e in L1 (L0 without BENCH_PT_L0_ARGS?)"; return 1; }
	ps_nic=$(pci_netif virtio_net) || { echo "no virtio-net NIC in L1"; return 1; }
	ip addr add "$BENCH_PT_L1_IP/24" dev "$ps_nic" && ip link set "$ps_nic" up ||
		{ echo "cannot bring up $ps_nic"; return 1; }
	echo Y >/sys/module/vfio_iommu_type1/parameters/allow_unsafe_interrupts ||
		{ echo "cannot allow unsafe interrupts"; return 1; }
	echo bus >"/sys/bus/pci/devices/$ps_addr/reset_method" ||
		{ echo "cannot select the bus reset of $ps_addr"; return 1; }
	BENCH_PT_ADDR=$ps_addr
}

# bench_vm_pt ARGS...: for a configuration with an @PT word (any VMM),
# L1's side of passthrough: the e1000e bound to vfio-pci, L2 reached at
# BENCH_PT_IP (vm_ip, and vm_cmd for L2's command line); vm_pt set and the
# words with @PT replaced in vm_pt_args. Without @PT, vm_pt is empty. On a
# failure the configuration's workloads fail, and it returns 1.
bench_vm_pt() {
	vm_pt='' vm_pt_args=''
	if bench_has_nvme "$@"; then
		# The NVMe: L2 keeps its address and NIC.
		if ! bench_nvme_setup >"$vm_d/setup.err" 2>&1; then
			# shellcheck disable=SC2086 # a list of names
			bench_fail_rest "$vm_c" "NVMe passthrough setup: $(tail -n 2 "$vm_d/setup.err" | tr '\n' ' ')" $BENCH_PLAN_WORKLOADS
			return 1
		fi
		vm_pt=$BENCH_NVME_ADDR
		vm_pt_args=$(bench_subst @NVME "$BENCH_NVME_ADDR" "$@")
		return 0
	fi
	case " $* " in *" @PT"* | *"=@PT"*) ;; *) return 0 ;; esac
	if ! bench_pt_setup >"$vm_d/setup.err" 2>&1 || ! bench_pt_bind vfio-pci >>"$vm_d/setup.err" 2>&1; then
		# shellcheck disable=SC2086 # a list of names
		bench_fail_rest "$vm_c" "passthrough setup: $(tail -n 2 "$vm_d/setup.err" | tr '\n' ' ')" $BENCH_PLAN_WORKLOADS
		return 1
	fi
	vm_ip=$BENCH_PT_IP vm_cmd="$vm_cmd bench_ip=$BENCH_PT_IP" vm_pt=$BENCH_PT_ADDR
	vm_pt_args=$(bench_pt_subst "$BENCH_PT_ADDR" "$@")
}

# bench_pt_subst ADDR WORDS...: the words, each @PT at a word's start
# replaced by ADDR.
bench_pt_subst() { bench_subst @PT "$@"; }

# bench_subst TOKEN ADDR WORDS...: the words, each TOKEN at a word's start
# or after its "=" replaced by ADDR.
bench_subst() {
	su_t=$1 su_addr=$2 su_out=
	shift 2
	for su_a in "$@"; do
		case "$su_a" in
		"$su_t"*) su_a=$su_addr${su_a#"$su_t"} ;;
		*="$su_t"*) su_a=${su_a%%="$su_t"*}=$su_addr${su_a#*="$su_t"} ;;
		esac
		su_out="$su_out${su_out:+ }$su_a"
	done
	echo "$su_out"
}

# bench_nvme_setup: once per round, the NVMe's L1 side: its address into
# BENCH_NVME_ADDR, bound to vfio-pci (L1 has no nvme driver: the function
# starts with none), interrupts allowed without remapping as for the
# e1000e. Messages on stdout; failure if any step failed.
bench_nvme_setup() {
	[ -z "$BENCH_NVME_ADDR" ] || return 0
	ns_addr=$(pci_find 0x1b36 0x0010)
	[ -n "$ns_addr" ] || { echo "no NVMe in L1 (L0 without BENCH_NVME_L0_ARGS?)"; return 1; }
	echo Y >/sys/module/vfio_iommu_type1/parameters/allow_unsafe_interrupts ||
		{ echo "cannot allow unsafe interrupts"; return 1; }
	pci_bind "$ns_addr" vfio-pci || { echo "cannot bind $ns_addr to vfio-pci"; return 1; }
	BENCH_NVME_ADDR=$ns_addr
}

# bench_pt_bind DRIVER: the e1000e bound to DRIVER alone (vfio-pci for
# skiff, e1000e for L1 itself).
bench_pt_bind() {
	pci_bind "$BENCH_PT_ADDR" "$1" || { echo "cannot bind $BENCH_PT_ADDR to $1"; return 1; }
}

# bench_pt_native_setup: L1 itself on the e1000e, in namespace benchpt at
# BENCH_PT_IP, with the servers L2 would run; the e1000e's link must come
# up and reach L1's virtio-net.
bench_pt_native_setup() {
	bench_pt_setup && bench_pt_bind e1000e || return 1
	[ -e /run/netns/benchpt ] || ip netns add benchpt || return 1
	pn_i=0
	until pn_eth=$(pci_netif e1000e); do
		pn_i=$((pn_i + 1))
		[ $pn_i -lt 50 ] || { echo "the e1000e has no interface"; return 1; }
		sleep 0.1
	done
	ip link set "$pn_eth" netns benchpt &&
		ip netns exec benchpt ip addr add "$BENCH_PT_IP/24" dev "$pn_eth" &&
		ip netns exec benchpt ip link set "$pn_eth" up &&
		ip netns exec benchpt ip link set lo up || { echo "benchpt setup failed"; return 1; }
	ip netns exec benchpt iperf3 -s -D >/dev/null 2>&1 &&
		{ ip netns exec benchpt sockperf server -i "$BENCH_PT_IP" \
			-p "$BENCH_SOCKPERF_PORT" >/dev/null 2>&1 & } &&
		{ ip netns exec benchpt sockperf server --tcp -i "$BENCH_PT_IP" \
			-p "$BENCH_SOCKPERF_PORT" >/dev/null 2>&1 & } || return 1
	pn_i=0
	until ping -c 1 -W 2 "$BENCH_PT_IP" >/dev/null 2>&1; do
		pn_i=$((pn_i + 1))
		[ $pn_i -lt 15 ] || { echo "the e1000e's namespace does not answer ping"; return 1; }
	done
}

# bench_pt_native_stop: the servers gone, the e1000e back for skiff.
bench_pt_native_stop() {
	for pn_p in $(ip netns pids benchpt 2>/dev/null); do kill "$pn_p" 2>/dev/null; done
	sleep 0.5
	bench_pt_bind vfio-pci >/dev/null
}

# ---- block I/O (fio in L2) ----

# bench_configs_where PRED: the names of the configurations (both lists)
# whose KIND ARGS words PRED accepts, one a line (bench/run.sh asks, so
# host and L1 apply the same rule).
bench_configs_where() {
	printf '%s\n%s\n' "$BENCH_CONFIGS" "$BENCH_EXTRA_CONFIGS" | while read -r cw_n cw_rest; do
		# shellcheck disable=SC2086 # KIND ARGS as words
		[ -n "$cw_n" ] && "$1" $cw_rest && echo "$cw_n"
	done
	return 0
}

# bench_has_disk KIND ARGS...: whether a configuration gives L2 a test
# disk (skiff: a --disk; qemu: a disk= word), i.e. runs the blk-* workloads.
bench_has_disk() {
	case " $* " in *" --disk "* | *" disk="*) return 0 ;; esac
	return 1
}

# bench_disk_configs: the names of the configurations with a test disk, one
# a line (bench/run.sh asks, so host and L1 apply the same rule).
bench_disk_configs() { bench_configs_where bench_has_disk; }

# bench_has_vsock KIND ARGS...: whether a configuration gives L2 a vsock
# (skiff: a --vsock; qemu: the word vsock), i.e. runs the vsock-* workloads.
bench_has_vsock() {
	case " $* " in *" --vsock "* | *" vsock "*) return 0 ;; esac
	return 1
}

# bench_vsock_configs: the names of the configurations with a vsock, one a
# line (bench/run.sh asks, as for bench_disk_configs).
bench_vsock_configs() { bench_configs_where bench_has_vsock; }

# bench_pt_configs: the names of the passthrough configurations (an @PT
# argument, or native pt), one a line: bench/run.sh asks, to give L0 and
# L1 the hardware and modules they need.
bench_is_pt() {
	case " $* " in *" @PT"* | *"=@PT"* | " native pt "*) return 0 ;; esac
	return 1
}
bench_pt_configs() { bench_configs_where bench_is_pt; }

# bench_has_nvme KIND ARGS...: whether a configuration passes L0's NVMe
# through (an @NVME word), i.e. runs the nvme-* workloads.
bench_has_nvme() {
	case " $* " in *" @NVME"* | *"=@NVME"*) return 0 ;; esac
	return 1
}

# bench_nvme_configs: the names of the NVMe configurations, one a line
# (bench/run.sh asks, as for bench_disk_configs).
bench_nvme_configs() { bench_configs_where bench_has_nvme; }

# bench_l0_args HAS_PT HAS_NVME: L0's extra arguments for a plan with the
# e1000e's configurations, the NVMe's, or both (each 1 or 0): the IOMMU
# once and first, then each device's. The e1000e's alone are
# BENCH_PT_L0_ARGS as they were, so earlier rounds' L0 stays the same.
bench_l0_args() {
	[ "$1" = 1 ] && echo "$BENCH_PT_L0_ARGS"
	[ "$2" = 1 ] || return 0
	[ "$1" = 1 ] || echo "$BENCH_PT_L0_IOMMU"
	echo "$BENCH_NVME_L0_ARGS"
}

# bench_applies W HAS_DISK HAS_VSOCK BLK_ONLY HAS_NVME: whether workload W
# runs on a VM configuration (each 1 or 0; BLK_ONLY: only the blk-*
# workloads). A pair that does not apply is skipped without a trace: the
# host never planned it (ingest.workloads_for).
bench_applies() {
	case "$1" in
	blk-*) [ "$2" = 1 ] ;;
	nvme-*) [ "${5:-0}" = 1 ] && [ "${4:-0}" = 0 ] ;;
	vsock-*) [ "$3" = 1 ] && [ "${4:-0}" = 0 ] ;;
	*) [ "${4:-0}" = 0 ] ;;
	esac
}

# bench_blk_only_configs: the names of the configurations with the word
# blk-only, one a line (bench/run.sh asks, as for bench_disk_configs).
bench_is_blk_only() {
	case " $* " in *" blk-only "*) return 0 ;; esac
	return 1
}
bench_blk_only_configs() { bench_configs_where bench_is_blk_only; }

# bench_blk_setup: the test disk, once per round: loop module, a
# zero-filled image in tmpfs, the loop device over it.
bench_blk_setup() {
	[ -z "$BENCH_BLK_READY" ] || return 0
	[ -e "$BENCH_FIO_IMG" ] || { echo "no $BENCH_FIO_IMG in L1 (bench/run.sh packs it)"; return 1; }
	[ -e /sys/module/loop ] || insmod /lib/modules/bench/loop.ko || { echo "cannot load loop"; return 1; }
	wait_for "$BENCH_BLK_DEV" || { echo "no $BENCH_BLK_DEV"; return 1; }
	dd if=/dev/zero of="$BENCH_BLK_IMG" bs=1M count="$BENCH_BLK_MB" 2>/dev/null &&
		losetup "$BENCH_BLK_DEV" "$BENCH_BLK_IMG" || { echo "losetup failed"; return 1; }
	BENCH_BLK_READY=1
}

# bench_blk_settle: before each block run, every run starts alike: earlier
# runs' writes written back, L1's page cache of the loop device dropped
# (skiff opens it buffered, QEMU with O_DIRECT).
bench_blk_settle() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# bench_blk_window DIR TAG: a block run's metrics over fio's own run (TAG
# fio; cpu: the cpu job's), from the snapshots L1's relay took at L2's
# TAG-run and TAG-end markers (fio's
# exec_prerun/postrun), not over the whole request: fio's start in L2
# (loading and relocating 62 libraries at emulated speed) took ~3.5 s of
# a 2 s run's 5.5 s window in the first smoke run, and would swamp the
# cost per I/O. Without both markers the request's window stays.
bench_blk_window() {
	bw_c=${1%/*}
	if [ -s "$bw_c/job-run.snap" ] && [ -s "$bw_c/job-end.snap" ]; then
		mv "$bw_c/job-run.snap" "$1/snap.$2-run"
		mv "$bw_c/job-end.snap" "$1/snap.$2-end"
		bench_delta "$1/snap.$2-run" "$1/snap.$2-end" >"$1/metrics"
	fi
	rm -f "$bw_c/job-run.snap" "$bw_c/job-end.snap"
}

# bench_blk_run L2IP W SECS BOUND: ask L2's fio server for workload W of
# SECS seconds; fio's JSON on stdout. Bounded: L2 bounds fio itself.
bench_blk_run() {
	echo "$2 $3" | timeout "$4" nc "$1" "$BENCH_BLK_PORT"
}

# bench_fio_job W: fio's options for block workload W (4 KiB random at
# queue depth 1 and 32, 1 MiB sequential at depth 8; on the NVMe, reads
# only: 128 KiB sequential at depth 32, as NVMe drives are rated, and
# 4 KiB random at depth 1 and 32), or failure.
bench_fio_job() {
	case "$1" in
	nvme-seqread) echo "--rw=read --bs=128k --iodepth=32" ;;
	nvme-randread-qd1) echo "--rw=randread --bs=4k --iodepth=1" ;;
	nvme-randread-qd32) echo "--rw=randread --bs=4k --iodepth=32" ;;
	blk-randread-qd1) echo "--rw=randread --bs=4k --iodepth=1" ;;
	blk-randread-qd32) echo "--rw=randread --bs=4k --iodepth=32" ;;
	blk-randwrite-qd1) echo "--rw=randwrite --bs=4k --iodepth=1" ;;
	blk-randwrite-qd32) echo "--rw=randwrite --bs=4k --iodepth=32" ;;
	blk-seqread) echo "--rw=read --bs=1M --iodepth=8" ;;
	blk-seqwrite) echo "--rw=write --bs=1M --iodepth=8" ;;
	*) return 1 ;;
	esac
}

# Where bench_blk_l2 notes L2's test disk and NVMe namespace for
# bench_blk_serve (variables: the tests point them elsewhere).
BENCH_BLK_DEV_FILE=/tmp/bench-blk-dev
BENCH_NVME_DEV_FILE=/tmp/bench-nvme-dev

# bench_blk_serve: in L2, one request of L1 (stdin and stdout are the
# connection): "WORKLOAD SECS" in, fio's JSON (and its messages) out. A
# bounded, time-based, direct-I/O run with libaio on the test disk, or
# for nvme-* on the NVMe's namespace, which fio may only read
# (--readonly: it refuses any write job).
bench_blk_serve() {
	read -r bv_w bv_s || return 0
	bv_job=$(bench_fio_job "$bv_w") || { echo "no block workload $bv_w"; return 0; }
	case "$bv_s" in '' | *[!0-9]*) echo "bad run length $bv_s"; return 0 ;; esac
	bv_dev=$(cat "$BENCH_BLK_DEV_FILE" 2>/dev/null)
	case "$bv_w" in nvme-*)
		bv_dev=$(cat "$BENCH_NVME_DEV_FILE" 2>/dev/null) bv_job="$bv_job --readonly"
		;;
	esac
	[ -n "$bv_dev" ] || { echo "no device in L2 for $bv_w"; return 0; }
	# The markers bound fio's run for L1's snapshots (bench_blk_window).
	# fio appends its own redirection (to /tmp/W.prerun.txt) to the
	# command: the console's is inside a sh -c, so it holds.
	cd /tmp || return 0
	# shellcheck disable=SC2086 # fio and its options as words
	timeout $((bv_s + 25)) $BENCH_FIO --name="$bv_w" --filename="$bv_dev" $bv_job \
		--ioengine=libaio --direct=1 --time_based --runtime="$bv_s" \
		--exec_prerun="sh -c 'echo SKIFF-BENCH-L2: fio-run >/dev/console'" \
		--exec_postrun="sh -c 'echo SKIFF-BENCH-L2: fio-end >/dev/console'" \
		--output-format=json 2>&1
}

# bench_blk_l2: in L2, when the VMM gave it fio's (read-only) disk: mount
# it, note the writable one as the test disk, load fio once (its libraries
# into L2's page cache, before any measured run) and serve L1's requests.
# Nothing without such a disk.
bench_blk_l2() {
	bl_tools='' bl_test=''
	for bl_d in /sys/block/vd*; do
		[ -e "$bl_d/ro" ] || continue
		if [ "$(cat "$bl_d/ro")" = 1 ]; then bl_tools=/dev/${bl_d##*/}; else bl_test=/dev/${bl_d##*/}; fi
	done
	[ -n "$bl_tools" ] || return 0
	while read -r bl_m; do
		insmod "/lib/modules/bench/$bl_m.ko" || echo "SKIFF-BENCH-L2: insmod $bl_m failed"
	done </lib/modules/bench/order
	mkdir -p "$BENCH_FIO_MNT"
	if ! mount -t ext4 -o ro "$bl_tools" "$BENCH_FIO_MNT"; then
		echo "SKIFF-BENCH-L2: cannot mount fio's disk $bl_tools"
		return 0
	fi
	echo "$bl_test" >"$BENCH_BLK_DEV_FILE"
	bench_nvme_l2
	# shellcheck disable=SC2086 # a command line
	echo "SKIFF-BENCH-L2: blk test=$bl_test nvme=$(cat "$BENCH_NVME_DEV_FILE" 2>/dev/null) fio=$bl_tools $($BENCH_FIO --version)"
	nc -ll -p "$BENCH_BLK_PORT" -e /bin/sh -c '. /testbed/lib.sh; . /testbed/scenario.sh; bench_blk_serve' &
}

# bench_nvme_l2: in L2, when the VMM passed the NVMe through (an NVMe
# controller, PCI class 0x010802): the nvme driver loaded (bench/run.sh
# packs it apart, lib/modules/bench-nvme) and its first namespace noted
# for bench_blk_serve once the controller is up (bounded: 30 s).
bench_nvme_l2() {
	bn_has=0
	for bn_d in /sys/bus/pci/devices/*; do
		[ "$(cat "$bn_d/class" 2>/dev/null)" = 0x010802 ] && bn_has=1
	done
	[ "$bn_has" = 1 ] || return 0
	[ -e /lib/modules/bench-nvme/order ] || { echo "SKIFF-BENCH-L2: no nvme driver packed"; return 0; }
	while read -r bn_m; do
		insmod "/lib/modules/bench-nvme/$bn_m.ko" || echo "SKIFF-BENCH-L2: insmod $bn_m failed"
	done </lib/modules/bench-nvme/order
	bn_i=0
	until [ -e /sys/block/nvme0n1 ] && [ -b /dev/nvme0n1 ]; do
		bn_i=$((bn_i + 1))
		[ $bn_i -lt 300 ] || { echo "SKIFF-BENCH-L2: no NVMe namespace"; return 0; }
		sleep 0.1
	done
	echo /dev/nvme0n1 >"$BENCH_NVME_DEV_FILE"
}

# ---- L1 and L2 ----

l1() {
	# snap and migrate (bench/run.sh packs the file when they are planned)
	# shellcheck disable=SC1091
	[ ! -e /testbed/bench-snapmig.sh ] || . /testbed/bench-snapmig.sh
	# vsock and balloon (packed when planned, as bench-snapmig.sh)
	# shellcheck disable=SC1091
	[ ! -e /testbed/bench-vsock.sh ] || . /testbed/bench-vsock.sh
	# a diagnostic trace (BENCH_TRACE on the host: bench/bench-trace.sh)
	# shellcheck disable=SC1091
	[ ! -e /testbed/bench-trace.sh ] || . /testbed/bench-trace.sh
	BENCH_TRACE=$(bench_arg bench_trace '')
	# the cpu workload (packed when planned)
	# shellcheck disable=SC1091
	[ ! -e /testbed/bench-cpu.sh ] || . /testbed/bench-cpu.sh
	# migrate-busy's load (packed when planned)
	# shellcheck disable=SC1091
	[ ! -e /testbed/bench-migbusy.sh ] || . /testbed/bench-migbusy.sh
	BENCH_REP=$(bench_arg bench_rep 1)
	BENCH_SECS=$(bench_arg bench_secs 2)
	# The smoke test's default: every configuration, but native ones only
	# if bench/run.sh packed the veth module (run-one.sh does not),
	native=1
	[ -e /lib/modules/bench/veth.ko ] || [ -e /sys/module/veth ] || native=0
	# and kvmtool's only if it was built (tb_pack_kvmtool).
	kvmtool=1
	command -v lkvm >/dev/null || kvmtool=0
	configs=$(echo "$BENCH_CONFIGS" | awk -v native=$native -v kvmtool=$kvmtool \
		'NF && (native || $2 != "native") && (kvmtool || $2 != "kvmtool") { print $1 }' | tr '\n' ',')
	configs=$(bench_arg bench_configs "$configs")
	BENCH_PLAN_WORKLOADS=$(bench_arg bench_workloads boot,ping,tcp-g2h | tr ',' ' ')
	BENCH_BAD=
	mkdir -p "$BENCH_DIR"
	# khugepaged once wedged L1 in the middle of a round (a soft lockup
	# while it collapsed pages during an L2 run; L1 never recovered). Huge
	# pages at fault time stay as they are (both VMMs madvise guest RAM);
	# only the background collapsing is put off for an hour.
	thp=/sys/kernel/mm/transparent_hugepage
	[ -w $thp/khugepaged/scan_sleep_millisecs ] &&
		echo 3600000 >$thp/khugepaged/scan_sleep_millisecs
	echo "bench: L1 THP enabled: $(cat $thp/enabled 2>/dev/null), defrag: $(cat $thp/defrag 2>/dev/null)"
	tap_up "$BENCH_L1_IP" || { fail "tap0 setup failed"; return; }
	bench_mark "round rep=$BENCH_REP configs=$configs workloads=$BENCH_PLAN_WORKLOADS secs=$BENCH_SECS"
	for c in $(echo "$configs" | tr ',' ' '); do
		line=$(bench_config_line "$c")
		mkdir -p "$BENCH_DIR/$c"
		if [ -z "$line" ]; then
			# shellcheck disable=SC2086 # a list of names
			bench_fail_rest "$c" "no configuration $c" $BENCH_PLAN_WORKLOADS
		else
			# shellcheck disable=SC2086 # KIND ARGS...
			set -- $line
			case "$1" in
			native) bench_native "$c" "${2:-}" ;;
			*) bench_vm "$c" "$@" ;;
			esac
		fi
		bench_mark "config-done rep=$BENCH_REP config=$c"
		bench_ship "$c"
	done
	if [ -n "$BENCH_BAD" ]; then fail "$BENCH_BAD"; else pass; fi
}

l2() {
	# Passthrough boots give L2 another address (bench_vm).
	BENCH_L2_IP=$(bench_arg bench_ip "$BENCH_L2_IP")
	wait_for /sys/class/net/eth0 || { echo "SKIFF-BENCH-L2: no eth0"; return; }
	if ! ip addr add "$BENCH_L2_IP/24" dev eth0 || ! ip link set eth0 up; then
		echo "SKIFF-BENCH-L2: eth0 setup failed"
		return
	fi
	# coal=: the guest's coalescing (bench_vm). tx-frames stays non-zero:
	# Linux 6.1 reads 0 as "TX NAPI off", refused while the link is up.
	coal=$(bench_arg bench_coal "")
	if [ -n "$coal" ]; then
		# shellcheck disable=SC2046 # four numbers between slashes
		set -- $(echo "$coal" | tr / ' ')
		if ! ethtool -C eth0 rx-usecs "$1" rx-frames "$2" tx-usecs "$3" tx-frames "$4"; then
			echo "SKIFF-BENCH-L2: ethtool -C $coal failed"
			return
		fi
	fi
	iperf3 -s -D >/dev/null 2>&1
	if command -v sockperf >/dev/null; then
		sockperf server -i "$BENCH_L2_IP" -p "$BENCH_SOCKPERF_PORT" >/dev/null 2>&1 &
		# tcp-rr's: sockperf serves one protocol per process (TCP and
		# UDP ports are apart, so the same number).
		sockperf server --tcp -i "$BENCH_L2_IP" -p "$BENCH_SOCKPERF_PORT" >/dev/null 2>&1 &
	fi
	bench_blk_l2
	# The cpu workload's job server (bench-cpu.sh, packed when planned).
	if [ -e /testbed/bench-cpu.sh ]; then
		# shellcheck disable=SC1091
		. /testbed/bench-cpu.sh
		bench_cpu_l2
	fi
	# migrate-busy's load server (bench-migbusy.sh, packed when planned).
	if [ -e /testbed/bench-migbusy.sh ]; then
		# shellcheck disable=SC1091
		. /testbed/bench-migbusy.sh
		bench_mb_l2
	fi
	# The vsock's servers and the balloon's fill server, where this VM
	# has those devices (bench-vsock.sh).
	if [ -e /testbed/bench-vsock.sh ]; then
		# shellcheck disable=SC1091
		. /testbed/bench-vsock.sh
		bench_vb_l2
	fi
	echo "SKIFF-BENCH-L2: ready"
	# Until L1 connects to the quit port (bounded: L1 would be gone).
	timeout 1800 nc -l -p "$BENCH_QUIT_PORT" </dev/null >/dev/null 2>&1
}
