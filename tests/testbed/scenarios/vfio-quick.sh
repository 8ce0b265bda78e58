# SPDX-License-Identifier: Apache-2.0
# The quick form of vfio (issue 32.4), SLOW since vfio-multi (issue 37.5)
# passes the same e1000e with NVMe and ivshmem in the default suite (ping
# and the rebind included; its DMA checks are the NVMe's): the e1000e
# passed through with MSI-X and its BARs mapped (mmap=on), one L2 boot:
# ping, iperf3 both ways (2 s each) and VFIO_XFER_MB MiB each way checked
# by sha256; then L1 binds the NIC back to e1000e and pings through it.
# L0's devices, the modules and every function but l1 come from vfio.sh
# (SCENARIO_BASE: its file is read first, in L1 and L2 too); the full
# scenario (mmap=off, INTx, bad input, L1's own numbers) stays SLOW.
# Bound: one L2 boot of 512 MiB (up to ~60 s), 16 MiB each way and the
# rebind; the full scenario's four boots took about 4 min. An estimate, to
# be set from measured passes (issue 39.4).
SCENARIO_BASE=vfio
TIMEOUT=150
SLOW=1
EXPECT="SKIFF-L2-MARK vfio-done-msix"
VFIO_XFER_MB=16
VFIO_IPERF_S=2

l1() {
	VFIO_WHY=""
	vfio_setup || { fail "$VFIO_WHY"; return; }
	vfio_take "$addr" || { fail "$VFIO_WHY"; return; }
	iperf3 -s >/tmp/iperf3-server.log 2>&1 &
	iperf_pid=$!
	L2_MEM=512M
	vfio_boot msix "$addr,mmap=on"
	kill "$iperf_pid" 2>/dev/null
	[ -z "$VFIO_WHY" ] || { fail "$VFIO_WHY"; return; }
	vfio_give_back "$addr" || { fail "$VFIO_WHY"; return; }
	pass
}
