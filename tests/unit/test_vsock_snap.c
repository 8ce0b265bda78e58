// SPDX-License-Identifier: Apache-2.0
/* virtio-vsock's snapshot section (virtio_vsock_snap.c): a device with an
 * open stream saved and restored onto a fresh one (the driver's reset
 * and a fresh queue setup stand in for a device whose guest has not run;
 * the queues move as the transport moves them): it tells the guest with
 * a TRANSPORT_RESET in its event buffer (virtio 1.2 5.10.6.7), at once or
 * when the guest first gives one, exactly once, and the guest connects
 * again. Another CID and every cut are refused, nothing owed. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/snap.h"
#include "devices/virtio-vsock/virtio_vsock.h"
#include "devices/virtio-vsock/virtio_vsock_priv.h"
#include "fake_mem.h"
#include "virtio/virtio_dev.h"
#include "virtio/virtq_state.h"
#include "vsock_fx.h"

#define EV_DATA 0x3f0000

struct pair {
	struct fx *a, *b;
};

static int pair_setup(void **state)
{
	struct pair *p = calloc(1, sizeof(*p));
	void *s;
	if (!p || setup(&s))
		return -1;
	p->a = s;
	if (setup(&s))
		return -1;
	p->b = s;
	*state = p;
	return 0;
}

static int pair_teardown(void **state)
{
	struct pair *p = *state;
	void *s = p->a;
	int r = teardown(&s);
	s = p->b;
	r |= teardown(&s);
	free(p);
	return r;
}

static size_t save(struct fx *f, uint8_t **out)
{
	struct snap_writer w;
	struct snap_image img;
	char err[200] = "";
	size_t len;
	snap_writer_init(&w);
	assert_int_equal(virtio_vsock_save(f->vdev, &w, SNAP_ID_DEVICE, 1, err, sizeof(err)), 0);
	const uint8_t *b = snap_writer_image(&w, &len);
	assert_int_equal(snap_parse(&img, b, len, err, sizeof(err)), 0);
	const struct snap_section *s = snap_find(&img, SNAP_ID_DEVICE, 1);
	*out = calloc(1, s->len + 1);
	memcpy(*out, s->data, s->len);
	size_t n = s->len;
	snap_image_free(&img);
	snap_writer_free(&w);
	return n;
}

/* b as a load builds it: no driver yet. Then a's section, a's memory and
 * queues (the transport's part) and DRIVER_OK. */
static void load(struct fx *a, struct fx *b, const uint8_t *p, size_t n)
{
	char err[200] = "";
	b->vdev->ops->reset(b->vdev);
	virtio_vsock_poll(b->vdev); /* closes what the reset dropped */
	for (unsigned int q = 0; q < VSOCK_NR_QUEUES; q++)
		virtq_reset(&b->vdev->vqs[q]);
	assert_int_equal(virtio_vsock_restore(b->vdev, p, n, err, sizeof(err)), 0);
	memcpy(b->fm.ram, a->fm.ram, RAM_SIZE);
	memcpy(b->q, a->q, sizeof(b->q));
	for (unsigned int q = 0; q < VSOCK_NR_QUEUES; q++) {
		struct virtq_state s;
		virtq_state_save(&a->vdev->vqs[q], &s);
		assert_int_equal(
		    virtq_state_restore(&b->vdev->vqs[q], &b->fm.gm, &s, err, sizeof(err)), 0);
	}
	assert_int_equal(b->vdev->ops->activate(b->vdev), 0);
}

static uint16_t ev_used(struct fx *f)
{
	return __atomic_load_n((uint16_t *)fake_mem_at(&f->fm, ring_gpa[VSOCK_EVQ] + 0x2000 + 2),
			       __ATOMIC_ACQUIRE);
}

/* The event in used slot i: its length, and the id the buffer got. */
static uint32_t ev_id(struct fx *f, unsigned int i, uint32_t *len)
{
	struct virtq_used_elem e;
	memcpy(&e, fake_mem_at(&f->fm, ring_gpa[VSOCK_EVQ] + 0x2000 + 4 + 8 * i), sizeof(e));
	*len = e.len;
	uint32_t id;
	memcpy(&id, fake_mem_at(&f->fm, EV_DATA + 8 * (uint64_t)e.id), 4);
	return id;
}

static void ev_post(struct fx *f, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		uint16_t d = f->q[VSOCK_EVQ].next_desc;
		memset(fake_mem_at(&f->fm, EV_DATA + 8 * (uint64_t)d), 0xee, 8);
		guest_add(f, VSOCK_EVQ, EV_DATA + 8 * (uint64_t)d, 8, true);
	}
	f->vdev->ops->queue_notify(f->vdev, VSOCK_EVQ);
}

static void test_reset_event_at_load(void **state)
{
	struct pair *p = *state;
	struct fx *a = p->a, *b = p->b;
	rx_post(a, 16);
	ev_post(a, 4); /* as Linux's driver at probe: kept, nothing owed */
	assert_int_equal(ev_used(a), 0);
	int lfd, s = guest_stream(a, &lfd);
	uint8_t *sec;
	size_t n = save(a, &sec);
	load(a, b, sec, n);
	uint32_t len;
	assert_int_equal(ev_used(b), 1);
	assert_int_equal(ev_id(b, 0, &len), VIRTIO_VSOCK_EVENT_TRANSPORT_RESET);
	assert_int_equal(len, sizeof(struct virtio_vsock_event));
	/* Once: a kick later sends nothing more. */
	b->vdev->ops->queue_notify(b->vdev, VSOCK_EVQ);
	assert_int_equal(ev_used(b), 1);
	/* The config still says the guest's CID; the guest connects again. */
	uint64_t cid = 0;
	b->vdev->ops->config_read(b->vdev, 0, &cid, 8);
	assert_int_equal(cid, CID);
	int lfd2, s2 = guest_stream(b, &lfd2);
	assert_int_equal(write(s2, "hi", 2), 2);
	close(s2);
	close(lfd2);
	close(s);
	close(lfd);
	free(sec);
}

/* No event buffer at the load: the event waits for the guest's first. */
static void test_reset_event_waits_for_a_buffer(void **state)
{
	struct pair *p = *state;
	struct fx *a = p->a, *b = p->b;
	uint8_t *sec;
	size_t n = save(a, &sec);
	load(a, b, sec, n);
	assert_int_equal(ev_used(b), 0);
	ev_post(b, 2);
	uint32_t len;
	assert_int_equal(ev_used(b), 1);
	assert_int_equal(ev_id(b, 0, &len), VIRTIO_VSOCK_EVENT_TRANSPORT_RESET);
	assert_int_equal(len, sizeof(struct virtio_vsock_event));
	assert_int_equal(ev_used(b), 1); /* the second buffer stays the guest's */
	free(sec);
}

static void test_hostile_refused(void **state)
{
	struct pair *p = *state;
	struct fx *a = p->a, *b = p->b;
	uint8_t *sec;
	size_t n = save(a, &sec);
	char err[200];
	for (size_t k = 0; k <= n + 1; k++) {
		if (k == n)
			continue;
		err[0] = '\0';
		assert_int_equal(virtio_vsock_restore(b->vdev, sec, k, err, sizeof(err)), -1);
		assert_true(err[0] && !strchr(err, '\n'));
	}
	static const struct {
		size_t at;
		const char *why;
	} bad[] = {
	    {0, "its layout is unknown"},
	    {4, "a reserved field is set"},
	    {8, "its guest CID differs"},
	    {12, "its guest CID differs"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sec[bad[i].at] ^= 2;
		char want[200];
		snprintf(want, sizeof(want), "virtio-vsock0: saved state refused: %s", bad[i].why);
		assert_int_equal(virtio_vsock_restore(b->vdev, sec, n, err, sizeof(err)), -1);
		assert_string_equal(err, want);
		sec[bad[i].at] ^= 2;
	}
	assert_false(b->v->reset_owed);
	free(sec);
}

int main(void)
{
	(void)counter, (void)host_readable; /* the fixture's, unused here */
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_reset_event_at_load, pair_setup, pair_teardown),
	    cmocka_unit_test_setup_teardown(test_reset_event_waits_for_a_buffer, pair_setup,
					    pair_teardown),
	    cmocka_unit_test_setup_teardown(test_hostile_refused, pair_setup, pair_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
