# L2 boots under skiff with --cpus 2 and sees 2 CPU(s); skiff exits 0 when
# L2 powers off. Also reports skiff's start→first KVM_RUN and start→L2 init.
TIMEOUT=400
EXPECT="SKIFF-L2: init
SKIFF-L2-MARK nproc=2"

l1() {
	skiff_boot_l2 --cpus 2 || { fail "skiff exited $VMM_RC"; return; }
	l2_saw "SKIFF-L2-MARK nproc=2" || { fail "L2 did not report nproc=2"; return; }
	pass
}

l2() {
	echo "SKIFF-L2-MARK nproc=$(nproc)"
}
