// SPDX-License-Identifier: Apache-2.0
/* mem_zero (src/core/mem_zero.c): everything ends zero, and a page that
 * was zero already is never written (here: read-only, so a write faults). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/mem_zero.h"

#define PG 4096u

static void test_zero_pages_left_alone(void **state)
{
	(void)state;
	uint8_t *m = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(m != MAP_FAILED);
	m[PG + 7] = 1;						  /* page 1: one byte */
	m[3 * PG - 1] = 2;					  /* page 2: its last byte */
	assert_int_equal(mprotect(m, PG, PROT_READ), 0);	  /* page 0: zero */
	assert_int_equal(mprotect(m + 3 * PG, PG, PROT_READ), 0); /* page 3: zero */
	mem_zero(m, 4 * PG);
	for (unsigned int i = 0; i < 4 * PG; i++)
		assert_int_equal(m[i], 0);
	munmap(m, 4 * PG);
}

static void test_unaligned_ends(void **state)
{
	(void)state;
	static uint8_t b[3 * PG + 100];
	memset(b, 0xa5, sizeof(b));
	mem_zero(b + 13, sizeof(b) - 40);
	for (size_t i = 0; i < sizeof(b); i++)
		assert_int_equal(b[i], i < 13 || i >= sizeof(b) - 27 ? 0xa5 : 0);
	mem_zero(b, 0); /* nothing */
	assert_int_equal(b[0], 0xa5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_zero_pages_left_alone),
	    cmocka_unit_test(test_unaligned_ends),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
