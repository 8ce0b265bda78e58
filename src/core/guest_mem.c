// SPDX-License-Identifier: Apache-2.0
#include "core/guest_mem.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The one file-backed guest RAM of this process, for the SIGBUS handler:
 * [file_lo, file_hi), 0 when there is none. */
static _Atomic uintptr_t file_lo, file_hi;

/* A page of a MAP_PRIVATE file mapping that the file no longer covers
 * (someone cut the snapshot's memory file after the load) raises SIGBUS
 * on the first touch by a device model. That is the user's file gone
 * wrong, not skiff: one line and exit status 1 rather than a core dump.
 * Any other SIGBUS gets its default action (the handler is one-shot, and
 * the access faults again). */
static void guest_mem_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	uintptr_t a = (uintptr_t)si->si_addr;
	if (a >= atomic_load(&file_lo) && a < atomic_load(&file_hi)) {
		static const char msg[] = "skiff: error: the guest memory file was cut short "
					  "under the running VM (SIGBUS): stopping\n";
		ssize_t r = write(STDERR_FILENO, msg, sizeof(msg) - 1);
		(void)r;
		_exit(1);
	}
	(void)sig; /* SA_RESETHAND left the default action in place */
}

static void guest_mem_guard(void *p, uint64_t size)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = guest_mem_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	atomic_store(&file_lo, (uintptr_t)p);
	atomic_store(&file_hi, (uintptr_t)p + (uintptr_t)size);
	sigaction(SIGBUS, &sa, NULL);
}

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
	guest_mem_guard(p, size);
	return 0;
}

void guest_mem_free(struct guest_mem *gm)
{
	if (gm->host && (uintptr_t)gm->host == atomic_load(&file_lo)) {
		atomic_store(&file_hi, 0);
		atomic_store(&file_lo, 0);
	}
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
