// SPDX-License-Identifier: Apache-2.0
/* Each virtio kind's own snapshot section (dev_ops.save and restore):
 * virtio-blk, virtio-net and virtio-rng round-trip onto a fresh device of
 * the same configuration; a section of another disk size, another MAC,
 * or cut short anywhere is refused with the device as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/snap.h"
#include "devices/virtio-blk/virtio_blk.h"
#include "devices/virtio-blk/virtio_blk_spec.h"
#include "devices/virtio-net/virtio_net_priv.h"
#include "devices/virtio-rng/virtio_rng.h"
#include "fake_mem.h"

/* Saves dev into a fresh writer; its payload is copied to *out. */
static size_t save(const struct dev_ops *ops, void *dev, uint8_t **out)
{
	struct snap_writer w;
	struct snap_image img;
	char err[200] = "";
	size_t len;
	snap_writer_init(&w);
	assert_int_equal(ops->save(dev, &w, SNAP_ID_DEVICE, 5, err, sizeof(err)), 0);
	const uint8_t *b = snap_writer_image(&w, &len);
	assert_int_equal(snap_parse(&img, b, len, err, sizeof(err)), 0);
	const struct snap_section *s = snap_find(&img, SNAP_ID_DEVICE, 5);
	assert_non_null(s);
	*out = malloc(s->len + 1);
	memcpy(*out, s->data, s->len);
	size_t n = s->len;
	snap_image_free(&img);
	snap_writer_free(&w);
	return n;
}

/* Every shorter payload, and one longer, refused in one line. */
static void cuts_refused(const struct dev_ops *ops, void *dev, const uint8_t *p, size_t n)
{
	char err[200];
	uint8_t *longer = calloc(1, n + 1);
	memcpy(longer, p, n);
	for (size_t k = 0; k <= n + 1; k++) {
		if (k == n)
			continue;
		err[0] = '\0';
		assert_int_equal(ops->restore(dev, longer, k, err, sizeof(err)), -1);
		assert_true(err[0] && !strchr(err, '\n'));
	}
	free(longer);
}

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

static struct virtio_net *net_make(const uint8_t *mac, int *wire)
{
	struct tap taps[1];
	int sv[2];
	char err[200];
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	tap_from_fd(&taps[0], sv[0]);
	*wire = sv[1];
	struct virtio_net *n = virtio_net_create("virtio-net0", taps, 1, mac, err, sizeof(err));
	assert_non_null(n);
	return n;
}

static void test_net(void **state)
{
	(void)state;
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x42}, other[6] = {0x02, 0, 0, 0, 0, 7};
	struct dev_ops ops = {.save = virtio_net_save, .restore = virtio_net_restore};
	int w1, w2, w3;
	struct virtio_net *a = net_make(mac, &w1);
	uint8_t *p;
	size_t n = save(&ops, a, &p);
	/* vhost=on whose rings vhost does not run (no DRIVER_OK yet, or
	 * the built-in path after a fallback): the same section, nothing to
	 * fetch from the kernel. The running case needs /dev/vhost-net: the
	 * testbed's. */
	a->vhost_on = true;
	uint8_t *pv;
	size_t nv = save(&ops, a, &pv);
	assert_int_equal(nv, n);
	assert_memory_equal(pv, p, n);
	assert_false(a->vhost_running);
	free(pv);
	a->vhost_on = false;
	char err[200] = "";
	struct virtio_net *b = net_make(mac, &w2);
	assert_int_equal(virtio_net_restore(b, p, n, err, sizeof(err)), 0);
	cuts_refused(&ops, b, p, n);
	struct virtio_net *c = net_make(other, &w3);
	assert_int_equal(virtio_net_restore(c, p, n, err, sizeof(err)), -1);
	assert_string_equal(err, "virtio-net0: saved state refused: its MAC differs");
	virtio_net_destroy(a);
	virtio_net_destroy(b);
	virtio_net_destroy(c);
	close(w1);
	close(w2);
	close(w3);
	free(p);
}

/* A live migration's switch on one host: the source lets go of its tap
 * queue (a single-queue tap takes one process at a time), and a take back
 * that cannot reopen it is one line; a second release is harmless. */
static void test_net_handover(void **state)
{
	(void)state;
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x42};
	int w;
	char err[200] = "";
	struct virtio_net *a = net_make(mac, &w);
	snprintf(a->pairs[0].tap.name, sizeof(a->pairs[0].tap.name), "skiff-no-tap");
	assert_int_equal(virtio_net_handover(a, true, err, sizeof(err)), 0);
	assert_int_equal(a->pairs[0].tap.fd, -1);
	char b;
	assert_int_equal(recv(w, &b, 1, MSG_DONTWAIT), 0); /* the queue's other end: closed */
	assert_int_equal(virtio_net_handover(a, true, err, sizeof(err)), 0);
	assert_int_equal(virtio_net_handover(a, false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "skiff-no-tap"));
	assert_null(strchr(err, '\n'));
	assert_int_equal(a->pairs[0].tap.fd, -1);
	/* vhost's writes are in no dirty log: a Diff or a migration refuses. */
	assert_null(virtio_net_dirty_blind(a));
	a->vhost_on = true;
	assert_non_null(strstr(virtio_net_dirty_blind(a), "vhost=on"));
	a->vhost_on = false;
	virtio_net_destroy(a);
	close(w);
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
	    cmocka_unit_test(test_net),
	    cmocka_unit_test(test_net_handover),
	    cmocka_unit_test(test_rng),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
