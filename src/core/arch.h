/* What core code needs from the architecture (src/x86/ implements it): the
 * one-time setup of a new vCPU. Everything else arch-specific is reached
 * from src/vmm/ through the arch's own headers. */
#ifndef SKIFF_ARCH_H
#define SKIFF_ARCH_H

struct kvm_cpuid2;

/* Sets CPUID, MSRs, FPU and interrupt pins of a new vCPU `index` of
 * `nr_cpus` from the host-supported CPUID table; 0 or -errno. */
int arch_vcpu_init(int vcpu_fd, const struct kvm_cpuid2 *supported, int index, int nr_cpus);

#endif
