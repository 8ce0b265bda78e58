// SPDX-License-Identifier: Apache-2.0
/* What core code needs from the architecture (src/x86/ implements it): the
 * one-time setup of a new vCPU, and its state for snapshots. Everything else arch-specific is
 * reached from src/vmm/ through the arch's own headers. */
#ifndef SKIFF_ARCH_H
#define SKIFF_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kvm_cpuid2;
struct vm_caps;
struct snap_writer;
struct snap_image;

/* --cpu-pm on, on a VM without vCPUs: asks KVM to stop intercepting the
 * guest's idle instructions, only those the host offers. Returns the arch's
 * bits for what is now off; names what the host kept in note (one line,
 * left as it was if nothing). */
unsigned int arch_idle_exits_off(const struct vm_caps *k, char *note, size_t notelen);
/* Whether those bits let an idle vCPU halt inside the guest (HLT not
 * intercepted): an interrupt for it is then an exit of its own. */
bool arch_idle_halts_in_guest(unsigned int idle_exits_off);

/* Sets CPUID, MSRs, FPU and interrupt pins of a new vCPU `index` of
 * `nr_cpus` from the host-supported CPUID table, telling the guest what
 * idle instructions it may use given idle_exits_off (from
 * arch_idle_exits_off); 0 or -errno. */
int arch_vcpu_init(int vcpu_fd, const struct kvm_cpuid2 *supported, int index, int nr_cpus,
		   unsigned int idle_exits_off);

/* Bits of guest-physical address the guest's CPUs offer (CPUID
 * 0x80000008 on x86): where the 64-bit PCI window ends. */
unsigned int arch_phys_bits(void);
/* Snapshots (core/snap.h). On a paused VM: vCPU `index`'s registers,
 * special registers, XSAVE (or FPU), XCRs, MSRs (KVM's list of those it
 * saves and emulates), LAPIC, events, debug registers, TSC rate and MP
 * state into w; the VM's irqchip and PIT. 0, or -1 with one line in err.
 *
 * The checks look at an image's sections alone (present, sized right),
 * touching nothing; restore checks first, then sets each piece in the
 * order KVM needs, on a vCPU or VM that has not run yet. */
int arch_vcpu_save(int kvm_fd, int vm_fd, int vcpu_fd, uint32_t index, struct snap_writer *w,
		   char *err, size_t errlen);
int arch_vcpu_check(const struct snap_image *img, uint32_t index, char *err, size_t errlen);
int arch_vcpu_restore(int kvm_fd, int vm_fd, int vcpu_fd, uint32_t index,
		      const struct snap_image *img, char *err, size_t errlen);
int arch_vm_save(int vm_fd, struct snap_writer *w, char *err, size_t errlen);
int arch_vm_check(const struct snap_image *img, char *err, size_t errlen);
int arch_vm_restore(int vm_fd, const struct snap_image *img, char *err, size_t errlen);

#endif
