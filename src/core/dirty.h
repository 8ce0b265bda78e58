// SPDX-License-Identifier: Apache-2.0
/* Guest pages the VMM itself wrote (docs/SNAPSHOT.md, "Dirty pages").
 *
 * KVM's dirty log (vm_dirty.h) sees only the guest's own writes through
 * its page tables: a device's DMA into a receive buffer, a disk read, a
 * used ring are written by this process through the host mapping, which
 * KVM never sees. So every write helper (core/dma.h, the virtqueue's used
 * ring, a readv/preadv straight into a chain) marks the pages it wrote
 * here, after the write, as Firecracker and Cloud Hypervisor keep a bitmap
 * beside guest memory for the same reason.
 *
 * A bit per 4 KiB page of the one host mapping of guest RAM: bit i is the
 * page at host offset i * 4096, which is also its offset in a snapshot's
 * memory file (low RAM, then high RAM). Marking is an atomic OR from any
 * thread; dirty_log_take swaps each word with 0, so a page written after
 * the take is marked again and a mark is never lost between two takes.
 *
 * skiff runs one guest per process: the helpers mark in the one log
 * dirty_track_set registered (none: marking is one load and a branch). */
#ifndef SKIFF_DIRTY_H
#define SKIFF_DIRTY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define DIRTY_PAGE_SHIFT 12
#define DIRTY_PAGE_SIZE	 (1ull << DIRTY_PAGE_SHIFT)

struct dirty_log {
	uint8_t *host;		/* guest RAM's host mapping */
	uint64_t size;		/* its bytes */
	uint64_t pages;		/* bits in use */
	_Atomic uint64_t *bits; /* (pages + 63) / 64 words */
};

/* Words of a bitmap of n pages. */
static inline uint64_t dirty_words(uint64_t pages)
{
	return (pages + 63) / 64;
}

/* A log for [host, host + size), every page dirty if all, else clean.
 * 0 or -ENOMEM. */
int dirty_log_init(struct dirty_log *d, void *host, uint64_t size, bool all);
void dirty_log_free(struct dirty_log *d);
/* Marks the pages [p, p + len) touches; bytes outside the mapping are
 * ignored (they are not guest RAM). */
void dirty_log_mark(struct dirty_log *d, const void *p, size_t len);
/* ORs the marks into out (dirty_words(pages) words) and clears them. */
void dirty_log_take(struct dirty_log *d, uint64_t *out);
/* ORs bits back into the log: a taken set that was not saved after all
 * (a failed Diff snapshot) is dirty still. */
void dirty_log_put(struct dirty_log *d, const uint64_t *bits);

/* ORs the nbits bits of src into dst from bit off (KVM's per-slot bitmap
 * into the whole mapping's). */
void dirty_bits_or(uint64_t *dst, uint64_t off, const uint64_t *src, uint64_t nbits);
/* Takes the bits [from, from + nbits) of log, a bitmap that another
 * party sets with atomic ORs (the kernel's vhost log, by guest-physical
 * page): swaps each word holding them with 0 and ORs those bits into dst
 * from bit off. from is a multiple of 64, so no bit outside the range is
 * taken (the last word's bits past it are cleared too: they name no RAM). */
void dirty_bits_take(_Atomic uint64_t *log, uint64_t from, uint64_t nbits, uint64_t *dst,
		     uint64_t off);
/* Set bits among the first nbits. */
uint64_t dirty_bits_count(const uint64_t *b, uint64_t nbits);
/* The next run of set bits at or after *pos below nbits: its first bit
 * in *pos, its length returned (0: none left). */
uint64_t dirty_bits_next_run(const uint64_t *b, uint64_t nbits, uint64_t *pos);

/* Sets in out (dirty_words of its pages, cleared first) the bit of each
 * page of [host, host + size) holding a byte that is not zero; a partial
 * last page counts its own bytes only. A page never written reads as the
 * kernel's zero page: scanning it costs no memory. */
void dirty_bits_nonzero(const uint8_t *host, uint64_t size, uint64_t *out);
/* The same for RAM mapped privately (MAP_PRIVATE, offset 0, host page
 * aligned) from the file fd, without reading the pages that are holes of
 * the file this process has not written (pagemap: /proc/self/pagemap open
 * for reading): reading them would fault each in from the file
 * (dirty_file.c). fd or pagemap -1, or either failing: every page read. */
void dirty_bits_nonzero_file(const uint8_t *host, uint64_t size, int fd, int pagemap,
			     uint64_t *out);

/* The process's log, or NULL to stop marking (only once no thread
 * writes guest memory any more, as the log is then freed). */
void dirty_track_set(struct dirty_log *d);
void dirty_mark(const void *p, size_t len);
/* Marks the first len bytes of iov[0, n) (what a readv returned). */
void dirty_mark_iov(const struct iovec *iov, unsigned int n, size_t len);

#endif
