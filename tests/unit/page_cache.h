// SPDX-License-Identifier: Apache-2.0
/* For tests of direct I/O: how many pages of a file's [off, off + len) are
 * in the host page cache (mincore of a shared mapping of its first size
 * bytes). */
#ifndef SKIFF_TEST_PAGE_CACHE_H
#define SKIFF_TEST_PAGE_CACHE_H

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static inline unsigned int page_cache_count(const char *path, size_t size, size_t off, size_t len)
{
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	void *m = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char *vec = malloc((size + pg - 1) / pg);
	assert_non_null(vec);
	assert_int_equal(mincore(m, size, vec), 0);
	unsigned int n = 0;
	for (size_t p = off / pg; p < (off + len + pg - 1) / pg; p++)
		n += vec[p] & 1;
	free(vec);
	munmap(m, size);
	close(fd);
	return n;
}

#endif
