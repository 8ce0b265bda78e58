// SPDX-License-Identifier: Apache-2.0
/* Review of virtio-rng (src/devices/virtio-rng/virtio_rng.c) as a hostile guest would
 * attack it. Each test is a finding's proof: it failed before the fix
 * named in its comment. The fixture is test_virtio_rng.c's, cut down: a
 * fake guest RAM, a real virtqueue and a transport that counts. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>

#include "devices/virtio-rng/virtio_rng.h"
#include "devices/virtio-rng/virtio_rng_priv.h"
#include "fake_mem.h"
#include "virtio/virtio_dev.h"

#define RAM_SIZE  (1u << 20)
#define QSZ	  256
#define DESC_GPA  0x1000
#define AVAIL_GPA 0x2000
#define USED_GPA  0x3000
#define DATA_GPA  0x10000

struct fx {
	struct fake_mem fm;
	struct virtio_dev *vdev;
	uint16_t avail_idx;
	int refills; /* chains the "other vCPU" may still post */
};

static struct fx *cur;

static void notify_queue(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev, (void)q;
}

static void notify_config(struct virtio_dev *vdev)
{
	(void)vdev;
}

/* --no-ioeventfd: the transport has no kick eventfd to come back by. */
static int resched_none(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev, (void)q;
	return -1;
}

static const struct virtio_transport_ops transport = {
    .notify_queue = notify_queue,
    .notify_config = notify_config,
    .queue_resched = resched_none,
};

/* The guest makes head 0 (one writable byte) available once more: no
 * kick, no exit, only two stores a vCPU of its own can repeat forever. */
static void guest_post(struct fx *f)
{
	uint16_t *ring = fake_mem_at(&f->fm, AVAIL_GPA);
	ring[2 + (f->avail_idx % QSZ)] = 0;
	__atomic_store_n(&ring[1], ++f->avail_idx, __ATOMIC_RELEASE);
}

/* getrandom's stand-in: while the device serves one chain, the guest's
 * other vCPU posts the next. */
static ssize_t refilling_source(void *buf, size_t len, unsigned int flags)
{
	(void)flags;
	memset(buf, 0x5a, len);
	if (cur->refills > 0) {
		cur->refills--;
		guest_post(cur);
	}
	return (ssize_t)len;
}

static uint16_t used_idx(struct fx *f)
{
	return __atomic_load_n((uint16_t *)fake_mem_at(&f->fm, USED_GPA + 2), __ATOMIC_ACQUIRE);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || fake_mem_init(&f->fm, RAM_SIZE))
		return -1;
	/* A bandwidth limiter large enough never to throttle: it is on, so
	 * its timer is the one that calls the device back on the I/O thread. */
	struct rng_spec s = {.rl.b[RL_BYTES] = {1ull << 40, 0, 1000}};
	char err[200] = "";
	f->vdev = virtio_rng_create("virtio-rng0", &s, err, sizeof(err));
	assert_non_null(f->vdev);
	struct virtio_dev *v = f->vdev;
	v->gm = &f->fm.gm;
	v->transport = &transport;
	v->transport_data = f;
	struct virtq *vq = &v->vqs[0];
	assert_int_equal(virtq_init(vq, "virtio-rng0 q0", v->queue_max_size, NULL, NULL), 0);
	assert_int_equal(virtq_set_size(vq, QSZ), 0);
	assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_DESC, DESC_GPA), 0);
	assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_AVAIL, AVAIL_GPA), 0);
	assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_USED, USED_GPA), 0);
	assert_int_equal(virtq_activate(vq, &f->fm.gm), 0);
	struct virtq_desc d = {.addr = DATA_GPA, .len = 1, .flags = VIRTQ_DESC_F_WRITE};
	memcpy(fake_mem_at(&f->fm, DESC_GPA), &d, sizeof(d));
	assert_int_equal(v->ops->activate(v), 0);
	((struct virtio_rng *)v->priv)->source = refilling_source;
	cur = f;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	virtio_rng_destroy(f->vdev);
	fake_mem_free(&f->fm);
	free(f);
	return 0;
}

/* Finding: the rate limiter's timer runs the queue on the I/O thread the
 * VM's other devices share. Without a kick eventfd (--no-ioeventfd) the
 * run's budget ended in "the transport cannot come back: go on", so a
 * guest that re-posts a chain while each is served (no exit needed) kept
 * the I/O thread in rng_run for ever: every other device on it starved
 * and the VM could not be stopped. Fixed ("review: virtio-rng's timer run
 * is bounded without ioeventfd"): that run stops at the budget and comes
 * back through the timer, as a kick eventfd would have it come back. */
static void test_timer_run_bounded(void **state)
{
	struct fx *f = *state;
	struct virtio_rng *r = f->vdev->priv;
	f->refills = 100000; /* "for ever": the test must end on old code */
	guest_post(f);
	throttle_event(&r->throttle, 0); /* the timer fired: the I/O thread */
	uint16_t served = used_idx(f);
	assert_true(served > 0);
	assert_true(served <= RNG_POP_BUDGET);
	/* It comes back by itself: the timer fires (the I/O thread would
	 * call throttle_event for it). */
	assert_true(r->deferred);
	struct pollfd p = {.fd = r->throttle.tfd, .events = POLLIN};
	assert_int_equal(poll(&p, 1, 1000), 1);
	/* Each later timer run is bounded likewise and makes progress. */
	throttle_event(&r->throttle, 0);
	uint16_t more = (uint16_t)(used_idx(f) - served);
	assert_true(more > 0 && more <= RNG_POP_BUDGET);
	/* The guest's own trapped kick still serves what it posted. */
	f->refills = 0;
	f->vdev->ops->queue_notify(f->vdev, 0);
	assert_int_equal(used_idx(f), f->avail_idx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_timer_run_bounded, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
