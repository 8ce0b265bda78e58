# SPDX-License-Identifier: Apache-2.0
# vfio-multi with QEMU as L2's VMM instead of skiff (issue 37.5): the
# check of the testbed before blaming skiff for a vfio-multi failure. The
# same L0 (IOMMU, the e1000e below a root port, two NVMe behind a
# PCIe-to-PCI bridge in one IOMMU group, the ivshmem's 8 GiB BAR2, L1's
# virtio-net), the same L1 boot and bindings (vmulti_take), and one L2
# life under QEMU 7.2 q35 (SeaBIOS) with the four functions as
# -device vfio-pci,host=ADDR,rombar=0: the bench's qemu-vfio command
# line (qemu_l2_argv, qemu_vfio_dev in guest/lib.sh), 2 vCPUs, 512 MiB.
# L2 runs vfio-multi's l2 as it is: ping and VFIO_XFER_MB MiB each way
# (sha256) through the e1000e on MSI-X, 4 MiB written to each NVMe
# namespace and read back (sha256), BAR2 at or above 4 GiB with 8 GiB and
# a pattern at 7 GiB; after QEMU exits, L1 makes vfio-multi's checks
# (vmulti_life: the pattern in its own BAR2, each NVMe's data read on
# nvme, the NIC pinging on e1000e). Everything but l1 comes from
# vfio-multi.sh and vfio.sh (SCENARIO_BASE, two deep); there is no
# bad-input case, which is skiff's. vfio-multi failing where this passes
# points at skiff; both failing, at the testbed.
# SLOW: a check of the testbed, run by name. Bound: passes alone took 84
# (a wait for the L0 lock included) and 69 s, L2's init 34-37 s after
# QEMU's start (SeaBIOS; skiff's: 7 s); vfio-multi's passes spread 1.7x,
# so 300 s is 1.8x that spread over the slowest.
SCENARIO_BASE=vfio-multi
TIMEOUT=300
SLOW=1
PEERS=qemu
EXPECT="SKIFF-L2-MARK vmulti-done"

# vmulti_boot_qemu: L2 under QEMU q35 with the four functions, as the
# bench's qemu-vfio runs it, and what QEMU said on stderr.
vmulti_boot_qemu() {
	eval "set -- $(qemu_l2_argv q35 "$L2_KERNEL" "$L2_MEM" 2 "$L2_CMDLINE")"
	for vq_d in "$addr" "$nv0" "$nv1" "$ivs"; do
		set -- "$@" -device "$(qemu_vfio_dev "$vq_d")"
	done
	echo "vmulti: $*"
	vq_rc=0
	vmm_boot_l2 "$@" || vq_rc=$?
	echo "vmulti: QEMU's stderr:"
	head -n 30 /tmp/vmm.err
	[ "$vq_rc" = 0 ] || { VFIO_WHY="QEMU exited $VMM_RC"; return 1; }
}

l1() {
	VFIO_WHY=""
	vfio_setup || { fail "$VFIO_WHY"; return; }
	vmulti_take || { fail "$VFIO_WHY"; return; }
	vmulti_life vmulti_boot_qemu || { fail "$VFIO_WHY"; return; }
	pass
}
