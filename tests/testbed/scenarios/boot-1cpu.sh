# L2 boots under skiff with --cpus 1 and sees 1 CPU(s); skiff exits 0 when
# L2 powers off. Also reports skiff's start→first KVM_RUN and start→L2 init.
TIMEOUT=400
EXPECT="SKIFF-L2: init
SKIFF-L2-MARK nproc=1"

l1() {
	skiff_boot_l2 --cpus 1 || { fail "skiff exited $VMM_RC"; return; }
	l2_saw "SKIFF-L2-MARK nproc=1" || { fail "L2 did not report nproc=1"; return; }
	pass
}

l2() {
	echo "SKIFF-L2-MARK nproc=$(nproc)"
}
