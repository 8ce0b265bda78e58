// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the split virtqueue (src/virtio/virtq.c): a fake guest RAM,
 * the test playing the guest driver, positive paths, and malformed rings
 * that must each end with the queue broken exactly once (or the request
 * refused) without touching memory outside guest RAM. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_mem.h"
#include "virtio/virtq.h"

#define RAM_SIZE  (1u << 20)
#define MAX_QSZ	  256
#define QSZ	  16
#define DESC_GPA  0x1000
#define AVAIL_GPA 0x2000
#define USED_GPA  0x3000
#define IND_GPA	  0x8000
#define BUF_GPA	  0x10000

#define F_INDIRECT (1ULL << VIRTQ_F_INDIRECT_DESC)
#define F_EVENT	   (1ULL << VIRTQ_F_EVENT_IDX)
#define R	   0 /* device-readable descriptor */
#define W	   VIRTQ_DESC_F_WRITE
#define N	   VIRTQ_DESC_F_NEXT
#define I	   VIRTQ_DESC_F_INDIRECT

struct fx {
	struct fake_mem fm;
	struct virtq vq;
	struct virtq_elem elem;
	int broken_calls;
	uint16_t avail_idx; /* the guest driver's avail index */
};

static void on_broken(struct virtq *vq, void *opaque)
{
	struct fx *f = opaque;
	assert_ptr_equal(vq, &f->vq);
	f->broken_calls++;
}

/* ---- the guest side ---- */

static uint16_t *g16(struct fx *f, uint64_t gpa)
{
	return fake_mem_at(&f->fm, gpa);
}

static void desc_set(struct fx *f, uint64_t table, uint16_t i, uint64_t addr, uint32_t len,
		     uint16_t flags, uint16_t next)
{
	struct virtq_desc d = {.addr = addr, .len = len, .flags = flags, .next = next};
	memcpy(fake_mem_at(&f->fm, table + 16 * (uint64_t)i), &d, sizeof(d));
}

static bool need_event(uint16_t ev, uint16_t new_idx, uint16_t old)
{
	return (uint16_t)(new_idx - ev - 1) < (uint16_t)(new_idx - old);
}

/* Makes head available; returns whether the guest would kick afterwards. */
static bool guest_publish(struct fx *f, uint16_t head)
{
	uint16_t size = f->vq.size, old = f->avail_idx;
	*g16(f, AVAIL_GPA + 4 + 2 * (uint64_t)(old & (size - 1))) = head;
	f->avail_idx++;
	*g16(f, AVAIL_GPA + 2) = f->avail_idx;
	if (f->vq.event_idx)
		return need_event(*g16(f, USED_GPA + 4 + 8 * (uint64_t)size), f->avail_idx, old);
	return !(*g16(f, USED_GPA) & VIRTQ_USED_F_NO_NOTIFY);
}

static uint16_t guest_used_idx(struct fx *f)
{
	return *g16(f, USED_GPA + 2);
}

static struct virtq_used_elem guest_used(struct fx *f, uint16_t slot)
{
	struct virtq_used_elem e;
	memcpy(&e, fake_mem_at(&f->fm, USED_GPA + 4 + 8 * (uint64_t)slot), sizeof(e));
	return e;
}

static void set_used_event(struct fx *f, uint16_t v)
{
	*g16(f, AVAIL_GPA + 4 + 2 * (uint64_t)f->vq.size) = v;
}

/* ---- fixture ---- */

static void config(struct fx *f, uint32_t qsz, uint64_t features)
{
	virtq_reset(&f->vq);
	memset(f->fm.ram, 0, 0x8000); /* rings; the driver zeroes them too */
	f->avail_idx = 0;
	assert_int_equal(virtq_set_size(&f->vq, qsz), 0);
	assert_int_equal(virtq_set_addr(&f->vq, VIRTQ_RING_DESC, DESC_GPA), 0);
	assert_int_equal(virtq_set_addr(&f->vq, VIRTQ_RING_AVAIL, AVAIL_GPA), 0);
	assert_int_equal(virtq_set_addr(&f->vq, VIRTQ_RING_USED, USED_GPA), 0);
	assert_int_equal(virtq_set_features(&f->vq, features), 0);
	assert_int_equal(virtq_activate(&f->vq, &f->fm.gm), 0);
}

static int fx_setup_ram(void **state, uint64_t ram, uint16_t max_qsz)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || fake_mem_init(&f->fm, ram) != 0)
		return -1;
	if (virtq_init(&f->vq, "test q0", max_qsz, on_broken, f) != 0)
		return -1;
	*state = f;
	return 0;
}

static int setup(void **state)
{
	if (fx_setup_ram(state, RAM_SIZE, MAX_QSZ))
		return -1;
	config(*state, QSZ, F_INDIRECT);
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	fake_mem_free(&f->fm);
	free(f);
	return 0;
}

static int pop(struct fx *f)
{
	return virtq_pop(&f->vq, &f->fm.gm, &f->elem);
}

/* The queue must break now, once, for `reason`, and stay broken. */
static void expect_broken(struct fx *f, enum virtq_err reason)
{
	uint16_t last = f->vq.last_avail_idx;
	assert_int_equal(pop(f), -1);
	assert_true(f->vq.broken);
	assert_int_equal(f->vq.broken_reason, reason);
	assert_int_equal(f->broken_calls, 1);
	assert_int_equal(f->vq.stats.err[reason], 1);
	assert_int_equal(pop(f), -1);
	assert_int_equal(f->broken_calls, 1);
	assert_int_equal(f->vq.stats.err[reason], 1);
	assert_int_equal(f->vq.last_avail_idx, last);
	assert_int_equal(guest_used_idx(f), 0);
}

/* ---- positive paths ---- */

static void test_empty_ring(void **state)
{
	struct fx *f = *state;
	assert_false(virtq_has_work(&f->vq, &f->fm.gm));
	assert_int_equal(pop(f), 0);
	assert_false(f->vq.broken);
}

static void test_not_enabled(void **state)
{
	struct fx *f = *state;
	virtq_reset(&f->vq);
	*g16(f, AVAIL_GPA + 2) = 1;
	assert_int_equal(pop(f), 0);
	assert_false(virtq_has_work(&f->vq, &f->fm.gm));
	assert_int_equal(virtq_push(&f->vq, &f->fm.gm, 0, 0), -1);
	assert_int_equal(f->broken_calls, 0);
}

static void test_simple_chain(void **state)
{
	struct fx *f = *state;
	desc_set(f, DESC_GPA, 3, BUF_GPA, 100, R, 0);
	guest_publish(f, 3);
	assert_true(virtq_has_work(&f->vq, &f->fm.gm));
	assert_int_equal(pop(f), 1);
	assert_int_equal(f->elem.head, 3);
	assert_int_equal(f->elem.out_num, 1);
	assert_int_equal(f->elem.in_num, 0);
	assert_int_equal(f->elem.out_len, 100);
	assert_ptr_equal(f->elem.iov[0].iov_base, f->fm.ram + BUF_GPA);
	assert_int_equal(f->elem.iov[0].iov_len, 100);
	assert_int_equal(pop(f), 0);
	assert_int_equal(f->vq.stats.popped, 1);
}

static void test_read_write_chain(void **state)
{
	struct fx *f = *state;
	desc_set(f, DESC_GPA, 0, BUF_GPA, 16, R | N, 5);
	desc_set(f, DESC_GPA, 5, BUF_GPA + 0x100, 512, R | N, 2);
	desc_set(f, DESC_GPA, 2, BUF_GPA + 0x1000, 4096, W | N, 7);
	desc_set(f, DESC_GPA, 7, BUF_GPA + 0x3000, 1, W, 0);
	guest_publish(f, 0);
	assert_int_equal(pop(f), 1);
	assert_int_equal(f->elem.out_num, 2);
	assert_int_equal(f->elem.in_num, 2);
	assert_int_equal(f->elem.out_len, 528);
	assert_int_equal(f->elem.in_len, 4097);
	assert_ptr_equal(f->elem.iov[1].iov_base, f->fm.ram + BUF_GPA + 0x100);
	assert_ptr_equal(f->elem.iov[2].iov_base, f->fm.ram + BUF_GPA + 0x1000);
	assert_ptr_equal(f->elem.iov[3].iov_base, f->fm.ram + BUF_GPA + 0x3000);
}

/* A chain as long as the queue is legal; so is a buffer ending at RAM's end. */
static void test_chain_of_queue_size(void **state)
{
	struct fx *f = *state;
	for (uint16_t i = 0; i < QSZ - 1; i++)
		desc_set(f, DESC_GPA, i, BUF_GPA, 8, R | N, i + 1);
	desc_set(f, DESC_GPA, QSZ - 1, RAM_SIZE - 64, 64, W, 0);
	guest_publish(f, 0);
	assert_int_equal(pop(f), 1);
	assert_int_equal(f->elem.out_num, QSZ - 1);
	assert_int_equal(f->elem.in_num, 1);
}

/* The whole ring available at once (avail exactly size ahead) is legal. */
static void test_full_ring(void **state)
{
	struct fx *f = *state;
	for (uint16_t i = 0; i < QSZ; i++) {
		desc_set(f, DESC_GPA, i, BUF_GPA + i, 1, W, 0);
		guest_publish(f, i);
	}
	for (uint16_t i = 0; i < QSZ; i++) {
		assert_int_equal(pop(f), 1);
		assert_int_equal(f->elem.head, i);
	}
	assert_int_equal(pop(f), 0);
}

static void test_indirect_table(void **state)
{
	struct fx *f = *state;
	desc_set(f, IND_GPA, 0, BUF_GPA, 32, R | N, 2);
	desc_set(f, IND_GPA, 2, BUF_GPA + 0x200, 64, W | N, 1);
	desc_set(f, IND_GPA, 1, BUF_GPA + 0x400, 128, W, 0);
	desc_set(f, DESC_GPA, 4, IND_GPA, 3 * 16, I | W, 0); /* WRITE here is ignored */
	guest_publish(f, 4);
	assert_int_equal(pop(f), 1);
	assert_int_equal(f->elem.head, 4);
	assert_int_equal(f->elem.out_num, 1);
	assert_int_equal(f->elem.in_num, 2);
	assert_int_equal(f->elem.out_len, 32);
	assert_int_equal(f->elem.in_len, 192);
	assert_ptr_equal(f->elem.iov[2].iov_base, f->fm.ram + BUF_GPA + 0x400);
}

/* Spec 2.7.5.3.2: direct descriptors followed by one indirect one. */
static void test_direct_then_indirect(void **state)
{
	struct fx *f = *state;
	desc_set(f, DESC_GPA, 0, BUF_GPA, 10, R | N, 1);
	desc_set(f, DESC_GPA, 1, IND_GPA, 16, I, 0);
	desc_set(f, IND_GPA, 0, BUF_GPA + 0x100, 20, W, 0);
	guest_publish(f, 0);
	assert_int_equal(pop(f), 1);
	assert_int_equal(f->elem.out_num, 1);
	assert_int_equal(f->elem.in_num, 1);
	assert_int_equal(f->elem.in_len, 20);
}

static void test_push_used_idx(void **state)
{
	struct fx *f = *state;
	desc_set(f, DESC_GPA, 1, BUF_GPA, 8, W, 0);
	desc_set(f, DESC_GPA, 9, BUF_GPA + 8, 8, W, 0);
	guest_publish(f, 1);
	guest_publish(f, 9);
	assert_int_equal(pop(f), 1);
	assert_int_equal(pop(f), 1);
	/* The guest scribbles on used->idx: the device keeps its own count. */
	*g16(f, USED_GPA + 2) = 1234;
	assert_int_equal(virtq_push(&f->vq, &f->fm.gm, 9, 5), 0); /* out of order */
	assert_int_equal(guest_used_idx(f), 1);
	assert_int_equal(virtq_push(&f->vq, &f->fm.gm, 1, 8), 0);
	assert_int_equal(guest_used_idx(f), 2);
	assert_int_equal(guest_used(f, 0).id, 9);
	assert_int_equal(guest_used(f, 0).len, 5);
	assert_int_equal(guest_used(f, 1).id, 1);
	assert_int_equal(guest_used(f, 1).len, 8);
	assert_int_equal(f->vq.stats.pushed, 2);
}

static void test_push_batch(void **state)
{
	struct fx *f = *state;
	struct virtq_used_elem e[3] = {{2, 20}, {0, 0}, {1, 10}};
	for (uint16_t i = 0; i < 3; i++) {
		desc_set(f, DESC_GPA, i, BUF_GPA, 32, W, 0);
		guest_publish(f, i);
		assert_int_equal(pop(f), 1);
	}
	assert_int_equal(virtq_push_batch(&f->vq, &f->fm.gm, e, 3), 0);
	assert_int_equal(guest_used_idx(f), 3);
	assert_int_equal(guest_used(f, 2).id, 1);
	assert_int_equal(guest_used(f, 2).len, 10);
}

/* Device bugs are refused without breaking the queue or writing anything. */
static void test_push_refused(void **state)
{
	struct fx *f = *state;
	assert_int_equal(virtq_push(&f->vq, &f->fm.gm, 0, 0), -1); /* nothing in flight */
	desc_set(f, DESC_GPA, 0, BUF_GPA, 32, W, 0);
	guest_publish(f, 0);
	assert_int_equal(pop(f), 1);
	assert_int_equal(virtq_push(&f->vq, &f->fm.gm, QSZ, 0), -1); /* head out of range */
	assert_int_equal(guest_used_idx(f), 0);
	assert_int_equal(f->vq.stats.err[VIRTQ_ERR_BAD_PUSH], 2);
	assert_false(f->vq.broken);
	assert_int_equal(virtq_push(&f->vq, &f->fm.gm, 0, 0), 0);
	assert_int_equal(guest_used_idx(f), 1);
}

/* Issue 35.4: a guest that makes the device refuse requests over and over
 * gets the queue's rate limit (core/log.h), not a line each: a burst of
 * LOG_RL_BURST, and the next line let through counts the rest. */
static void test_refusals_ratelimited(void **state)
{
	struct fx *f = *state;
	FILE *log = tmpfile();
	assert_non_null(log);
	log_set_fd(fileno(log));
	for (int i = 0; i < 100; i++)
		assert_int_equal(virtq_push(&f->vq, &f->fm.gm, 0, 0), -1);
	atomic_store(&f->vq.log_rl.tat, 0); /* time passes: the bucket is full */
	assert_int_equal(virtq_push(&f->vq, &f->fm.gm, 0, 0), -1);
	log_set_fd(STDERR_FILENO);
	char line[256];
	int n = 0;
	rewind(log);
	while (fgets(line, sizeof(line), log)) {
		assert_non_null(strstr(line, "skiff: test q0: "));
		assert_non_null(strstr(line, "; request ignored"));
		n++;
	}
	assert_int_equal(n, LOG_RL_BURST + 1);
	assert_non_null(strstr(line, "request ignored (90 messages suppressed)\n"));
	fclose(log);
}

static void test_unpop(void **state)
{
	struct fx *f = *state;
	assert_int_equal(virtq_unpop(&f->vq), -1);
	desc_set(f, DESC_GPA, 6, BUF_GPA, 32, W, 0);
	guest_publish(f, 6);
	assert_int_equal(pop(f), 1);
	assert_int_equal(virtq_unpop(&f->vq), 0);
	assert_int_equal(pop(f), 1);
	assert_int_equal(f->elem.head, 6);
	assert_int_equal(pop(f), 0);
}

/* After vhost: the queue goes on at vhost's next avail index and at the
 * used index in the guest's ring, wrapped or not; a used index that
 * leaves more than size chains in flight breaks it. */
static void test_resume_at(void **state)
{
	struct fx *f = *state;
	for (uint16_t i = 0; i < 3; i++) {
		desc_set(f, DESC_GPA, i, BUF_GPA, 4, W, 0);
		guest_publish(f, i);
	}
	*g16(f, USED_GPA + 2) = 2; /* vhost used two, took a third */
	assert_int_equal(virtq_resume_at(&f->vq, 3), 0);
	assert_int_equal(f->vq.used_idx, 2);
	assert_int_equal(pop(f), 0); /* nothing left to take */
	assert_int_equal(virtq_push(&f->vq, &f->fm.gm, 2, 4), 0);
	assert_int_equal(guest_used_idx(f), 3);
	*g16(f, USED_GPA + 2) = 0xfffe; /* wrapped: 2 + QSZ - 1 ahead is fine */
	assert_int_equal(virtq_resume_at(&f->vq, (uint16_t)(0xfffe + QSZ)), 0);
	assert_false(f->vq.broken);
	*g16(f, USED_GPA + 2) = 0xfffe;
	assert_int_equal(virtq_resume_at(&f->vq, (uint16_t)(0xfffe + QSZ + 1)), -1);
	assert_true(f->vq.broken);
	assert_int_equal(f->vq.broken_reason, VIRTQ_ERR_INFLIGHT);
	assert_int_equal(f->broken_calls, 1);
}

/* 16-bit indices wrap: 70000 round trips through a 16-entry ring. */
static void test_index_wrap(void **state)
{
	struct fx *f = *state;
	for (uint32_t i = 0; i < 70000; i++) {
		uint16_t head = i % QSZ;
		desc_set(f, DESC_GPA, head, BUF_GPA, 4, W, 0);
		guest_publish(f, head);
		assert_int_equal(pop(f), 1);
		assert_int_equal(f->elem.head, head);
		assert_int_equal(virtq_push(&f->vq, &f->fm.gm, head, 4), 0);
	}
	assert_int_equal(guest_used_idx(f), (uint16_t)70000);
	assert_int_equal(pop(f), 0);
	assert_false(f->vq.broken);
}

static void pop_push_one(struct fx *f, uint16_t head)
{
	desc_set(f, DESC_GPA, head, BUF_GPA, 4, W, 0);
	guest_publish(f, head);
	assert_int_equal(pop(f), 1);
	assert_int_equal(virtq_push(&f->vq, &f->fm.gm, head, 4), 0);
}

static void test_should_notify_flags(void **state)
{
	struct fx *f = *state;
	pop_push_one(f, 0);
	assert_true(virtq_should_notify(&f->vq, &f->fm.gm));
	*g16(f, AVAIL_GPA) = VIRTQ_AVAIL_F_NO_INTERRUPT;
	pop_push_one(f, 1);
	assert_false(virtq_should_notify(&f->vq, &f->fm.gm));
	assert_int_equal(f->vq.stats.notified, 1);
	assert_int_equal(f->vq.stats.suppressed, 1);
}

static void test_should_notify_event_idx(void **state)
{
	struct fx *f = *state;
	config(f, QSZ, F_EVENT);
	set_used_event(f, 0); /* interrupt once used idx passes 0 */
	pop_push_one(f, 0);   /* used idx 0 -> 1 */
	assert_true(virtq_should_notify(&f->vq, &f->fm.gm));
	pop_push_one(f, 1); /* 1 -> 2: used_event 0 already passed */
	assert_false(virtq_should_notify(&f->vq, &f->fm.gm));
	set_used_event(f, 2);
	pop_push_one(f, 2); /* 2 -> 3 crosses 2 */
	assert_true(virtq_should_notify(&f->vq, &f->fm.gm));
	set_used_event(f, 10);
	pop_push_one(f, 3);
	pop_push_one(f, 4); /* 3 -> 5: not yet at 10 */
	assert_false(virtq_should_notify(&f->vq, &f->fm.gm));
	set_used_event(f, 5);
	pop_push_one(f, 5);
	pop_push_one(f, 6); /* 5 -> 7 crosses 5 between two decisions */
	assert_true(virtq_should_notify(&f->vq, &f->fm.gm));
}

/* The poller stops, the guest adds a buffer while kicks are suppressed (so
 * it does not kick), then the poller re-enables: it must see the work. */
static void test_notify_race_flags(void **state)
{
	struct fx *f = *state;
	desc_set(f, DESC_GPA, 0, BUF_GPA, 4, W, 0);
	assert_int_equal(pop(f), 0);
	virtq_disable_notify(&f->vq, &f->fm.gm);
	assert_true(*g16(f, USED_GPA) & VIRTQ_USED_F_NO_NOTIFY);
	assert_false(guest_publish(f, 0)); /* no kick */
	assert_true(virtq_enable_notify(&f->vq, &f->fm.gm));
	assert_false(*g16(f, USED_GPA) & VIRTQ_USED_F_NO_NOTIFY);
	assert_int_equal(pop(f), 1);
	assert_false(virtq_enable_notify(&f->vq, &f->fm.gm)); /* nothing new */
	assert_true(guest_publish(f, 0));		      /* kicks again */
}

static void test_notify_race_event_idx(void **state)
{
	struct fx *f = *state;
	config(f, QSZ, F_EVENT);
	for (uint16_t i = 0; i < 4; i++)
		desc_set(f, DESC_GPA, i, BUF_GPA, 4, W, 0);
	assert_true(guest_publish(f, 0)); /* avail_event 0: first buffer kicks */
	virtq_disable_notify(&f->vq, &f->fm.gm);
	assert_int_equal(pop(f), 1);
	assert_false(guest_publish(f, 1)); /* suppressed while polling */
	assert_int_equal(pop(f), 1);
	assert_int_equal(pop(f), 0);			      /* poller decides to stop... */
	assert_false(guest_publish(f, 2));		      /* ...guest adds, no kick... */
	assert_true(virtq_enable_notify(&f->vq, &f->fm.gm));  /* ...poller sees it */
	assert_int_equal(*g16(f, USED_GPA + 4 + 8 * QSZ), 2); /* avail_event */
	assert_int_equal(pop(f), 1);
	assert_false(virtq_enable_notify(&f->vq, &f->fm.gm));
	assert_true(guest_publish(f, 3)); /* re-armed: the guest kicks */
}

/* A poller holds kicks off; the device's own enable_notify (at the end of
 * its run) must not turn them back on, but must still report new work. */
static void test_poll_hold(void **state)
{
	struct fx *f = *state;
	for (uint16_t i = 0; i < 4; i++)
		desc_set(f, DESC_GPA, i, BUF_GPA, 4, W, 0);
	assert_false(virtq_poll_hold(&f->vq, &f->fm.gm, true));
	assert_false(guest_publish(f, 0)); /* held: no kick */
	assert_int_equal(pop(f), 1);
	assert_false(virtq_enable_notify(&f->vq, &f->fm.gm)); /* device's re-arm */
	assert_false(guest_publish(f, 1));		      /* still no kick */
	assert_true(virtq_enable_notify(&f->vq, &f->fm.gm));  /* but work is seen */
	assert_int_equal(pop(f), 1);
	assert_false(guest_publish(f, 2));			/* the poller stops just now... */
	assert_true(virtq_poll_hold(&f->vq, &f->fm.gm, false)); /* ...and sees it */
	assert_int_equal(pop(f), 1);
	assert_true(guest_publish(f, 3)); /* released: the guest kicks again */
}

/* With EVENT_IDX and kicks wanted, running dry re-arms avail_event. */
static void test_pop_empty_arms_event(void **state)
{
	struct fx *f = *state;
	config(f, QSZ, F_EVENT);
	desc_set(f, DESC_GPA, 0, BUF_GPA, 4, W, 0);
	desc_set(f, DESC_GPA, 1, BUF_GPA, 4, W, 0);
	assert_true(guest_publish(f, 0));
	assert_int_equal(pop(f), 1);
	assert_int_equal(pop(f), 0);
	assert_int_equal(*g16(f, USED_GPA + 4 + 8 * QSZ), 1);
	assert_true(guest_publish(f, 1));
}

static void test_reset_recovers(void **state)
{
	struct fx *f = *state;
	guest_publish(f, QSZ);
	expect_broken(f, VIRTQ_ERR_HEAD_RANGE);
	config(f, QSZ, 0);
	assert_false(f->vq.broken);
	desc_set(f, DESC_GPA, 0, BUF_GPA, 4, W, 0);
	guest_publish(f, 0);
	assert_int_equal(pop(f), 1);
	assert_int_equal(f->vq.stats.err[VIRTQ_ERR_HEAD_RANGE], 1); /* stats kept */
}

/* ---- malformed rings: each breaks the queue ---- */

static void test_loop_self(void **state)
{
	struct fx *f = *state;
	desc_set(f, DESC_GPA, 2, BUF_GPA, 4, R | N, 2);
	guest_publish(f, 2);
	expect_broken(f, VIRTQ_ERR_CHAIN_LOOP);
}

static void test_loop_two_cycle(void **state)
{
	struct fx *f = *state;
	desc_set(f, DESC_GPA, 0, BUF_GPA, 4, R | N, 1);
	desc_set(f, DESC_GPA, 1, BUF_GPA, 4, R | N, 0);
	guest_publish(f, 0);
	expect_broken(f, VIRTQ_ERR_CHAIN_LOOP);
}

static void test_chain_longer_than_queue(void **state)
{
	struct fx *f = *state;
	for (uint16_t i = 0; i < QSZ; i++)
		desc_set(f, DESC_GPA, i, BUF_GPA, 4, W | N, (i + 1) % QSZ);
	guest_publish(f, 0);
	expect_broken(f, VIRTQ_ERR_CHAIN_LOOP);
}

static void test_head_out_of_range(void **state)
{
	struct fx *f = *state;
	guest_publish(f, QSZ);
	expect_broken(f, VIRTQ_ERR_HEAD_RANGE);
}

static void test_next_out_of_range(void **state)
{
	struct fx *f = *state;
	desc_set(f, DESC_GPA, 0, BUF_GPA, 4, R | N, QSZ);
	guest_publish(f, 0);
	expect_broken(f, VIRTQ_ERR_NEXT_RANGE);
}

static void test_buf_past_ram(void **state)
{
	struct fx *f = *state;
	desc_set(f, DESC_GPA, 0, RAM_SIZE, 1, R, 0);
	guest_publish(f, 0);
	expect_broken(f, VIRTQ_ERR_BUF_RANGE);
}

static void test_buf_straddles_ram_end(void **state)
{
	struct fx *f = *state;
	desc_set(f, DESC_GPA, 0, BUF_GPA, 4, R | N, 1);
	desc_set(f, DESC_GPA, 1, RAM_SIZE - 8, 16, W, 0);
	guest_publish(f, 0);
	expect_broken(f, VIRTQ_ERR_BUF_RANGE);
}

static void test_buf_addr_overflow(void **state)
{
	struct fx *f = *state;
	desc_set(f, DESC_GPA, 0, UINT64_MAX - 0xF, 0x20, R, 0);
	guest_publish(f, 0);
	expect_broken(f, VIRTQ_ERR_BUF_RANGE);
}

static void test_buf_in_pci_hole(void **state)
{
	struct fx *f = *state;
	desc_set(f, DESC_GPA, 0, GUEST_MEM_LOW_MAX, 4, R, 0);
	guest_publish(f, 0);
	expect_broken(f, VIRTQ_ERR_BUF_RANGE);
}

/* In-RAM buffers whose lengths sum past 4 GiB: 65 descriptors of 64 MiB,
 * all over the same (never touched, MAP_NORESERVE) fake RAM. */
static void test_total_len_overflow(void **state)
{
	(void)state;
	enum { NDESC = 65, LEN = 64u << 20 };
	void *s;
	assert_int_equal(fx_setup_ram(&s, LEN, MAX_QSZ), 0);
	struct fx *f = s;
	config(f, 128, 0);
	for (uint16_t i = 0; i < NDESC; i++)
		desc_set(f, DESC_GPA, i, 0, LEN, i + 1 < NDESC ? R | N : R, (uint16_t)(i + 1));
	guest_publish(f, 0);
	expect_broken(f, VIRTQ_ERR_TOTAL_LEN);
	teardown(&s);
}

static void test_indirect_outside_ram(void **state)
{
	struct fx *f = *state;
	desc_set(f, DESC_GPA, 0, RAM_SIZE - 16, 32, I, 0);
	guest_publish(f, 0);
	expect_broken(f, VIRTQ_ERR_INDIRECT_RANGE);
}

static void test_indirect_len_not_multiple(void **state)
{
	struct fx *f = *state;
	desc_set(f, DESC_GPA, 0, IND_GPA, 24, I, 0);
	guest_publish(f, 0);
	expect_broken(f, VIRTQ_ERR_INDIRECT_LEN);
}

static void test_indirect_len_zero(void **state)
{
	struct fx *f = *state;
	desc_set(f, DESC_GPA, 0, IND_GPA, 0, I, 0);
	guest_publish(f, 0);
	expect_broken(f, VIRTQ_ERR_INDIRECT_LEN);
}

static void test_indirect_nested(void **state)
{
	struct fx *f = *state;
	desc_set(f, IND_GPA, 0, BUF_GPA, 4, R | N, 1);
	desc_set(f, IND_GPA, 1, IND_GPA + 0x100, 16, I, 0);
	desc_set(f, DESC_GPA, 0, IND_GPA, 32, I, 0);
	guest_publish(f, 0);
	expect_broken(f, VIRTQ_ERR_INDIRECT_NESTED);
}

static void test_indirect_with_next(void **state)
{
	struct fx *f = *state;
	desc_set(f, IND_GPA, 0, BUF_GPA, 4, R, 0);
	desc_set(f, DESC_GPA, 0, IND_GPA, 16, I | N, 1);
	desc_set(f, DESC_GPA, 1, BUF_GPA, 4, W, 0);
	guest_publish(f, 0);
	expect_broken(f, VIRTQ_ERR_INDIRECT_NEXT);
}

static void test_indirect_too_large(void **state)
{
	struct fx *f = *state;
	desc_set(f, DESC_GPA, 0, IND_GPA, (VIRTQ_MAX_SEGS + 1) * 16, I, 0);
	guest_publish(f, 0);
	expect_broken(f, VIRTQ_ERR_INDIRECT_SIZE);
}

static void test_indirect_loop(void **state)
{
	struct fx *f = *state;
	desc_set(f, IND_GPA, 0, BUF_GPA, 4, R | N, 1);
	desc_set(f, IND_GPA, 1, BUF_GPA, 4, R | N, 0);
	desc_set(f, DESC_GPA, 0, IND_GPA, 4 * 16, I, 0);
	guest_publish(f, 0);
	expect_broken(f, VIRTQ_ERR_INDIRECT_LOOP);
}

static void test_indirect_next_out_of_table(void **state)
{
	struct fx *f = *state;
	desc_set(f, IND_GPA, 0, BUF_GPA, 4, R | N, 2); /* table has 2 entries */
	desc_set(f, DESC_GPA, 0, IND_GPA, 2 * 16, I, 0);
	guest_publish(f, 0);
	expect_broken(f, VIRTQ_ERR_NEXT_RANGE);
}

static void test_indirect_not_negotiated(void **state)
{
	struct fx *f = *state;
	config(f, QSZ, 0);
	desc_set(f, IND_GPA, 0, BUF_GPA, 4, R, 0);
	desc_set(f, DESC_GPA, 0, IND_GPA, 16, I, 0);
	guest_publish(f, 0);
	expect_broken(f, VIRTQ_ERR_INDIRECT_FEATURE);
}

static void test_write_before_read(void **state)
{
	struct fx *f = *state;
	desc_set(f, DESC_GPA, 0, BUF_GPA, 4, W | N, 1);
	desc_set(f, DESC_GPA, 1, BUF_GPA, 4, R, 0);
	guest_publish(f, 0);
	expect_broken(f, VIRTQ_ERR_WRITE_ORDER);
}

static void test_write_before_read_indirect(void **state)
{
	struct fx *f = *state;
	desc_set(f, DESC_GPA, 0, BUF_GPA, 4, W | N, 1);
	desc_set(f, DESC_GPA, 1, IND_GPA, 16, I, 0);
	desc_set(f, IND_GPA, 0, BUF_GPA, 4, R, 0);
	guest_publish(f, 0);
	expect_broken(f, VIRTQ_ERR_WRITE_ORDER);
}

static void test_avail_too_far_ahead(void **state)
{
	struct fx *f = *state;
	*g16(f, AVAIL_GPA + 2) = QSZ + 1;
	expect_broken(f, VIRTQ_ERR_AVAIL_AHEAD);
}

static void test_avail_behind(void **state)
{
	struct fx *f = *state;
	*g16(f, AVAIL_GPA + 2) = (uint16_t)-1; /* "65535 ahead" = went backwards */
	expect_broken(f, VIRTQ_ERR_AVAIL_AHEAD);
}

/* The guest republishes heads the device still holds: more in flight than
 * the ring can hold must stop, or devices could be made to hoard requests. */
static void test_too_many_in_flight(void **state)
{
	struct fx *f = *state;
	desc_set(f, DESC_GPA, 0, BUF_GPA, 4, W, 0);
	for (int i = 0; i < QSZ; i++) {
		guest_publish(f, 0);
		assert_int_equal(pop(f), 1);
	}
	guest_publish(f, 0);
	assert_int_equal(pop(f), -1);
	assert_int_equal(f->vq.broken_reason, VIRTQ_ERR_INFLIGHT);
	assert_int_equal(f->broken_calls, 1);
}

static void test_too_many_segments(void **state)
{
	struct fx *f = *state;
	uint16_t n = 2048;
	teardown(state);
	assert_int_equal(fx_setup_ram(state, RAM_SIZE, n), 0);
	f = *state;
	/* desc table 32 KiB at DESC_GPA would overlap the rings: move them. */
	assert_int_equal(virtq_set_size(&f->vq, n), 0);
	assert_int_equal(virtq_set_addr(&f->vq, VIRTQ_RING_DESC, 0x40000), 0);
	assert_int_equal(virtq_set_addr(&f->vq, VIRTQ_RING_AVAIL, AVAIL_GPA), 0);
	assert_int_equal(virtq_set_addr(&f->vq, VIRTQ_RING_USED, 0x20000), 0);
	assert_int_equal(virtq_activate(&f->vq, &f->fm.gm), 0);
	for (uint16_t i = 0; i < VIRTQ_MAX_SEGS + 1; i++)
		desc_set(f, 0x40000, i, BUF_GPA, 4, R | N, i + 1);
	*g16(f, AVAIL_GPA + 2) = 1; /* ring[0] = head 0 */
	assert_int_equal(pop(f), -1);
	assert_int_equal(f->vq.broken_reason, VIRTQ_ERR_TOO_MANY_SEGS);
	assert_int_equal(f->broken_calls, 1);
}

static void test_device_marks_broken(void **state)
{
	struct fx *f = *state;
	assert_int_equal(virtq_mark_broken(&f->vq, VIRTQ_ERR_DEVICE), -1);
	expect_broken(f, VIRTQ_ERR_DEVICE);
}

/* ---- configuration ---- */

static void test_set_size_after_activation(void **state)
{
	struct fx *f = *state;
	assert_int_equal(virtq_set_size(&f->vq, 256), -1);
	assert_int_equal(f->vq.size, QSZ);
	assert_int_equal(f->vq.stats.err[VIRTQ_ERR_FROZEN], 1);
	/* The queue still works with its frozen size. */
	guest_publish(f, QSZ + 1);
	expect_broken(f, VIRTQ_ERR_HEAD_RANGE);
}

static void test_set_addr_after_activation(void **state)
{
	struct fx *f = *state;
	assert_int_equal(virtq_set_addr(&f->vq, VIRTQ_RING_DESC, 0x7FFF0000ULL), -1);
	assert_int_equal(virtq_set_addr(&f->vq, VIRTQ_RING_AVAIL, 0x4000), -1);
	assert_int_equal(virtq_set_addr(&f->vq, VIRTQ_RING_USED, 0x5000), -1);
	assert_int_equal(virtq_set_features(&f->vq, F_EVENT), -1);
	assert_int_equal(f->vq.stats.err[VIRTQ_ERR_FROZEN], 4);
	assert_int_equal(f->vq.desc_gpa, DESC_GPA);
	assert_false(f->vq.event_idx);
	desc_set(f, DESC_GPA, 0, BUF_GPA, 4, W, 0);
	guest_publish(f, 0);
	assert_int_equal(pop(f), 1);
	assert_int_equal(f->broken_calls, 0);
}

static void test_bad_queue_sizes(void **state)
{
	struct fx *f = *state;
	const uint32_t bad[] = {0, 3, 100, MAX_QSZ * 2, 65535, 65536, UINT32_MAX};
	virtq_reset(&f->vq);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(virtq_set_size(&f->vq, bad[i]), -1);
	assert_int_equal(f->vq.size, MAX_QSZ);
	assert_int_equal(f->vq.stats.err[VIRTQ_ERR_BAD_SIZE], 7);
	assert_int_equal(virtq_set_size(&f->vq, 1), 0);
	assert_int_equal(f->broken_calls, 0);
	struct virtq vq;
	assert_int_equal(virtq_init(&vq, "x", 0, NULL, NULL), -1);
	assert_int_equal(virtq_init(&vq, "x", 48, NULL, NULL), -1);
}

static void expect_activate_fails(struct fx *f, uint64_t desc, uint64_t avail, uint64_t used,
				  enum virtq_err reason)
{
	virtq_reset(&f->vq);
	f->broken_calls = 0;
	f->vq.stats.err[reason] = 0;
	assert_int_equal(virtq_set_size(&f->vq, MAX_QSZ), 0);
	virtq_set_addr(&f->vq, VIRTQ_RING_DESC, desc);
	virtq_set_addr(&f->vq, VIRTQ_RING_AVAIL, avail);
	virtq_set_addr(&f->vq, VIRTQ_RING_USED, used);
	assert_int_equal(virtq_activate(&f->vq, &f->fm.gm), -1);
	assert_false(f->vq.enabled);
	assert_int_equal(f->vq.broken_reason, reason);
	assert_int_equal(f->broken_calls, 1);
	assert_int_equal(f->vq.stats.err[reason], 1);
	assert_int_equal(pop(f), -1);
	assert_int_equal(virtq_activate(&f->vq, &f->fm.gm), -1);
	assert_int_equal(f->broken_calls, 1);
}

static void test_rings_outside_ram(void **state)
{
	struct fx *f = *state;
	/* 256 entries: desc 4096 B, avail 518 B, used 2054 B. */
	expect_activate_fails(f, RAM_SIZE - 4080, AVAIL_GPA, USED_GPA, VIRTQ_ERR_RING_RANGE);
	expect_activate_fails(f, DESC_GPA, RAM_SIZE - 516, USED_GPA, VIRTQ_ERR_RING_RANGE);
	expect_activate_fails(f, DESC_GPA, AVAIL_GPA, RAM_SIZE - 2052, VIRTQ_ERR_RING_RANGE);
	expect_activate_fails(f, DESC_GPA, AVAIL_GPA, UINT64_MAX - 3, VIRTQ_ERR_RING_RANGE);
	expect_activate_fails(f, GUEST_MEM_HIGH_BASE, AVAIL_GPA, USED_GPA, VIRTQ_ERR_RING_RANGE);
}

static void test_rings_misaligned(void **state)
{
	struct fx *f = *state;
	expect_activate_fails(f, DESC_GPA + 8, AVAIL_GPA, USED_GPA, VIRTQ_ERR_RING_ALIGN);
	expect_activate_fails(f, DESC_GPA, AVAIL_GPA + 1, USED_GPA, VIRTQ_ERR_RING_ALIGN);
	expect_activate_fails(f, DESC_GPA, AVAIL_GPA, USED_GPA + 2, VIRTQ_ERR_RING_ALIGN);
}

/* Once broken, no entry point reads or writes guest memory: the whole of
 * guest RAM is made inaccessible, so any access would fault. */
static void test_broken_touches_nothing(void **state)
{
	struct fx *f = *state;
	struct virtq_used_elem e = {0, 0};
	desc_set(f, DESC_GPA, 0, BUF_GPA, 4, W, 0);
	guest_publish(f, 0);
	assert_int_equal(pop(f), 1);
	guest_publish(f, QSZ);
	assert_int_equal(pop(f), -1);
	fake_mem_protect(&f->fm, false);
	assert_int_equal(pop(f), -1);
	assert_false(virtq_has_work(&f->vq, &f->fm.gm));
	assert_false(virtq_enable_notify(&f->vq, &f->fm.gm));
	virtq_disable_notify(&f->vq, &f->fm.gm);
	assert_int_equal(virtq_push(&f->vq, &f->fm.gm, 0, 4), -1);
	assert_int_equal(virtq_push_batch(&f->vq, &f->fm.gm, &e, 1), -1);
	assert_false(virtq_should_notify(&f->vq, &f->fm.gm));
	assert_int_equal(virtq_unpop(&f->vq), -1);
	assert_int_equal(virtq_activate(&f->vq, &f->fm.gm), -1);
	fake_mem_protect(&f->fm, true);
	assert_int_equal(f->broken_calls, 1);
	assert_int_equal(guest_used_idx(f), 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_empty_ring),
	    T(test_refusals_ratelimited),
	    T(test_not_enabled),
	    T(test_simple_chain),
	    T(test_read_write_chain),
	    T(test_chain_of_queue_size),
	    T(test_full_ring),
	    T(test_indirect_table),
	    T(test_direct_then_indirect),
	    T(test_push_used_idx),
	    T(test_resume_at),
	    T(test_push_batch),
	    T(test_push_refused),
	    T(test_unpop),
	    T(test_index_wrap),
	    T(test_should_notify_flags),
	    T(test_should_notify_event_idx),
	    T(test_notify_race_flags),
	    T(test_poll_hold),
	    T(test_notify_race_event_idx),
	    T(test_pop_empty_arms_event),
	    T(test_reset_recovers),
	    T(test_loop_self),
	    T(test_loop_two_cycle),
	    T(test_chain_longer_than_queue),
	    T(test_head_out_of_range),
	    T(test_next_out_of_range),
	    T(test_buf_past_ram),
	    T(test_buf_straddles_ram_end),
	    T(test_buf_addr_overflow),
	    T(test_buf_in_pci_hole),
	    T(test_total_len_overflow),
	    T(test_indirect_outside_ram),
	    T(test_indirect_len_not_multiple),
	    T(test_indirect_len_zero),
	    T(test_indirect_nested),
	    T(test_indirect_with_next),
	    T(test_indirect_too_large),
	    T(test_indirect_loop),
	    T(test_indirect_next_out_of_table),
	    T(test_indirect_not_negotiated),
	    T(test_write_before_read),
	    T(test_write_before_read_indirect),
	    T(test_avail_too_far_ahead),
	    T(test_avail_behind),
	    T(test_too_many_in_flight),
	    T(test_too_many_segments),
	    T(test_device_marks_broken),
	    T(test_set_size_after_activation),
	    T(test_set_addr_after_activation),
	    T(test_bad_queue_sizes),
	    T(test_rings_outside_ram),
	    T(test_rings_misaligned),
	    T(test_broken_touches_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
