# SPDX-License-Identifier: Apache-2.0
# The quick form of e1000 for the default suite (issue 32.4): one L2 boot
# with --net tap=tap0,model=e1000,coalesce=on under Linux's e1000 driver:
# ping, iperf3 both ways (2 s each) and E1K_XFER_MB MiB each way checked
# by sha256 on both ends. Everything but l1 and the sizes comes from
# e1000.sh (SCENARIO_BASE: its file is read first, in L1 and L2 too); the
# full scenario, with off/on/all and the exit-count shapes, stays SLOW.
# Bound: one L2 boot (up to ~60 s) plus 16 MiB each way at 5-10 Mbit/s up
# (the full scenario's 64 MiB took 60-90 s) and pings; an estimate, to be
# set from measured passes (issue 39.4).
SCENARIO_BASE=e1000
TIMEOUT=180
SLOW=0
EXPECT="SKIFF-L2: init
SKIFF-L2-MARK e1k-done"
E1K_XFER_MB=16
E1K_IPERF_S=2
E1K_XFER_S=120 # bound of each 16 MiB transfer
E1K_L2_S=240   # bound of the L2 session (L2_TIMEOUT)

l1() {
	tap_up "$E1K_L1" || { fail "tap0 setup failed"; return; }
	e1k_random /tmp/down.bin || { fail "cannot make /tmp/down.bin"; return; }
	down_sha=$(e1k_sha /tmp/down.bin)
	e1k_mode on || { fail "coalesce=on failed"; return; }
	pass
}
