/* What core code needs from the architecture (src/x86/ implements it): the
 * one-time setup of a new vCPU. Everything else arch-specific is reached
 * from src/vmm/ through the arch's own headers. */
#ifndef SKIFF_ARCH_H
#define SKIFF_ARCH_H

#include <stddef.h>

struct kvm_cpuid2;
struct vm_caps;

/* --cpu-pm on, on a VM without vCPUs: asks KVM to stop intercepting the
 * guest's idle instructions, only those the host offers. Returns the arch's
 * bits for what is now off; names what the host kept in note (one line,
 * left as it was if nothing). */
unsigned int arch_idle_exits_off(const struct vm_caps *k, char *note, size_t notelen);

/* Sets CPUID, MSRs, FPU and interrupt pins of a new vCPU `index` of
 * `nr_cpus` from the host-supported CPUID table, telling the guest what
 * idle instructions it may use given idle_exits_off (from
 * arch_idle_exits_off); 0 or -errno. */
int arch_vcpu_init(int vcpu_fd, const struct kvm_cpuid2 *supported, int index, int nr_cpus,
		   unsigned int idle_exits_off);

/* Bits of guest-physical address the guest's CPUs offer (CPUID
 * 0x80000008 on x86): where the 64-bit PCI window ends. */
unsigned int arch_phys_bits(void);

#endif
