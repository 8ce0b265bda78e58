// SPDX-License-Identifier: Apache-2.0
/* virtio-balloon's snapshot section (virtio_balloon_snap.c): a balloon
 * driven by the test (a held stats buffer, statistics, the driver's
 * actual, a target and interval changed through the API) saved, restored
 * onto a fresh one built from the boot options, with its queues moved as
 * the transport moves them: the same config reads, statistics and target,
 * and the held buffer given back on the next tick. Every cut and every
 * field no balloon can leave is refused with the device as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <linux/virtio_balloon.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/snap.h"
#include "devices/virtio-balloon/virtio_balloon.h"
#include "devices/virtio-balloon/virtio_balloon_priv.h"
#include "fake_mem.h"
#include "virtio/virtq_state.h"

#define RAM_SIZE (8u << 20)
#define QSZ	 64
#define RING_GPA 0x10000
#define DATA_GPA 0x40000
#define BOOT	 "amount=2,stats=1,deflate-on-oom=on"
#include "balloon_fx.h"

/* A stats buffer of two entries on the stats queue (2), kicked: held. */
static void post_stats(struct virtio_dev *v, struct fake_mem *fm)
{
	struct virtio_balloon_stat st[2] = {{VIRTIO_BALLOON_S_MEMFREE, 1234},
					    {VIRTIO_BALLOON_S_SWAP_IN, 7}};
	memcpy(fake_mem_at(fm, DATA_GPA), st, sizeof(st));
	struct virtq_desc d = {.addr = DATA_GPA, .len = sizeof(st)};
	memcpy(fake_mem_at(fm, ring(2, 0) + 16 * 5), &d, sizeof(d));
	uint16_t *avail = fake_mem_at(fm, ring(2, 1));
	avail[2] = 5;
	__atomic_store_n(&avail[1], 1, __ATOMIC_RELEASE);
	v->ops->queue_notify(v, 2);
}

static uint16_t used_idx(struct fake_mem *fm, unsigned int q)
{
	return __atomic_load_n((uint16_t *)fake_mem_at(fm, ring(q, 2) + 2), __ATOMIC_ACQUIRE);
}

static void config(struct virtio_dev *v, uint32_t cfg[2])
{
	v->ops->config_read(v, 0, cfg, 8);
}

static void test_round_trip(void **state)
{
	(void)state;
	struct fake_mem fa, fb;
	struct virtio_dev *a, *b;
	pair_make(&fa, &fb, &a, &b);
	post_stats(a, &fa);
	uint32_t actual = 100;
	a->ops->config_write(a, 4, &actual, 4);
	char err[200] = "";
	assert_int_equal(virtio_balloon_update(a, "amount=3,stats=5", err, sizeof(err)), 0);
	uint8_t *p;
	size_t n = save_section(a, 3, &p);
	/* The memory file and the transport's part. */
	memcpy(fb.ram, fa.ram, RAM_SIZE);
	assert_int_equal(virtio_balloon_restore(b, p, n, err, sizeof(err)), 0);
	for (unsigned int q = 0; q < a->num_queues; q++) {
		struct virtq_state s;
		virtq_state_save(&a->vqs[q], &s);
		assert_int_equal(virtq_state_restore(&b->vqs[q], &fb.gm, &s, err, sizeof(err)), 0);
	}
	assert_int_equal(b->ops->activate(b), 0);
	uint32_t ca[2], cb[2];
	config(a, ca);
	config(b, cb);
	assert_memory_equal(ca, cb, sizeof(ca));
	assert_int_equal(cb[0], 3 * 256);
	assert_int_equal(cb[1], 100);
	struct virtio_balloon *ba = a->priv, *bb = b->priv;
	assert_memory_equal(&ba->gstats, &bb->gstats, sizeof(ba->gstats));
	assert_int_equal(bb->spec.stats_s, 5);
	assert_int_equal(bb->spec.amount_mib, 3);
	/* The buffer held at the save goes back on the next tick. */
	assert_int_equal(used_idx(&fb, 2), 0);
	virtio_balloon_stats_tick(bb, 0);
	assert_int_equal(used_idx(&fb, 2), 1);
	assert_int_equal(((struct virtq_used_elem *)fake_mem_at(&fb, ring(2, 2) + 4))->id, 5);
	free(p);
	pair_free(&fa, &fb, a, b);
}

static void test_hostile_refused(void **state)
{
	(void)state;
	struct fake_mem fm;
	assert_int_equal(fake_mem_init(&fm, RAM_SIZE), 0);
	struct virtio_dev *a = make(&fm), *b = make(&fm);
	driver_ok(a, &fm);
	post_stats(a, &fm);
	uint8_t *p;
	size_t n = save_section(a, 3, &p);
	char err[200];
	uint32_t before[2], after[2];
	config(b, before);
	uint8_t *longer = calloc(1, n + 1);
	memcpy(longer, p, n);
	for (size_t k = 0; k <= n + 1; k++) {
		err[0] = '\0';
		if (k != n)
			assert_int_equal(virtio_balloon_restore(b, longer, k, err, sizeof(err)),
					 -1);
		assert_true(k == n || (err[0] && !strchr(err, '\n')));
	}
	static const struct {
		size_t at;
		uint32_t v;
		const char *why;
	} bad[] = {
	    {0, 2, "its layout is unknown"},
	    {20, 3, "its options differ"},     /* reporting */
	    {16, 0, "its options differ"},     /* stats off */
	    {16, 65536, "its options differ"}, /* interval */
	    {12, 9, "its target does not fit this VM's memory"},
	    {4, 3, "its target does not fit this VM's memory"},
	    {24, 4096, "its held stats buffer is out of range"},
	    {24, (uint32_t)-2, "its held stats buffer is out of range"},
	    {28, 1u << 31, "it has statistics of unknown tags"},
	    {32 + 8 * 15, 1, "it has statistics of unknown tags"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(longer, p, n);
		memcpy(longer + bad[i].at, &bad[i].v, 4);
		char want[200];
		snprintf(want, sizeof(want), "virtio-balloon0: saved state refused: %s",
			 bad[i].why);
		assert_int_equal(virtio_balloon_restore(b, longer, n, err, sizeof(err)), -1);
		assert_string_equal(err, want);
		config(b, after);
		assert_memory_equal(before, after, sizeof(before));
		assert_int_equal(((struct virtio_balloon *)b->priv)->restored_head, -1);
	}
	free(longer);
	free(p);
	virtio_balloon_destroy(a);
	virtio_balloon_destroy(b);
	fake_mem_free(&fm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_hostile_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
