#include "core/guest_mem.h"

#include <errno.h>
#include <sys/mman.h>

void guest_mem_init(struct guest_mem *gm, void *host, uint64_t size)
{
	gm->host = host;
	gm->size = size;
	gm->low_size = size < GUEST_MEM_LOW_MAX ? size : GUEST_MEM_LOW_MAX;
}

int guest_mem_alloc(struct guest_mem *gm, uint64_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	/* Guest RAM is never worth dumping and is large; THP cuts EPT misses. */
	madvise(p, size, MADV_DONTDUMP);
	madvise(p, size, MADV_HUGEPAGE);
	guest_mem_init(gm, p, size);
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
