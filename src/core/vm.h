// SPDX-License-Identifier: Apache-2.0
/* A KVM virtual machine: the /dev/kvm and VM fds, guest RAM, the in-kernel
 * irqchip and PIT, the trap table, and the interrupt routing helpers that
 * devices use. */
#ifndef SKIFF_VM_H
#define SKIFF_VM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/bus.h"
#include "core/coalesced_mmio.h"
#include "core/dirty.h"
#include "core/guest_mem.h"
#include "core/vcpu_gate.h"
#include "core/must_check.h"

#define VM_MAX_CPUS    64
#define VM_MAX_GSI     1024
#define VM_IOAPIC_PINS 24

/* Guest RAM a VM may have, however it is asked for: --mem, the API's
 * mem_size_mib, a snapshot's or a migration's saved size (HELLO's RAM
 * is refused above it). */
#define VM_MEM_MIN (16ULL << 20)
#define VM_MEM_MAX (1ULL << 40)

struct vcpu;

enum vm_exit_kind {
	VM_EXIT_NONE = 0,
	VM_EXIT_POWEROFF, /* guest powered off: status 0 */
	VM_EXIT_REBOOT,	  /* guest asked to reboot: status 0 with a message */
	VM_EXIT_QUIT,	  /* user quit (Ctrl-A x, signal): status 0 */
	VM_EXIT_ERROR,	  /* triple fault, internal error, panic: status 1 */
};

struct vm {
	int kvm_fd, vm_fd;
	int vcpu_mmap_size;
	struct guest_mem mem;
	struct bus bus;
	struct cmmio cmmio; /* KVM's coalesced-MMIO ring and zones */
	int nr_cpus;
	struct vcpu *vcpus[VM_MAX_CPUS];
	/* The idle exits KVM no longer takes (--cpu-pm; the arch's bits, from
	 * vm_idle_setup): each vCPU's CPUID tells the guest what it may use. */
	unsigned int idle_exits_off;

	/* GSI routing table mirrored in host memory; KVM_SET_GSI_ROUTING
	 * replaces the whole table, so every change rewrites it. */
	pthread_mutex_t gsi_lock;
	void *routing; /* struct kvm_irq_routing * */
	uint32_t next_msi_gsi;
	_Atomic uint64_t memslots_used; /* bit per KVM memory slot (vm_memslot_add) */

	/* First exit request wins; vCPU threads poll `exit_kind`. */
	_Atomic int exit_kind;
	char exit_reason[160];
	int exit_pipe[2];      /* written once on exit so the main loop wakes */
	struct vcpu_gate gate; /* pauses the vCPU threads */
	/* Dirty-page tracking (core/vm_dirty.h): the VMM's own log, and
	 * whether KVM's is cleared by hand (manual protect). */
	struct dirty_log dirty;
	bool dirty_manual;
	/* The vhost devices' log, by guest-physical page (vm_dirty_gpa_log). */
	_Atomic uint64_t *gpa_log;
};

/* Opens KVM's node (vm_create: /dev/kvm) read-write; -1 with a one-line
 * reason that names the missing access on EACCES (issue 36.2). */
MUST_CHECK int vm_open_kvm(const char *path, char *err, size_t errlen);
/* Opens /dev/kvm, creates the VM, irqchip, PIT and guest RAM. Returns 0 or
 * -1 with a one-line message in err. */
int vm_create(struct vm *vm, uint64_t mem_size, int nr_cpus, char *err, size_t errlen);
/* vm_create with guest RAM from mem_fd (guest_mem_map_file), or the
 * mapping mem_host (guest_mem_alloc's, of mem_size bytes: the VM owns it
 * from this call, failed or not), or anonymous if neither. */
int vm_create_mem(struct vm *vm, uint64_t mem_size, int mem_fd, uint8_t *mem_host, int nr_cpus,
		  char *err, size_t errlen);
void vm_destroy(struct vm *vm);

/* KVM_CHECK_EXTENSION and KVM_ENABLE_CAP (args[0] only) on a VM fd, behind
 * two calls, so that what skiff asks of a host can be tested against a
 * fake one. */
struct vm_caps {
	int (*check)(void *ctx, unsigned int cap);		   /* the host's answer */
	int (*enable)(void *ctx, unsigned int cap, uint64_t arg0); /* 0 or -errno */
	void *ctx;
};
/* The real ones, on the VM's fd. */
struct vm_caps vm_caps_of(struct vm *vm);

/* Before any vCPU exists (KVM refuses both after): --cpu-pm on takes the
 * guest's idle exits away where the host allows (arch_idle_exits_off);
 * --halt-poll sets KVM's halt-polling window to poll_ns (KVM_CAP_HALT_POLL).
 * Returns the exits now off, for vm->idle_exits_off. What the host refused
 * is said in note, one line ("" if nothing): the rest applies all the same. */
unsigned int vm_idle_setup(const struct vm_caps *k, bool cpu_pm, bool set_poll, uint64_t poll_ns,
			   char *note, size_t notelen);

/* Requests that the VM stop; the first request's kind and reason stick. */
void vm_request_exit(struct vm *vm, enum vm_exit_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The guest's kvmclock (KVM_GET_CLOCK / KVM_SET_CLOCK), in ns: read at
 * pause and written back at resume, so a paused guest's time stands
 * still. 0 or -errno. */
int vm_clock_get(struct vm *vm, uint64_t *ns);
int vm_clock_set(struct vm *vm, uint64_t ns);
/* Tells each vCPU's guest it was stopped (KVM_KVMCLOCK_CTRL, as QEMU does
 * on every resume): its watchdogs (soft lockup, RCU stall) then forgive
 * the wall time the pause took. Only between vCPUs leaving KVM_RUN and
 * re-entering it (the ioctl takes the vCPU's mutex). A vCPU whose guest
 * has no kvmclock (EINVAL) or an arch without the ioctl is skipped: the
 * number of vCPUs told, or -errno on another failure. */
int vm_clock_paused(struct vm *vm);

/* Level-triggered line on the in-kernel PIC/IOAPIC (ISA IRQs and INTx). */
int vm_irq_line(struct vm *vm, uint32_t gsi, int level);

/* Allocates a GSI routed to an MSI message; returns the GSI or -errno. */
MUST_CHECK int vm_msi_route_add(struct vm *vm, uint64_t addr, uint32_t data);
/* Re-points an existing MSI GSI (guest reprogrammed the vector). */
int vm_msi_route_update(struct vm *vm, uint32_t gsi, uint64_t addr, uint32_t data);
/* Injects an MSI directly (no routing entry needed). */
int vm_signal_msi(struct vm *vm, uint64_t addr, uint32_t data);
/* Binds an eventfd to a GSI (KVM_IRQFD); deassign with assign=false. */
int vm_irqfd(struct vm *vm, int efd, uint32_t gsi, bool assign);
/* A level-triggered irqfd: the guest's EOI lowers the line and signals
 * resample_efd (KVM_IRQFD_FLAG_RESAMPLE). */
int vm_irqfd_resample(struct vm *vm, int efd, int resample_efd, uint32_t gsi, bool assign);
/* Maps host memory (e.g. a device BAR) at gpa in a free memory slot;
 * returns the slot or -errno. vm_memslot_del removes it. */
MUST_CHECK int vm_memslot_add(struct vm *vm, uint64_t gpa, uint64_t size, void *host);
int vm_memslot_del(struct vm *vm, int slot);
/* Binds an eventfd to a guest write of `len` bytes at `addr` (KVM_IOEVENTFD);
 * len 0 matches any length (MMIO only). */
int vm_ioeventfd(struct vm *vm, int efd, enum bus_space sp, uint64_t addr, uint32_t len,
		 bool assign);

#endif
