// SPDX-License-Identifier: Apache-2.0
/* Fake guest RAM for unit tests: an anonymous mapping starting at GPA 0,
 * registered with guest_mem_init. It is mmap'd (not malloc'd) so a test can
 * revoke access with fake_mem_protect() and prove code touches no guest
 * memory, and so large sizes cost nothing until touched (MAP_NORESERVE). */
#ifndef SKIFF_TEST_FAKE_MEM_H
#define SKIFF_TEST_FAKE_MEM_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "core/guest_mem.h"

struct fake_mem {
	struct guest_mem gm;
	uint8_t *ram;
	uint64_t size;
};

/* Returns 0, or -1 if the mapping failed. */
static inline int fake_mem_init(struct fake_mem *fm, uint64_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	fm->ram = p;
	fm->size = size;
	guest_mem_init(&fm->gm, p, size);
	return 0;
}

static inline void fake_mem_free(struct fake_mem *fm)
{
	if (fm->ram)
		munmap(fm->ram, fm->size);
	fm->ram = NULL;
}

/* false: every access to guest RAM faults (SIGSEGV). */
static inline void fake_mem_protect(struct fake_mem *fm, bool accessible)
{
	mprotect(fm->ram, fm->size, accessible ? PROT_READ | PROT_WRITE : PROT_NONE);
}

/* Host pointer for a low GPA, for building rings (test-side only). */
static inline void *fake_mem_at(struct fake_mem *fm, uint64_t gpa)
{
	return fm->ram + gpa;
}

#endif
