// SPDX-License-Identifier: Apache-2.0
#include "core/mem_zero.h"

#include <stdint.h>
#include <string.h>

#define MEM_ZERO_PAGE 4096u

/* All zero: the first byte is, and each byte equals the next. */
static int all_zero(const unsigned char *p, size_t n)
{
	return !n || (!p[0] && !memcmp(p, p + 1, n - 1));
}

void mem_zero(void *p, size_t n)
{
	unsigned char *c = p;
	while (n) {
		/* To the next page boundary: a page is written or not whole. */
		size_t run = MEM_ZERO_PAGE - ((uintptr_t)c % MEM_ZERO_PAGE);
		run = run < n ? run : n;
		if (!all_zero(c, run))
			memset(c, 0, run);
		c += run;
		n -= run;
	}
}
