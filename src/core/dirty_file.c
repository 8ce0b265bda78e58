// SPDX-License-Identifier: Apache-2.0
/* dirty_bits_nonzero_file (dirty.h): the non-zero pages of RAM mapped
 * privately from a memory file, reading only pages that can hold
 * something. Reading a page of such a mapping the guest has not written
 * faults it in from the file: a restored guest's first migration round
 * (or a Full snapshot) read every page of RAM, most of them holes of a
 * sparse snapshot file, a few seconds in the testbed. A page the file has
 * a hole for is zero unless this process wrote it, and a written page of
 * a private mapping is an anonymous one: present and not a file page, or
 * swapped (/proc/self/pagemap, Documentation/admin-guide/mm/pagemap.rst). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "core/dirty.h"

#define PM_PRESENT (1ull << 63)
#define PM_SWAPPED (1ull << 62)
#define PM_FILE	   (1ull << 61) /* a file page or shared anonymous */
#define PM_BATCH   512u		/* entries read at a time (4 KiB) */

/* The pages [first, first + n) of the hole: those the process wrote
 * (anonymous) are read for zero, the rest are zero. -1 if pagemap cannot
 * say. */
static int hole_scan(const uint8_t *host, uint64_t size, int pagemap, uint64_t first, uint64_t n,
		     uint64_t *out)
{
	uint64_t e[PM_BATCH];
	uintptr_t base = (uintptr_t)host >> DIRTY_PAGE_SHIFT;
	for (uint64_t done = 0; done < n;) {
		uint64_t k = n - done < PM_BATCH ? n - done : PM_BATCH;
		off_t at = (off_t)((base + first + done) * sizeof(e[0]));
		if (pread(pagemap, e, k * sizeof(e[0]), at) != (ssize_t)(k * sizeof(e[0])))
			return -1;
		for (uint64_t j = 0; j < k; j++) {
			uint64_t i = first + done + j, off = i << DIRTY_PAGE_SHIFT;
			bool anon =
			    (e[j] & PM_SWAPPED) || ((e[j] & PM_PRESENT) && !(e[j] & PM_FILE));
			size_t len =
			    size - off < DIRTY_PAGE_SIZE ? (size_t)(size - off) : DIRTY_PAGE_SIZE;
			uint64_t one[1];
			if (anon) {
				dirty_bits_nonzero(host + off, len, one);
				out[i / 64] |= (one[0] & 1) << (i % 64);
			}
		}
		done += k;
	}
	return 0;
}

/* The pages [first, first + n) read for zero. */
static void data_scan(const uint8_t *host, uint64_t size, uint64_t first, uint64_t n, uint64_t *out)
{
	for (uint64_t i = first; i < first + n; i++) {
		uint64_t off = i << DIRTY_PAGE_SHIFT, one[1];
		size_t len = size - off < DIRTY_PAGE_SIZE ? (size_t)(size - off) : DIRTY_PAGE_SIZE;
		dirty_bits_nonzero(host + off, len, one);
		out[i / 64] |= (one[0] & 1) << (i % 64);
	}
}

void dirty_bits_nonzero_file(const uint8_t *host, uint64_t size, int fd, int pagemap, uint64_t *out)
{
	uint64_t pages = (size + DIRTY_PAGE_SIZE - 1) >> DIRTY_PAGE_SHIFT;
	if (fd < 0 || pagemap < 0 || (uintptr_t)host % DIRTY_PAGE_SIZE) {
		dirty_bits_nonzero(host, size, out);
		return;
	}
	memset(out, 0, dirty_words(pages) * sizeof(*out));
	uint64_t pos = 0; /* bytes of the file looked at */
	while (pos < size) {
		/* A data extent from pos, then the hole after it (the file's
		 * end is a hole's start). Pages part data are read. */
		off_t d = lseek(fd, (off_t)pos, SEEK_DATA);
		uint64_t data = d < 0 ? size : (uint64_t)d;
		if (d < 0 && errno != ENXIO)
			goto whole;
		if (data > size)
			data = size;
		uint64_t hole_first = (pos + DIRTY_PAGE_SIZE - 1) >> DIRTY_PAGE_SHIFT;
		/* Whole pages of the hole; one that reaches the end takes the
		 * last page, partial or not (RAM of no whole number of pages). */
		uint64_t hole_end = data >= size ? pages : data >> DIRTY_PAGE_SHIFT;
		if (pos % DIRTY_PAGE_SIZE)
			data_scan(host, size, pos >> DIRTY_PAGE_SHIFT, 1, out);
		if (hole_end > hole_first &&
		    hole_scan(host, size, pagemap, hole_first, hole_end - hole_first, out) < 0)
			goto whole;
		if (data >= size)
			break;
		off_t h = lseek(fd, (off_t)data, SEEK_HOLE);
		if (h < 0)
			goto whole;
		uint64_t end = (uint64_t)h > size ? size : (uint64_t)h;
		uint64_t first = data >> DIRTY_PAGE_SHIFT;
		uint64_t last = (end + DIRTY_PAGE_SIZE - 1) >> DIRTY_PAGE_SHIFT;
		data_scan(host, size, first, last - first, out);
		pos = end;
	}
	return;
whole:
	/* The file or pagemap could not say: every page read. */
	dirty_bits_nonzero(host, size, out);
}
