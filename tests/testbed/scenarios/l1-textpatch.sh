# SPDX-License-Identifier: Apache-2.0
# Whether L1's kernel patches its own text when a VMM starts and stops: L1
# function-traces the two places every static-key flip goes through
# (arch_jump_label_transform_queue per site, _apply per batch) around two
# L2 lives under skiff, 3 s past each (deferred keys flip after a second)
# and fails if any site was patched, naming who flipped it. Live patching
# under L0's software CPU has wedged L1 (tests/testbed/README.md); the held
# VM and vCPU of guest/kvm-hold.c are what keeps this at zero. SLOW=1:
# enabling the tracer patches text itself (two sites, before L2 starts).
TIMEOUT=600
SLOW=1
EXPECT="SKIFF-L2: init"

l1() {
	tracefs_up
	for f in arch_jump_label_transform_queue arch_jump_label_transform_apply; do
		echo $f >>"$TR"/set_ftrace_filter || { fail "cannot trace $f"; return; }
	done
	echo 1 >"$TR"/options/func_stack_trace
	echo function >"$TR"/current_tracer
	total=0
	for i in 1 2; do
		: >"$TR"/trace
		skiff_boot_l2 --cpus 1 || { fail "skiff exited $VMM_RC"; return; }
		sleep 3
		n=$(grep -c ' arch_jump_label_transform_queue <-' "$TR"/trace)
		b=$(grep -c ' arch_jump_label_transform_apply <-' "$TR"/trace)
		metric "life${i}_sites" "$n"
		metric "life${i}_batches" "$b"
		# who flipped each site: the first frame past the jump-label and
		# static-key functions
		awk '/ arch_jump_label_transform_queue <-/ { q = 1; next }
			/<stack trace>/ { s = q; q = 0; next }
			s && /=>/ && !/jump_label|static_key|=> 0x/ { print $2; s = 0 }' "$TR"/trace |
			sort | uniq -c | sed "s/^ */SKIFF-TEXTPATCH: life $i: /"
		total=$((total + n))
	done
	echo nop >"$TR"/current_tracer
	[ "$total" -eq 0 ] || { fail "L1 patched $total kernel text sites around 2 L2 lives"; return; }
	pass
}

l2() { :; }
