// SPDX-License-Identifier: Apache-2.0
/* blk_backend with direct (O_DIRECT beside the buffered file): which open
 * file a transfer takes, that aligned ones leave the host page cache alone
 * (mincore of the image), and that the two files agree on the data. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <fcntl.h>
#include <unistd.h>

#include "devices/block/blk_backend.h"
#include "loop_dev.h"
#include "page_cache.h"

#define IMG_SIZE (64 * 1024)

struct fx {
	char dir[64], path[128];
	uint8_t *buf; /* 4 KiB-aligned, 32 KiB */
	struct blk_backend b;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	const char *tmp = getenv("TMPDIR");
	snprintf(f->dir, sizeof(f->dir), "%s/skiff-direct-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir) || posix_memalign((void **)&f->buf, BLK_DIRECT_ALIGN, 32768))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/disk.img", f->dir);
	int fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, IMG_SIZE) < 0)
		return -1;
	close(fd);
	f->b.fd = f->b.dfd = -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	blk_backend_close(&f->b);
	unlink(f->path);
	rmdir(f->dir);
	free(f->buf);
	free(f);
	return 0;
}

static void open_direct(struct fx *f)
{
	char err[256] = "";
	assert_int_equal(blk_backend_open(&f->b, f->path, false, true, err, sizeof(err)), 0);
	if (f->b.dfd < 0)
		fail_msg("no direct file: %s", err);
}

static unsigned int cached_pages(struct fx *f, size_t off, size_t len)
{
	return page_cache_count(f->path, IMG_SIZE, off, len);
}

static void test_open_flags(void **state)
{
	struct fx *f = *state;
	open_direct(f);
	assert_true(fcntl(f->b.dfd, F_GETFL) & O_DIRECT);
	assert_false(fcntl(f->b.dfd, F_GETFL) & O_NONBLOCK); /* io_uring would say EAGAIN */
	assert_false(fcntl(f->b.fd, F_GETFL) & O_DIRECT);
	blk_backend_close(&f->b);
	assert_int_equal(f->b.fd, -1);
	assert_int_equal(f->b.dfd, -1);

	char err[256] = "";
	assert_int_equal(blk_backend_open(&f->b, f->path, true, false, err, sizeof(err)), 0);
	assert_int_equal(f->b.dfd, -1); /* not asked for: none */
}

static void test_fd_for(void **state)
{
	struct fx *f = *state;
	open_direct(f);
	struct iovec al[2] = {{f->buf, 4096}, {f->buf + 8192, 8192}};
	assert_int_equal(blk_backend_fd_for(&f->b, al, 2, 4096), f->b.dfd);
	assert_int_equal(blk_backend_fd_for(&f->b, al, 2, 512), f->b.fd); /* offset */
	struct iovec base[2] = {al[0], {f->buf + 8192 + 512, 4096}};
	assert_int_equal(blk_backend_fd_for(&f->b, base, 2, 0), f->b.fd);
	struct iovec len[2] = {al[0], {f->buf + 8192, 4096 + 512}};
	assert_int_equal(blk_backend_fd_for(&f->b, len, 2, 0), f->b.fd);
	blk_backend_close(&f->b);
	char err[256] = "";
	assert_int_equal(blk_backend_open(&f->b, f->path, false, false, err, sizeof(err)), 0);
	assert_int_equal(blk_backend_fd_for(&f->b, al, 2, 4096), f->b.fd);
}

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 13 + i / 4096);
}

/* An aligned write and read bypass the page cache; an unaligned one goes
 * through it; either reads what the other wrote. */
static void test_direct_bypasses_cache(void **state)
{
	struct fx *f = *state;
	open_direct(f);
	fill(f->buf, 16384, 1);
	struct iovec iov = {f->buf, 16384};
	assert_int_equal(blk_backend_write(&f->b, &iov, 1, 16384), 0);
	assert_int_equal(cached_pages(f, 16384, 16384), 0);

	uint8_t *back = malloc(16384 + 1);
	assert_non_null(back);
	struct iovec un = {back + 1, 16384}; /* unaligned: buffered */
	assert_int_equal(blk_backend_read(&f->b, &un, 1, 16384), 0);
	assert_memory_equal(back + 1, f->buf, 16384);
	assert_true(cached_pages(f, 16384, 16384) > 0);

	/* Buffered write, then a direct read of the same range: the new data
	 * (Linux writes the cached range back before a direct read). */
	fill(back + 1, 4096, 7);
	un.iov_base = back + 1;
	un.iov_len = 4096;
	assert_int_equal(blk_backend_write(&f->b, &un, 1, 16384), 0);
	memset(f->buf, 0, 4096);
	iov.iov_len = 4096;
	assert_int_equal(blk_backend_read(&f->b, &iov, 1, 16384), 0);
	assert_memory_equal(f->buf, back + 1, 4096);
	free(back);

	/* A direct read of an uncached range leaves it uncached. */
	iov.iov_len = 8192;
	assert_int_equal(blk_backend_read(&f->b, &iov, 1, 49152), 0);
	assert_int_equal(cached_pages(f, 49152, 8192), 0);
}

/* PATCH with the disk's own path: the replacement shares both open files
 * (a second one would conflict with the disk's own lock). */
static void test_open_for_same_image(void **state)
{
	struct fx *f = *state;
	open_direct(f);
	struct blk_backend nb;
	char err[256] = "";
	assert_int_equal(blk_backend_open_for(&nb, &f->b, f->path, false, true, err, sizeof(err)),
			 0);
	assert_int_equal(nb.fd, f->b.fd);
	assert_int_equal(nb.dfd, f->b.dfd);
}

/* Refused once, the direct file takes nothing more, the refusal is said
 * once, and a PATCH of the same image keeps it. */
static void test_refuse_direct(void **state)
{
	struct fx *f = *state;
	open_direct(f);
	struct iovec al = {f->buf, 4096};
	assert_int_equal(blk_backend_fd_for(&f->b, &al, 1, 4096), f->b.dfd);
	assert_true(blk_backend_refuse_direct(&f->b));
	assert_false(blk_backend_refuse_direct(&f->b));
	assert_int_equal(blk_backend_fd_for(&f->b, &al, 1, 4096), f->b.fd);
	struct blk_backend nb;
	char err[256] = "";
	assert_int_equal(blk_backend_open_for(&nb, &f->b, f->path, false, true, err, sizeof(err)),
			 0);
	assert_int_equal(blk_backend_fd_for(&nb, &al, 1, 4096), nb.fd);
	/* Without a direct file there is nothing to refuse. */
	blk_backend_close(&f->b);
	assert_int_equal(blk_backend_open(&f->b, f->path, false, false, err, sizeof(err)), 0);
	assert_false(blk_backend_refuse_direct(&f->b));
}

/* A host that wants more alignment than BLK_DIRECT_ALIGN (a 16 KiB-sector
 * loop device): a 4 KiB-aligned transfer, which the direct file refuses
 * with EINVAL, is served buffered, and so is everything after it. */
static void test_direct_large_blocks(void **state)
{
	struct fx *f = *state;
	char dev[64] = "", err[256] = "";
	if (!loop_dev_possible())
		skip(); /* not root, or no loop driver: said on stderr */
	if (loop_dev_attach(f->path, dev, sizeof(dev)) < 0)
		fail_msg("losetup -b %d failed", LOOP_DEV_LBS);
	int r_open = blk_backend_open(&f->b, dev, false, true, err, sizeof(err));
	int r_w = -1, r_r = -1, r_w16 = -1;
	bool refused = false, same = false;
	if (r_open == 0) {
		fill(f->buf, 16384, 3);
		struct iovec iov = {f->buf, 4096};
		r_w = blk_backend_write(&f->b, &iov, 1, 4096);
		refused = atomic_load(&f->b.direct_refused);
		uint8_t *back = f->buf + 16384;
		iov = (struct iovec){back, 4096};
		r_r = blk_backend_read(&f->b, &iov, 1, 4096);
		same = !memcmp(back, f->buf, 4096);
		iov = (struct iovec){f->buf, 16384};
		r_w16 = blk_backend_write(&f->b, &iov, 1, 16384);
	}
	blk_backend_close(&f->b);
	loop_dev_detach(dev);
	assert_int_equal(r_open, 0);
	assert_int_equal(r_w, 0);
	assert_true(refused);
	assert_int_equal(r_r, 0);
	assert_true(same);
	assert_int_equal(r_w16, 0);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_open_flags),		 T(test_fd_for),	T(test_direct_bypasses_cache),
	    T(test_open_for_same_image), T(test_refuse_direct), T(test_direct_large_blocks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
