// SPDX-License-Identifier: Apache-2.0
/* The guest's CPUID: what skiff adds to KVM's supported table (the
 * TSC-deadline timer KVM emulates) and the per-vCPU patch keeping it, on a
 * made-up table. The testbed's boot scenario checks what L2 sees. */
#include <linux/kvm.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "x86/cpu.h"

#include <asm/kvm_para.h>

#define TSC_DEADLINE (1u << 24)
#define HYPERVISOR   (1u << 31)

static struct kvm_cpuid2 *table(void)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + 3 * sizeof(c->entries[0]));
	assert_non_null(c);
	c->nent = 3;
	c->entries[0] = (struct kvm_cpuid_entry2){.function = 0, .eax = 0xd, .ecx = 0x444d4163};
	c->entries[1] = (struct kvm_cpuid_entry2){.function = 1, .ecx = 0x00200001, .edx = 1};
	c->entries[2] = (struct kvm_cpuid_entry2){.function = 7, .ecx = 0x00000005};
	return c;
}

static void test_tsc_deadline_added(void **state)
{
	(void)state;
	struct kvm_cpuid2 *c = table();
	cpuid_add_emulated(c, true);
	assert_int_equal(c->entries[1].ecx, 0x00200001 | TSC_DEADLINE);
	/* Only leaf 1's ECX: the same bit elsewhere means something else. */
	assert_int_equal(c->entries[0].ecx, 0x444d4163);
	assert_int_equal(c->entries[2].ecx, 0x00000005);
	assert_int_equal(c->entries[1].edx, 1);
	/* The per-vCPU patch keeps it. */
	cpuid_patch(c, 1, 2);
	assert_true(c->entries[1].ecx & TSC_DEADLINE);
	assert_true(c->entries[1].ecx & HYPERVISOR);
	free(c);
}

static void test_tsc_deadline_not_claimed(void **state)
{
	(void)state;
	struct kvm_cpuid2 *c = table();
	cpuid_add_emulated(c, false);
	assert_int_equal(c->entries[1].ecx, 0x00200001);
	free(c);
}

#define MONITOR	  (1u << 3)
#define PV_UNHALT (1u << KVM_FEATURE_PV_UNHALT)

/* Leaf 1 (MONITOR as a host might list it), leaf 5 as KVM zeroes it, and
 * KVM's feature leaf with PV unhalt and the clock bits. */
static struct kvm_cpuid2 *idle_table(void)
{
	struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + 3 * sizeof(c->entries[0]));
	assert_non_null(c);
	c->nent = 3;
	c->entries[0] = (struct kvm_cpuid_entry2){.function = 1, .ecx = 0x00200001 | MONITOR};
	c->entries[1] = (struct kvm_cpuid_entry2){.function = 5};
	c->entries[2] =
	    (struct kvm_cpuid_entry2){.function = KVM_CPUID_FEATURES, .eax = PV_UNHALT | 0x1b};
	return c;
}

static const uint32_t host5[4] = {0x40, 0x40, 0, 0x11142120};

/* Default (--cpu-pm off): no MWAIT for the guest, PV unhalt as KVM lists it. */
static void test_idle_exits_on(void **state)
{
	(void)state;
	struct kvm_cpuid2 *c = idle_table();
	cpuid_patch_idle(c, 0, host5);
	assert_int_equal(c->entries[0].ecx, 0x00200001);
	assert_int_equal(
	    c->entries[1].eax | c->entries[1].ebx | c->entries[1].ecx | c->entries[1].edx, 0);
	assert_int_equal(c->entries[2].eax, PV_UNHALT | 0x1b);
	free(c);
}

/* MWAIT exits off: MONITOR/MWAIT and the host's leaf 5 (with EMX and IBE),
 * as QEMU's cpu-pm=on; HLT still exits, so PV unhalt stays. */
static void test_mwait_off(void **state)
{
	(void)state;
	struct kvm_cpuid2 *c = idle_table();
	cpuid_patch_idle(c, KVM_X86_DISABLE_EXITS_MWAIT, host5);
	assert_int_equal(c->entries[0].ecx, 0x00200001 | MONITOR);
	assert_int_equal(c->entries[1].eax, 0x40);
	assert_int_equal(c->entries[1].ebx, 0x40);
	assert_int_equal(c->entries[1].ecx, 0x3);
	assert_int_equal(c->entries[1].edx, 0x11142120);
	assert_int_equal(c->entries[2].eax, PV_UNHALT | 0x1b);
	free(c);
}

/* HLT, PAUSE and C-states off, MWAIT kept (a host without MWAIT): no
 * MONITOR, and no PV unhalt, whose kick cannot wake a vCPU halted in the
 * guest; KVM's other features stay. */
static void test_hlt_off(void **state)
{
	(void)state;
	struct kvm_cpuid2 *c = idle_table();
	cpuid_patch_idle(c,
			 KVM_X86_DISABLE_EXITS_HLT | KVM_X86_DISABLE_EXITS_PAUSE |
			     KVM_X86_DISABLE_EXITS_CSTATE,
			 host5);
	assert_int_equal(c->entries[0].ecx, 0x00200001);
	assert_int_equal(c->entries[1].ecx, 0);
	assert_int_equal(c->entries[2].eax, 0x1b);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tsc_deadline_added),
	    cmocka_unit_test(test_tsc_deadline_not_claimed),
	    cmocka_unit_test(test_idle_exits_on),
	    cmocka_unit_test(test_mwait_off),
	    cmocka_unit_test(test_hlt_off),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
