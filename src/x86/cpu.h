// SPDX-License-Identifier: Apache-2.0
/* Per-vCPU x86 state: CPUID, boot MSRs, LAPIC LINT pins, and the 64-bit
 * entry state for the boot CPU. */
#ifndef SKIFF_X86_CPU_H
#define SKIFF_X86_CPU_H

#include <stdbool.h>
#include <stdint.h>

struct kvm_cpuid2;

/* Gets the host-supported CPUID table (caller frees), with the features
 * KVM emulates but does not list added; NULL with errno. */
struct kvm_cpuid2 *cpuid_get_supported(int kvm_fd);
/* Adds those features to a supported table: the TSC-deadline timer if
 * KVM_CAP_TSC_DEADLINE_TIMER. */
void cpuid_add_emulated(struct kvm_cpuid2 *c, bool tsc_deadline);
/* Adjusts a copy of the supported table for vCPU `index` of `nr_cpus`:
 * APIC IDs, topology counts, the hypervisor bit. */
void cpuid_patch(struct kvm_cpuid2 *c, int index, int nr_cpus);

/* What the guest may use of its idle instructions, given the exits KVM no
 * longer takes (KVM_X86_DISABLE_EXITS_* bits): MONITOR/MWAIT (CPUID.1:ECX
 * bit 3, with the host's leaf 5 from host_leaf5: EAX..EDX) only where
 * MWAIT exits are off; KVM's PV unhalt (KVM_CPUID_FEATURES EAX bit 7) only
 * where HLT exits are on. */
void cpuid_patch_idle(struct kvm_cpuid2 *c, unsigned int exits_off, const uint32_t host_leaf5[4]);

/* arch_vcpu_init (core/arch.h) sets CPUID, MSRs, FPU and LAPIC LINT0/1. */
/* Puts the boot CPU in 64-bit mode at `entry` with RSI = zero page, using
 * the page tables and GDT that x86_boot_tables_write placed. */
int x86_vcpu_set_boot_regs(int vcpu_fd, uint64_t entry, uint64_t zero_page);

/* Writes the GDT and identity page tables (first 4 GiB, 2 MiB pages) into
 * guest memory at the LAYOUT_* addresses. `user` sets the U/S bit (for the
 * probe's ring-3 test). */
void x86_boot_tables_write(uint8_t *low_mem, int user);

/* Segment selectors of the boot GDT (boot protocol's __BOOT_CS/__BOOT_DS). */
#define BOOT_CS 0x10
#define BOOT_DS 0x18

#endif
