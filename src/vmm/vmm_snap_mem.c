// SPDX-License-Identifier: Apache-2.0
#include "vmm/vmm_snap_mem.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/dirty.h"

/* [off, off + len) of ram at off in fd, across short writes. */
static int mem_pwrite(int fd, const uint8_t *ram, uint64_t off, uint64_t len)
{
	while (len) {
		size_t chunk = len > (1u << 30) ? 1u << 30 : (size_t)len;
		ssize_t n = pwrite(fd, ram + off, chunk, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

int snap_mem_write_diff(int fd, const char *path, const uint8_t *ram, uint64_t size,
			const uint64_t *bits, uint64_t *written, char *err, size_t errlen)
{
	uint64_t pages = (size + DIRTY_PAGE_SIZE - 1) >> DIRTY_PAGE_SHIFT, pos = 0, run;
	int r = 0;
	*written = 0;
	/* Truncated first: a page of an older file left in place would pass
	 * for one of this diff's when it is merged. */
	if (ftruncate(fd, 0) < 0 || ftruncate(fd, (off_t)size) < 0)
		r = -errno;
	while (r == 0 && (run = dirty_bits_next_run(bits, pages, &pos))) {
		uint64_t off = pos << DIRTY_PAGE_SHIFT, len = run << DIRTY_PAGE_SHIFT;
		if (len > size - off)
			len = size - off;
		r = mem_pwrite(fd, ram, off, len);
		*written += len;
		pos += run;
	}
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r < 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(-r));
		return -1;
	}
	return 0;
}

int snap_mem_write_full(int fd, const char *path, const uint8_t *ram, uint64_t size, int ram_fd,
			int pagemap, uint64_t *written, char *err, size_t errlen)
{
	uint64_t pages = (size + DIRTY_PAGE_SIZE - 1) >> DIRTY_PAGE_SHIFT;
	uint64_t *bits = calloc(dirty_words(pages), sizeof(*bits));
	if (!bits) {
		snprintf(err, errlen, "cannot write %s: out of memory", path);
		return -1;
	}
	dirty_bits_nonzero_file(ram, size, ram_fd, pagemap, bits);
	int r = snap_mem_write_diff(fd, path, ram, size, bits, written, err, errlen);
	free(bits);
	return r;
}
