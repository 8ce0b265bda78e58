# SPDX-License-Identifier: Apache-2.0
# A diagnostic trace of L1 around chosen workloads' windows (issue 33/38,
# docs/bench/2026-12-06-irqdiag): off unless bench/run.sh is given
# BENCH_TRACE=W1,W2 (it then packs this file as /testbed/bench-trace.sh
# and puts bench_trace=W1,W2 on L1's command line). Sourced by
# bench-round.sh in L1. Tracing costs L1 time in every event, so a traced
# run's own numbers are not results: compare untraced runs, read the
# traces for the why.
#
# In the workload's directory it leaves trace-sum.txt (event counts, KVM
# exits by reason and by L1 CPU, the L1 interrupt behind each
# external-interrupt exit, the vectors injected and coalesced, the CPUs the
# VMM's threads and vhost workers ran on) and trace.txt.gz, a slice of the
# raw trace (BENCH_TRACE_LINES lines from the middle of the window).
# shellcheck disable=SC2154
BENCH_TRACE_LINES=20000
BENCH_TRACE_EVENTS="kvm:kvm_exit kvm:kvm_entry kvm:kvm_inj_virq kvm:kvm_apic_accept_irq
kvm:kvm_msi_set_irq kvm:kvm_set_irq kvm:kvm_eoi kvm:kvm_pio kvm:kvm_mmio kvm:kvm_apic
kvm:kvm_userspace_exit kvm:kvm_vcpu_wakeup kvm:kvm_emulate_insn kvm:kvm_page_fault
irq_vectors:local_timer_entry irq_vectors:reschedule_entry irq_vectors:call_function_entry
irq_vectors:call_function_single_entry irq_vectors:irq_work_entry irq:irq_handler_entry
sched:sched_switch sched:sched_wakeup vsock:virtio_transport_recv_pkt
vsock:virtio_transport_alloc_pkt"

# bench_trace_wanted W: is W one of bench_trace=?
bench_trace_wanted() {
	case ",${BENCH_TRACE:-}," in *,"$1",*) return 0 ;; esac
	return 1
}

# bench_trace_on W: clears and starts the trace when W is wanted.
bench_trace_on() {
	bench_trace_wanted "$1" || return 0
	BT=/sys/kernel/tracing
	[ -e "$BT"/trace ] || mount -t tracefs nodev $BT 2>/dev/null
	[ -e "$BT"/trace ] || return 0
	echo 0 >"$BT"/tracing_on
	echo 16384 >"$BT"/buffer_size_kb
	: >"$BT"/set_event
	for bt_e in $BENCH_TRACE_EVENTS; do
		echo "$bt_e" >>"$BT"/set_event 2>/dev/null
	done
	: >"$BT"/trace
	echo 1 >"$BT"/tracing_on
}

# bench_trace_off W DIR PID: stops it and leaves the summary and slice in
# DIR (PID: the VMM, whose threads are named in the summary).
bench_trace_off() {
	bench_trace_wanted "$1" || return 0
	[ -e "$BT/trace" ] || return 0
	echo 0 >"$BT"/tracing_on
	grep -v '^#' "$BT"/trace >/tmp/bench-trace.full
	: >"$BT"/set_event
	: >"$BT"/trace
	for bt_t in /proc/"$3"/task/*; do
		echo "thread ${bt_t##*/} $(cat "$bt_t/comm" 2>/dev/null)"
	done >"$2/trace-sum.txt"
	bench_trace_sum /tmp/bench-trace.full >>"$2/trace-sum.txt"
	bt_n=$(wc -l </tmp/bench-trace.full)
	bt_from=$(((bt_n - BENCH_TRACE_LINES) / 2))
	[ "$bt_from" -gt 0 ] || bt_from=1
	tail -n +"$bt_from" /tmp/bench-trace.full | head -n "$BENCH_TRACE_LINES" | gzip -c >"$2/trace.txt.gz"
	rm -f /tmp/bench-trace.full
}

# bench_trace_sum FILE: the counts, as "KEY VALUE..." lines.
bench_trace_sum() {
	awk '
	{
		if (!match($0, /\[[0-9]+\]/)) next
		cpu = substr($0, RSTART + 1, RLENGTH - 2) + 0
		task = substr($0, 1, RSTART - 1); sub(/^ +/, "", task); sub(/ +$/, "", task); sub(/-[0-9]+$/, "", task)
		rest = substr($0, RSTART + RLENGTH)
		if (!match(rest, / [a-z_0-9]+: /)) next
		ev = substr(rest, RSTART + 1, RLENGTH - 3)
		args = substr(rest, RSTART + RLENGTH)
		n["event " ev]++
		if (ev == "kvm_exit") {
			split(args, a, " ")
			for (i = 1; i <= length(a); i++) if (a[i] == "reason") r = a[i + 1]
			n["exit " r]++
			n["exit_cpu " cpu " " task]++
			# KVM takes the host interrupt before it traces the exit:
			# the vector is the last one since the entry, else the next.
			pend[cpu] = 0
			if (r == "interrupt" || r == "EXIT_INTR") {
				if (seen[cpu] != "") n["intr_exit_cause " seen[cpu]]++
				else pend[cpu] = 1
			}
			last_exit[cpu] = r
		} else if (ev ~ /_entry$/ && ev != "kvm_entry") {
			what = ev
			if (ev == "irq_handler_entry") { what = args; sub(/^irq=[0-9]+ name=/, "", what); what = "irq " what }
			n["l1irq " cpu " " what]++
			seen[cpu] = what
			if (pend[cpu]) { n["intr_exit_cause " what]++; pend[cpu] = 0 }
		} else if (ev == "kvm_entry") {
			if (pend[cpu]) n["intr_exit_cause none-seen"]++
			pend[cpu] = 0
			seen[cpu] = ""
		} else if (ev == "kvm_inj_virq") {
			n["inj " args]++
			n["inj_after_exit " last_exit[cpu]]++
		} else if (ev == "kvm_apic_accept_irq") {
			v = args; sub(/.*vec /, "", v); sub(/ .*/, "", v)
			n["accept vec " v (args ~ /coalesced/ ? " coalesced" : "")]++
			n["accept_by " task]++
		} else if (ev == "kvm_msi_set_irq") {
			n["msi " args]++
		} else if (ev == "sched_switch") {
			nx = args; sub(/.*next_comm=/, "", nx); sub(/ next_pid.*/, "", nx)
			sub(/[0-9]+$/, "", nx)
			n["run_on " cpu " " nx]++
		} else if (ev == "sched_wakeup") {
			w = args; sub(/^comm=/, "", w); sub(/ pid=.*/, "", w); sub(/[0-9]+$/, "", w)
			t = args; sub(/.*target_cpu=/, "", t)
			n["wakeup " w " on " t + 0 " from " cpu]++
		} else if (ev == "virtio_transport_recv_pkt" || ev == "virtio_transport_alloc_pkt") {
			op = args; sub(/.*op=/, "", op); sub(/ .*/, "", op)
			n[ev " " op]++
		} else if (ev == "kvm_apic") {
			k = args; sub(/ = .*/, "", k)
			n["apic " k]++
		}
	}
	END { for (k in n) print k, n[k] }' "$1" | sort
}
