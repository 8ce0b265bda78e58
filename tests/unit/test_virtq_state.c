// SPDX-License-Identifier: Apache-2.0
/* A virtqueue's snapshot state (virtio/virtq_state.c): a restored queue
 * goes on where the saved one was (the next chain, the one in flight),
 * and a state that no driver and device could have made, or that does not
 * match the guest memory, is refused with the queue left fresh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_mem.h"
#include "virtio/virtq_state.h"

#define RAM	  (1u << 20)
#define QSZ	  16
#define DESC_GPA  0x1000
#define AVAIL_GPA 0x2000
#define USED_GPA  0x3000
#define BUF_GPA	  0x10000

static struct fake_mem fm;

static uint16_t *g16(uint64_t gpa)
{
	return fake_mem_at(&fm, gpa);
}

/* Chains of one descriptor each, heads 0..n-1, made available. */
static void guest_publish(uint16_t n)
{
	for (uint16_t i = 0; i < n; i++) {
		struct virtq_desc d = {.addr = BUF_GPA + 0x100u * i, .len = 64};
		memcpy(fake_mem_at(&fm, DESC_GPA + 16u * i), &d, sizeof(d));
		*g16(AVAIL_GPA + 4 + 2u * i) = i;
	}
	*g16(AVAIL_GPA + 2) = n;
}

static void busy_queue(struct virtq *vq)
{
	memset(fm.ram, 0, RAM);
	assert_int_equal(virtq_init(vq, "test q0", 256, NULL, NULL), 0);
	assert_int_equal(virtq_set_size(vq, QSZ), 0);
	assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_DESC, DESC_GPA), 0);
	assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_AVAIL, AVAIL_GPA), 0);
	assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_USED, USED_GPA), 0);
	assert_int_equal(virtq_set_features(vq, 1ull << VIRTQ_F_EVENT_IDX), 0);
	assert_int_equal(virtq_activate(vq, &fm.gm), 0);
	guest_publish(5);
	struct virtq_elem e;
	for (int i = 0; i < 3; i++)
		assert_int_equal(virtq_pop(vq, &fm.gm, &e), 1);
	assert_int_equal(virtq_push(vq, &fm.gm, 0, 10), 0); /* heads 1, 2 stay in flight */
}

static int fresh_restore(struct virtq *vq, const struct virtq_state *s, char *err, size_t n)
{
	assert_int_equal(virtq_init(vq, "test q0", 256, NULL, NULL), 0);
	return virtq_state_restore(vq, &fm.gm, s, err, n);
}

static void test_round_trip(void **state)
{
	(void)state;
	struct virtq a, b;
	busy_queue(&a);
	struct virtq_state s;
	virtq_state_save(&a, &s);
	char err[200];
	assert_int_equal(fresh_restore(&b, &s, err, sizeof(err)), 0);
	assert_true(b.enabled && b.event_idx && !b.indirect);
	assert_int_equal(b.last_avail_idx, 3);
	assert_int_equal(b.used_idx, 1);
	struct virtq_elem e;
	assert_int_equal(virtq_pop(&b, &fm.gm, &e), 1);
	assert_int_equal(e.head, 3);			    /* the next, not the first again */
	assert_int_equal(virtq_push(&b, &fm.gm, 2, 20), 0); /* in flight before */
	assert_int_equal(virtq_push(&b, &fm.gm, 1, 20), 0);
	assert_int_equal(*g16(USED_GPA + 2), 3);
	assert_false(b.broken);
}

static void expect_refused(const struct virtq_state *s, const char *words)
{
	struct virtq b;
	char err[200] = "";
	assert_int_equal(fresh_restore(&b, s, err, sizeof(err)), -1);
	if (!strstr(err, words))
		fail_msg("got '%s', want '%s'", err, words);
	assert_false(b.enabled || b.broken); /* left fresh */
	assert_int_equal(b.last_avail_idx, 0);
}

static void test_hostile_refused(void **state)
{
	(void)state;
	struct virtq a;
	busy_queue(&a);
	struct virtq_state s, bad;
	virtq_state_save(&a, &s);
	bad = s, bad.last_avail_idx = (uint16_t)(s.used_idx + QSZ + 1);
	expect_refused(&bad, "more chains in flight than its size");
	bad = s, bad.size = 12;
	expect_refused(&bad, "its size or a ring address is refused");
	bad = s, bad.used_gpa = RAM - 8;
	expect_refused(&bad, "its rings are not in guest memory");
	bad = s, bad.enabled = 2;
	expect_refused(&bad, "a flag is neither 0 nor 1");
	bad = s, bad.used_idx = 2, bad.last_avail_idx = 3;
	expect_refused(&bad, "its used index in guest memory is not the saved one");
	bad = s, bad.enabled = 0;
	expect_refused(&bad, "a queue never enabled has moved");
	bad = s, bad.broken_reason = 3;
	expect_refused(&bad, "its broken reason does not fit");
	/* A saved broken queue comes back broken, and pops nothing. */
	bad = s, bad.broken = 1, bad.broken_reason = VIRTQ_ERR_HEAD_RANGE;
	struct virtq b;
	char err[200];
	assert_int_equal(fresh_restore(&b, &bad, err, sizeof(err)), 0);
	struct virtq_elem e;
	assert_int_equal(virtq_pop(&b, &fm.gm, &e), -1);
}

/* Every byte of the state at several values: refused, or a queue whose
 * pops and pushes stay inside guest memory (ASan watches). */
static void test_every_byte(void **state)
{
	(void)state;
	struct virtq a;
	busy_queue(&a);
	struct virtq_state s;
	virtq_state_save(&a, &s);
	static const uint8_t vals[] = {0x00, 0x01, 0x02, 0x0f, 0x10, 0x80, 0xfe, 0xff};
	for (size_t i = 0; i < sizeof(s); i++)
		for (size_t v = 0; v < sizeof(vals); v++) {
			struct virtq_state t = s;
			((uint8_t *)&t)[i] = vals[v];
			struct virtq b;
			char err[200];
			if (fresh_restore(&b, &t, err, sizeof(err)) < 0)
				continue;
			struct virtq_elem e;
			for (int k = 0; k < 4 && virtq_pop(&b, &fm.gm, &e) == 1; k++)
				(void)virtq_push(&b, &fm.gm, e.head, 1);
		}
}

static int setup(void **state)
{
	(void)state;
	return fake_mem_init(&fm, RAM);
}

static int teardown(void **state)
{
	(void)state;
	fake_mem_free(&fm);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_hostile_refused),
	    cmocka_unit_test(test_every_byte),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
