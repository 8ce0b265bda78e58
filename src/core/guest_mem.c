// SPDX-License-Identifier: Apache-2.0
#include "core/guest_mem.h"

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

void guest_mem_init(struct guest_mem *gm, void *host, uint64_t size)
{
	gm->host = host;
	gm->size = size;
	gm->low_size = size < GUEST_MEM_LOW_MAX ? size : GUEST_MEM_LOW_MAX;
}

int guest_mem_alloc(struct guest_mem *gm, uint64_t size)
{
	/* KVM maps a guest page with a 2 MiB page (EPT/NPT, or a shadow huge
	 * page) only where the host address and the guest address agree
	 * modulo 2 MiB, and guest RAM starts at guest address 0: so the
	 * mapping starts on a 2 MiB boundary, which mmap alone does not give
	 * (before Linux 6.7 an anonymous mapping is only page-aligned). Map
	 * GUEST_MEM_ALIGN more, then return the unaligned head and the tail. */
	if (size > UINT64_MAX - GUEST_MEM_ALIGN)
		return -ENOMEM;
	size_t span = (size_t)(size + GUEST_MEM_ALIGN);
	char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (raw == MAP_FAILED)
		return -errno;
	char *p =
	    (char *)(((uintptr_t)raw + GUEST_MEM_ALIGN - 1) & ~(uintptr_t)(GUEST_MEM_ALIGN - 1));
	if (p > raw)
		munmap(raw, (size_t)(p - raw));
	if (raw + span > p + size)
		munmap(p + size, (size_t)(raw + span - (p + size)));
	/* Guest RAM is never worth dumping and is large; THP cuts EPT misses. */
	madvise(p, size, MADV_DONTDUMP);
	madvise(p, size, MADV_HUGEPAGE);
	guest_mem_init(gm, p, size);
	return 0;
}

int guest_mem_map_file(struct guest_mem *gm, uint64_t size, int fd)
{
	int r = guest_mem_alloc(gm, size);
	if (r < 0)
		return r;
	/* Over the aligned reservation: the alignment stays, the pages are
	 * the file's. */
	void *p =
	    mmap(gm->host, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0);
	if (p == MAP_FAILED) {
		r = -errno;
		guest_mem_free(gm);
		return r;
	}
	madvise(p, size, MADV_DONTDUMP);
	return 0;
}

void guest_mem_free(struct guest_mem *gm)
{
	if (gm->host)
		munmap(gm->host, gm->size);
	gm->host = NULL;
	gm->size = gm->low_size = 0;
}

void *guest_mem_ptr(const struct guest_mem *gm, uint64_t gpa, uint64_t len)
{
	uint64_t end;

	if (__builtin_add_overflow(gpa, len, &end))
		return NULL;
	if (end <= gm->low_size)
		return gm->host + gpa;
	if (gpa >= GUEST_MEM_HIGH_BASE) {
		uint64_t high_size = gm->size - gm->low_size;
		uint64_t off = gpa - GUEST_MEM_HIGH_BASE;
		if (end - GUEST_MEM_HIGH_BASE <= high_size)
			return gm->host + gm->low_size + off;
	}
	return NULL;
}

bool guest_mem_valid(const struct guest_mem *gm, uint64_t gpa, uint64_t len)
{
	return guest_mem_ptr(gm, gpa, len) != NULL;
}
