// SPDX-License-Identifier: Apache-2.0
#include "core/vcpu.h"

#include <errno.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/cpulist.h"
#include "core/sandbox.h"
#include "core/thread.h"
#include "core/arch.h"

#define VCPU_KICK_SIGNAL SIGUSR1

static void kick_handler(int sig)
{
	(void)sig; /* only there to make KVM_RUN return EINTR */
}

void vcpu_signals_init(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = kick_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(VCPU_KICK_SIGNAL, &sa, NULL); /* no SA_RESTART: KVM_RUN must return */
}

const char *vcpu_stat_name(enum vcpu_exit_stat s)
{
	static const char *names[VCPU_STAT_NR] = {"io",	    "mmio",	"hlt",
						  "signal", "shutdown", "system_event",
						  "other",  "io_out",	"mmio_write"};
	return s < VCPU_STAT_NR ? names[s] : "?";
}

struct vcpu *vcpu_create(struct vm *vm, int index, const struct kvm_cpuid2 *cpuid)
{
	struct vcpu *v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	v->vm = vm;
	v->index = index;
	v->pin_cpu = -1;
	v->fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, index);
	if (v->fd < 0)
		goto fail;
	v->run =
	    mmap(NULL, (size_t)vm->vcpu_mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
	if (v->run == MAP_FAILED) {
		v->run = NULL;
		goto fail;
	}
	cmmio_attach(&vm->cmmio, v->run, (size_t)vm->vcpu_mmap_size);
	int r = arch_vcpu_init(v->fd, cpuid, index, vm->nr_cpus, vm->idle_exits_off);
	if (r < 0) {
		errno = -r;
		goto fail;
	}
	return v;
fail : {
	int e = errno;
	vcpu_destroy(v);
	errno = e;
	return NULL;
}
}

void vcpu_destroy(struct vcpu *v)
{
	if (!v)
		return;
	if (v->run) {
		cmmio_detach(&v->vm->cmmio, v->run);
		munmap(v->run, (size_t)v->vm->vcpu_mmap_size);
	}
	if (v->fd >= 0)
		close(v->fd);
	free(v);
}

static void vcpu_handle_io(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	bool is_write = run->io.direction == KVM_EXIT_IO_OUT;
	/* String I/O (rep outsb/insb) arrives as `count` accesses. */
	for (uint32_t i = 0; i < run->io.count; i++)
		bus_dispatch(&v->vm->bus, BUS_PIO, run->io.port, data + i * run->io.size,
			     run->io.size, is_write, v->index);
}

static void vcpu_handle_mmio(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	uint32_t len = run->mmio.len <= sizeof(run->mmio.data) ? run->mmio.len : 8;
	bus_dispatch(&v->vm->bus, BUS_MMIO, run->mmio.phys_addr, run->mmio.data, len,
		     run->mmio.is_write, v->index);
}

static void vcpu_handle_system_event(struct vcpu *v)
{
	switch (v->run->system_event.type) {
	case KVM_SYSTEM_EVENT_SHUTDOWN:
		vm_request_exit(v->vm, VM_EXIT_POWEROFF, "guest powered off");
		break;
	case KVM_SYSTEM_EVENT_RESET:
		vm_request_exit(v->vm, VM_EXIT_REBOOT, "guest requested a reboot");
		break;
	case KVM_SYSTEM_EVENT_CRASH:
		vm_request_exit(v->vm, VM_EXIT_ERROR, "guest crashed (vCPU %d)", v->index);
		break;
	default:
		vm_request_exit(v->vm, VM_EXIT_ERROR, "unknown system event %u",
				v->run->system_event.type);
	}
}

static uint64_t vcpu_rip(struct vcpu *v)
{
	struct kvm_regs regs;
	return ioctl(v->fd, KVM_GET_REGS, &regs) < 0 ? 0 : regs.rip;
}

/* KVM finishes a port or MMIO exit (an IN's data into RAX, RIP past the
 * instruction) only on the next KVM_RUN: run once with immediate_exit, so
 * that a parked vCPU is between two instructions and its saved state
 * (a snapshot) is whole. Returns at once with EINTR. */
void vcpu_complete_exit(struct vcpu *v)
{
	__atomic_store_n(&v->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
	ioctl(v->fd, KVM_RUN, 0);
	__atomic_store_n(&v->run->immediate_exit, 0, __ATOMIC_SEQ_CST);
}

static void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;
	struct vm *vm = v->vm;
	thread_name_self("vcpu%d", v->index);
	sandbox_enter_or_die(SANDBOX_VCPU);

	while (atomic_load(&vm->exit_kind) == VM_EXIT_NONE) {
		if (vcpu_gate_closed(&vm->gate)) {
			/* Paused: asleep here, so no CPU time (the guest time
			 * the stats report) is spent. */
			vcpu_complete_exit(v);
			vcpu_gate_park(&vm->gate);
			continue;
		}
		if (!v->first_run_ns)
			__atomic_store_n(&v->first_run_ns, monotonic_ns(), __ATOMIC_RELEASE);
		int r = ioctl(v->fd, KVM_RUN, 0);
		if (r < 0) {
			if (errno == EINTR || errno == EAGAIN) {
				v->run->immediate_exit = 0;
				counter_add(&v->exits[VCPU_STAT_INTR], 1);
				continue;
			}
			vm_request_exit(vm, VM_EXIT_ERROR, "KVM_RUN failed on vCPU %d: %s",
					v->index, strerror(errno));
			break;
		}
		/* Batched writes happened before this exit: apply them first,
		 * so no handler sees older device state than the guest wrote. */
		cmmio_flush(vm);
		switch (v->run->exit_reason) {
		case KVM_EXIT_IO:
			counter_add(&v->exits[VCPU_STAT_IO], 1);
			if (v->run->io.direction == KVM_EXIT_IO_OUT)
				counter_add(&v->exits[VCPU_STAT_IO_OUT], 1);
			vcpu_handle_io(v);
			break;
		case KVM_EXIT_MMIO:
			counter_add(&v->exits[VCPU_STAT_MMIO], 1);
			if (v->run->mmio.is_write)
				counter_add(&v->exits[VCPU_STAT_MMIO_WRITE], 1);
			vcpu_handle_mmio(v);
			break;
		case KVM_EXIT_HLT:
			counter_add(&v->exits[VCPU_STAT_HLT], 1);
			break;
		case KVM_EXIT_INTR:
			counter_add(&v->exits[VCPU_STAT_INTR], 1);
			break;
		case KVM_EXIT_SHUTDOWN:
			counter_add(&v->exits[VCPU_STAT_SHUTDOWN], 1);
			vm_request_exit(vm, VM_EXIT_ERROR,
					"guest triple fault on vCPU %d at rip %#llx", v->index,
					(unsigned long long)vcpu_rip(v));
			break;
		case KVM_EXIT_SYSTEM_EVENT:
			counter_add(&v->exits[VCPU_STAT_SYSTEM_EVENT], 1);
			vcpu_handle_system_event(v);
			break;
		case KVM_EXIT_FAIL_ENTRY:
			counter_add(&v->exits[VCPU_STAT_OTHER], 1);
			vm_request_exit(
			    vm, VM_EXIT_ERROR, "vCPU %d failed to enter the guest (reason %#llx)",
			    v->index,
			    (unsigned long long)v->run->fail_entry.hardware_entry_failure_reason);
			break;
		case KVM_EXIT_INTERNAL_ERROR:
			counter_add(&v->exits[VCPU_STAT_OTHER], 1);
			vm_request_exit(vm, VM_EXIT_ERROR,
					"KVM internal error on vCPU %d (suberror %u) at rip %#llx",
					v->index, v->run->internal.suberror,
					(unsigned long long)vcpu_rip(v));
			break;
		default:
			counter_add(&v->exits[VCPU_STAT_OTHER], 1);
			vm_request_exit(vm, VM_EXIT_ERROR, "unhandled KVM exit %u on vCPU %d",
					v->run->exit_reason, v->index);
			break;
		}
	}
	v->cpu_ns = thread_cpu_ns();
	vcpu_gate_leave(&vm->gate);
	return NULL;
}

int vcpu_start(struct vcpu *v)
{
	/* vCPU threads leave the kick signal unblocked; others block it.
	 * Counted in before it runs, so a pause right after waits for it. */
	vcpu_gate_enter(&v->vm->gate);
	int r = thread_create_on(&v->thread, v->pin_cpu, vcpu_thread, v);
	if (r == 0)
		__atomic_store_n(&v->started, 1, __ATOMIC_RELEASE);
	else
		vcpu_gate_leave(&v->vm->gate);
	return -r;
}

void vcpu_kick(struct vcpu *v)
{
	if (!__atomic_load_n(&v->started, __ATOMIC_ACQUIRE))
		return;
	/* immediate_exit covers the window before the thread enters KVM_RUN;
	 * the signal interrupts a KVM_RUN already in progress. */
	__atomic_store_n(&v->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
	pthread_kill(v->thread, VCPU_KICK_SIGNAL);
}

void vcpu_join(struct vcpu *v)
{
	if (v->started)
		pthread_join(v->thread, NULL);
	v->started = 0;
}
