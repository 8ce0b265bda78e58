// SPDX-License-Identifier: Apache-2.0
/* Hostile review of restore (review10), virtio-balloon's section: a state
 * the balloon took on main's code whose values hurt once the guest runs.
 * The proof fails before the fix named in its comment. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <linux/virtio_balloon.h>
#include <stdlib.h>
#include <string.h>

#include "core/snap.h"
#include "devices/virtio-balloon/virtio_balloon.h"
#include "devices/virtio-balloon/virtio_balloon_priv.h"
#include "fake_mem.h"

#define RAM_SIZE (8u << 20)
#define QSZ	 64
#define RING_GPA 0x10000
#define DATA_GPA 0x40000
#define BOOT	 "amount=2,stats=1,deflate-on-oom=on"
#define STATS_Q	 2  /* inflate, deflate, stats */
#define HELD_AT	 24 /* struct balloon_snap's stats_head */
#include "balloon_fx.h"

/* The driver's first stats buffer (head 5), made available and kicked. */
static void post_stats(struct virtio_dev *v, struct fake_mem *fm)
{
	struct virtio_balloon_stat st[1] = {{VIRTIO_BALLOON_S_MEMFREE, 1234}};
	memcpy(fake_mem_at(fm, DATA_GPA), st, sizeof(st));
	struct virtq_desc d = {.addr = DATA_GPA, .len = sizeof(st)};
	memcpy(fake_mem_at(fm, ring(STATS_Q, 0) + 16 * 5), &d, sizeof(d));
	uint16_t *avail = fake_mem_at(fm, ring(STATS_Q, 1));
	avail[2] = 5;
	__atomic_store_n(&avail[1], 1, __ATOMIC_RELEASE);
	v->ops->queue_notify(v, STATS_Q);
}

static uint16_t used_idx(struct fake_mem *fm)
{
	return __atomic_load_n((uint16_t *)fake_mem_at(fm, ring(STATS_Q, 2) + 2), __ATOMIC_ACQUIRE);
}

static uint32_t used_id(struct fake_mem *fm, unsigned int i)
{
	return ((struct virtq_used_elem *)fake_mem_at(fm, ring(STATS_Q, 2) + 4))[i].id;
}

/* A's section, its held head replaced by `held`. */
static size_t save(struct virtio_dev *v, int32_t held, uint8_t **out)
{
	size_t n = save_section(v, 0, out);
	memcpy(*out + HELD_AT, &held, sizeof(held));
	return n;
}

/* Finding 3 (low): the section's held stats buffer was taken whatever the
 * transport's state, and given back on the stats queue at the next
 * activate. A load whose transport was not at DRIVER_OK (the guest
 * mid-probe, or a hostile state) has no chain in flight there: the
 * driver's first stats buffer, popped, made room for the saved head to be
 * pushed, and the guest got back a head it never gave (Linux: "id 7 is
 * not a head!", the queue broken) while its own buffer stayed held. A
 * save never writes that (b->active ? stats_head : -1). Fixed: activate
 * keeps a restored head only while its stats queue holds exactly one
 * chain (balloon_stats_held). */
static void test_held_head_without_its_chain(void **state)
{
	(void)state;
	struct fake_mem fa, fb;
	struct virtio_dev *a, *b;
	pair_make(&fa, &fb, &a, &b);
	post_stats(a, &fa);
	uint8_t *p;
	size_t n = save(a, 7, &p);
	char err[200] = "";
	/* The balloon's own check cannot see the transport: taken. */
	assert_int_equal(virtio_balloon_restore(b, p, n, err, sizeof(err)), 0);
	/* The transport's queues as before DRIVER_OK: fresh. The driver
	 * then sets them up and posts its first stats buffer. */
	driver_ok(b, &fb);
	post_stats(b, &fb);
	/* Held, nothing given back: no head 7 the driver never gave. */
	assert_int_equal(used_idx(&fb), 0);
	/* The next tick gives back the driver's own. */
	virtio_balloon_stats_tick(b->priv, 0);
	assert_int_equal(used_idx(&fb), 1);
	assert_int_equal(used_id(&fb, 0), 5);
	free(p);
	pair_free(&fa, &fb, a, b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_held_head_without_its_chain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
