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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tsc_deadline_added),
	    cmocka_unit_test(test_tsc_deadline_not_claimed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
