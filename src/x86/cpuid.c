// SPDX-License-Identifier: Apache-2.0
#include <asm/kvm_para.h>
#include <errno.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <sys/ioctl.h>

#include "x86/cpu.h"

#define CPUID_MAX_ENTRIES	 256
#define CPUID_1_ECX_TSC_DEADLINE (1u << 24)
#define CPUID_1_ECX_HYPERVISOR	 (1u << 31)
#define CPUID_1_EDX_HTT		 (1u << 28)
#define CPUID_1_ECX_MONITOR	 (1u << 3)
#define CPUID_5_ECX_EMX		 (1u << 0) /* MWAIT extensions enumerated */
#define CPUID_5_ECX_IBE		 (1u << 1) /* interrupts break MWAIT, even masked */

struct kvm_cpuid2 *cpuid_get_supported(int kvm_fd)
{
	struct kvm_cpuid2 *c =
	    calloc(1, sizeof(*c) + CPUID_MAX_ENTRIES * sizeof(struct kvm_cpuid_entry2));
	if (!c)
		return NULL;
	c->nent = CPUID_MAX_ENTRIES;
	if (ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, c) < 0) {
		int e = errno;
		free(c);
		errno = e;
		return NULL;
	}
	cpuid_add_emulated(c, ioctl(kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_TSC_DEADLINE_TIMER) > 0);
	return c;
}

/* KVM emulates the TSC-deadline timer in its in-kernel LAPIC (which skiff
 * always has) but before Linux 6.14 leaves CPUID.1:ECX[24] clear in
 * KVM_GET_SUPPORTED_CPUID: the VMM sets it (api.rst, as QEMU, Firecracker
 * and Cloud Hypervisor do). Without it the guest arms its LAPIC timer in
 * one-shot mode and calibrates that timer at boot against the PIT. */
void cpuid_add_emulated(struct kvm_cpuid2 *c, bool tsc_deadline)
{
	for (uint32_t i = 0; tsc_deadline && i < c->nent; i++) {
		if (c->entries[i].function == 1)
			c->entries[i].ecx |= CPUID_1_ECX_TSC_DEADLINE;
	}
}

void cpuid_patch(struct kvm_cpuid2 *c, int index, int nr_cpus)
{
	uint32_t apic_id = (uint32_t)index;
	for (uint32_t i = 0; i < c->nent; i++) {
		struct kvm_cpuid_entry2 *e = &c->entries[i];
		switch (e->function) {
		case 1:
			/* EBX[31:24] initial APIC ID, [23:16] logical CPUs per package */
			e->ebx =
			    (e->ebx & 0x0000ffff) | (apic_id << 24) | ((uint32_t)nr_cpus << 16);
			e->ecx |= CPUID_1_ECX_HYPERVISOR;
			if (nr_cpus > 1)
				e->edx |= CPUID_1_EDX_HTT;
			break;
		case 4:
			/* EAX[31:26]: cores per package - 1 (one thread per core) */
			e->eax = (e->eax & 0x03ffffff) | ((uint32_t)(nr_cpus - 1) << 26);
			break;
		case 0xb:
		case 0x1f:
			/* Extended topology: SMT level has 1 thread, core level
			 * nr_cpus; EDX is the x2APIC ID on every subleaf. */
			if (e->index == 0) {
				e->eax = 0;
				e->ebx = 1;
				e->ecx = (1u << 8) | 0;
			} else if (e->index == 1) {
				uint32_t shift = 0;
				while ((1u << shift) < (uint32_t)nr_cpus)
					shift++;
				e->eax = shift;
				e->ebx = (uint32_t)nr_cpus;
				e->ecx = (2u << 8) | 1;
			} else {
				e->eax = e->ebx = 0;
				e->ecx = e->index;
			}
			e->edx = apic_id;
			break;
		case 0x80000008:
			/* AMD: ECX[7:0] number of cores - 1 */
			e->ecx = (e->ecx & ~0xffu) | (uint32_t)(nr_cpus - 1);
			break;
		case 0x8000001e:
			/* AMD: EAX extended APIC ID; EBX compute unit = core */
			e->eax = apic_id;
			e->ebx = (e->ebx & ~0xffu) | apic_id;
			break;
		default:
			break;
		}
	}
}

void cpuid_patch_idle(struct kvm_cpuid2 *c, unsigned int exits_off, const uint32_t host_leaf5[4])
{
	bool mwait = exits_off & KVM_X86_DISABLE_EXITS_MWAIT;
	bool hlt = exits_off & KVM_X86_DISABLE_EXITS_HLT;
	for (uint32_t i = 0; i < c->nent; i++) {
		struct kvm_cpuid_entry2 *e = &c->entries[i];
		if (e->function == 1) {
			/* QEMU: kvm_arch_get_supported_cpuid adds MONITOR when
			 * cpu-pm is on and KVM lets MWAIT run in the guest; KVM
			 * never lists it, and an intercepted MWAIT is a NOP. */
			e->ecx =
			    mwait ? e->ecx | CPUID_1_ECX_MONITOR : e->ecx & ~CPUID_1_ECX_MONITOR;
		} else if (e->function == 5 && mwait) {
			/* The host's C-state sub-states, which KVM zeroes: the
			 * guest's idle driver picks its MWAIT hints from them
			 * (QEMU: host_cpu_enable_cpu_pm, with EMX and IBE). */
			e->eax = host_leaf5[0];
			e->ebx = host_leaf5[1];
			e->ecx = host_leaf5[2] | CPUID_5_ECX_EMX | CPUID_5_ECX_IBE;
			e->edx = host_leaf5[3];
		} else if (e->function == KVM_CPUID_FEATURES && hlt) {
			/* A halted vCPU that KVM does not see halted cannot be
			 * woken by the PV kick its spinlock waiters rely on: the
			 * guest must use native spinlocks. Newer KVM clears it
			 * itself at KVM_SET_CPUID2 when HLT exits are off
			 * (arch/x86/kvm/cpuid.c); QEMU leaves it to KVM. */
			e->eax &= ~(1u << KVM_FEATURE_PV_UNHALT);
		}
	}
}
