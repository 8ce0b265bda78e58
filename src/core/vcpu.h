// SPDX-License-Identifier: Apache-2.0
/* A vCPU: its KVM fd, the shared kvm_run page, one thread running the exit
 * loop, and per-reason exit counters. The loop passes the VM's vcpu_gate
 * on every turn: a pause kicks the thread out of KVM_RUN and parks it
 * there. */
#ifndef SKIFF_VCPU_H
#define SKIFF_VCPU_H

#include <pthread.h>
#include <stdint.h>

#include "core/clock.h"
#include "core/counter.h"
#include "core/vm.h"

struct kvm_run;
struct kvm_cpuid2;

enum vcpu_exit_stat {
	VCPU_STAT_IO,
	VCPU_STAT_MMIO,
	VCPU_STAT_HLT,
	VCPU_STAT_INTR, /* KVM_RUN interrupted by a signal */
	VCPU_STAT_SHUTDOWN,
	VCPU_STAT_SYSTEM_EVENT,
	VCPU_STAT_OTHER,
	/* Not reasons of their own: the writes among IO and MMIO (reads are
	 * the rest), for Firecracker's exit_io_out / exit_mmio_write. */
	VCPU_STAT_IO_OUT,
	VCPU_STAT_MMIO_WRITE,
	VCPU_STAT_NR,
};

struct vcpu {
	struct vm *vm;
	int index;
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	int started;
	int pin_cpu;		       /* host CPU the thread runs on, or -1 (vcpu_start) */
	counter_t exits[VCPU_STAT_NR]; /* by the vCPU thread; read by stats */
	uint64_t first_run_ns;	       /* CLOCK_MONOTONIC of the first KVM_RUN */
	uint64_t cpu_ns;	       /* thread CPU time, set when the thread ends */
};

/* Creates vCPU `index` with CPUID and boot MSRs; NULL with errno. */
struct vcpu *vcpu_create(struct vm *vm, int index, const struct kvm_cpuid2 *cpuid);
void vcpu_destroy(struct vcpu *v);
int vcpu_start(struct vcpu *v);
/* Makes a running KVM_RUN return so the thread sees the exit request. */
void vcpu_kick(struct vcpu *v);
void vcpu_join(struct vcpu *v);
/* From the vCPU's own thread, out of KVM_RUN: lets KVM finish the exit
 * just handled, without entering the guest (before a pause parks it). */
void vcpu_complete_exit(struct vcpu *v);
/* Installs the no-op signal used by vcpu_kick; call once, early. */
void vcpu_signals_init(void);

const char *vcpu_stat_name(enum vcpu_exit_stat s);

#endif
