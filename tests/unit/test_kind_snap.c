// SPDX-License-Identifier: Apache-2.0
/* Each virtio kind's own snapshot section (dev_ops.save and restore):
 * virtio-blk and virtio-rng round-trip onto a fresh device of the same
 * configuration; a section of another disk size, or cut short anywhere,
 * is refused with the device as it was. virtio-net's, which reaches into
 * its private state, is test_net_kind_snap.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/snap.h"
#include "devices/virtio-blk/virtio_blk.h"
#include "devices/virtio-blk/virtio_blk_spec.h"
#include "devices/virtio-rng/virtio_rng.h"
#include "fake_mem.h"
#include "kind_snap_fx.h"

static int disk(const char *path, off_t size)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(ftruncate(fileno(f), size), 0);
	return fclose(f);
}

static struct device blk_make(const char *path, struct fake_mem *fm)
{
	struct blk_spec *s = calloc(1, sizeof(*s));
	char err[200];
	assert_int_equal(blk_spec_parse(path, s, err, sizeof(err)), 0);
	struct dev_ctx ctx = {.name = "virtio-blk0", .gm = &fm->gm, .nr_vcpus = 2};
	struct device d;
	assert_int_equal(virtio_blk_new_device(&ctx, s, &d, err, sizeof(err)), 0);
	free(s);
	return d;
}

static void test_blk(void **state)
{
	(void)state;
	struct fake_mem fm;
	assert_int_equal(fake_mem_init(&fm, 1 << 20), 0);
	char path[256];
	const char *tmp = getenv("TMPDIR");
	snprintf(path, sizeof(path), "%s/skiff-kind-snap-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(disk(path, 1 << 20), 0);
	struct device a = blk_make(path, &fm);
	uint8_t *p;
	size_t n = save(a.ops, a.dev, &p);
	a.ops->destroy(a.dev);
	struct device b = blk_make(path, &fm);
	char err[200] = "";
	assert_int_equal(b.ops->restore(b.dev, p, n, err, sizeof(err)), 0);
	cuts_refused(b.ops, b.dev, p, n);
	b.ops->destroy(b.dev);
	/* The image grew between save and load. */
	assert_int_equal(disk(path, 2 << 20), 0);
	struct device c = blk_make(path, &fm);
	assert_int_equal(c.ops->restore(c.dev, p, n, err, sizeof(err)), -1);
	assert_string_equal(err, "virtio-blk0: saved state refused: the disk image changed size");
	c.ops->destroy(c.dev);
	free(p);
	unlink(path);
	fake_mem_free(&fm);
}

static void test_rng(void **state)
{
	(void)state;
	struct rng_spec s;
	rng_spec_init(&s);
	struct fake_mem fm;
	assert_int_equal(fake_mem_init(&fm, 1 << 20), 0);
	struct dev_ctx ctx = {.name = "virtio-rng0", .gm = &fm.gm};
	struct device a, b;
	char err[200] = "";
	assert_int_equal(virtio_rng_new_device(&ctx, &s, &a, err, sizeof(err)), 0);
	assert_int_equal(virtio_rng_new_device(&ctx, &s, &b, err, sizeof(err)), 0);
	uint8_t *p;
	size_t n = save(a.ops, a.dev, &p);
	assert_int_equal(b.ops->restore(b.dev, p, n, err, sizeof(err)), 0);
	cuts_refused(b.ops, b.dev, p, n);
	p[0] ^= 3; /* a layout this skiff does not know */
	assert_int_equal(b.ops->restore(b.dev, p, n, err, sizeof(err)), -1);
	a.ops->destroy(a.dev);
	b.ops->destroy(b.dev);
	free(p);
	fake_mem_free(&fm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_blk),
	    cmocka_unit_test(test_rng),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
