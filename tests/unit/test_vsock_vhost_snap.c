// SPDX-License-Identifier: Apache-2.0
/* --vsock backend=vhost in snapshots and live migration
 * (src/devices/virtio-vsock/virtio_vsock_vhost_snap.c, issue 34): the
 * save stops the rings and takes their positions, the section is the
 * hybrid's, a restore refuses a cut or a wrong CID and owes the guest
 * one TRANSPORT_RESET; the same process restarts the rings after a save;
 * a migration's switch lets the node (and the CID) go, a failed one
 * takes it back, restarts and owes the reset; vhost's dirty log as
 * vhost-net's. On the fixture of vsock_vhost_fx.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/vhost.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/snap.h"
#include "devices/virtio-vsock/virtio_vsock.h"
#include "devices/virtio-vsock/virtio_vsock_priv.h"
#include "fake_mem.h"
#include "virtio/virtio_dev.h"
#include "vmm/devmgr.h"

#include "vsock_vhost_fx.h"

/* ---- snapshot and migration (virtio_vsock_vhost_snap.c) ---- */

#define EVQ_RING (0x10000 + 0x4000 * (uint64_t)VSOCK_EVQ)
#define EV_BUF	 0x40000
#define F_LOG	 (1ull << VHOST_F_LOG_ALL)

static struct vsock_vhost *vv(struct virtio_dev *v)
{
	return v->priv;
}

/* The guest posts one 8-byte event buffer and kicks the event queue. */
static void ev_post(struct fake_mem *fm, struct virtio_dev *v)
{
	uint16_t *avail = fake_mem_at(fm, EVQ_RING + 0x1000);
	uint16_t idx = avail[1], d = idx % QSZ;
	struct virtq_desc desc = {
	    .addr = EV_BUF + 8 * (uint64_t)d, .len = 8, .flags = VIRTQ_DESC_F_WRITE};
	memcpy(fake_mem_at(fm, EVQ_RING + 16 * (uint64_t)d), &desc, sizeof(desc));
	memset(fake_mem_at(fm, EV_BUF + 8 * (uint64_t)d), 0xee, 8);
	avail[2 + d] = d;
	__atomic_store_n(&avail[1], (uint16_t)(idx + 1), __ATOMIC_RELEASE);
	v->ops->queue_notify(v, VSOCK_EVQ);
}

static uint16_t ev_used(struct fake_mem *fm)
{
	return __atomic_load_n((uint16_t *)fake_mem_at(fm, EVQ_RING + 0x2000 + 2),
			       __ATOMIC_ACQUIRE);
}

/* The event the device put in used slot i (its length: the event's). */
static uint32_t ev_id(struct fake_mem *fm, unsigned int i)
{
	struct virtq_used_elem e;
	memcpy(&e, fake_mem_at(fm, EVQ_RING + 0x2000 + 4 + 8 * (uint64_t)i), sizeof(e));
	assert_int_equal(e.len, sizeof(struct virtio_vsock_event));
	uint32_t id;
	memcpy(&id, fake_mem_at(fm, EV_BUF + 8 * (uint64_t)e.id), 4);
	return id;
}

/* dev_ops.save into a section of its own: its payload in out (16 bytes). */
static void save(struct fx *f, struct virtio_dev *v, uint8_t out[16])
{
	struct snap_writer w;
	struct snap_image img;
	char err[200] = "";
	size_t len;
	snap_writer_init(&w);
	assert_int_equal(f->ops->save(v, &w, SNAP_ID_DEVICE, 0, err, sizeof(err)), 0);
	const uint8_t *b = snap_writer_image(&w, &len);
	assert_int_equal(snap_parse(&img, b, len, err, sizeof(err)), 0);
	const struct snap_section *sec = snap_find(&img, SNAP_ID_DEVICE, 0);
	assert_int_equal(sec->len, 16);
	memcpy(out, sec->data, 16);
	snap_image_free(&img);
	snap_writer_free(&w);
}

static int find_call(unsigned long req, unsigned int ring)
{
	for (unsigned int i = 0; i < ncalls; i++)
		if (calls[i].req == req && (ring == ~0u || calls[i].index == ring))
			return (int)i;
	return -1;
}

/* Handed to the kernel where the virtqs stood (7: the fake's
 * GET_VRING_BASE), running last. */
static void expect_started_at(uint64_t pos)
{
	for (unsigned int q = 0; q < 2; q++)
		assert_int_equal(call_of(VHOST_SET_VRING_BASE, q)->val, pos);
	assert_int_equal(calls[ncalls - 1].req, VHOST_VSOCK_SET_RUNNING);
	assert_int_equal(calls[ncalls - 1].val, 1);
}

/* The refusal line is gone: a VM with it snapshots and migrates (its
 * rings stopped for the pre-copy: dirty_stop); a Diff is refused, logs
 * on or not: the kernel logs no packet it writes. */
static void test_can_save(void **state)
{
	struct fx *f = *state;
	static struct devmgr dm;
	memset(&dm, 0, sizeof(dm));
	for (size_t i = 0; i < dm_nr_kinds; i++)
		if (!strcmp(dm_kinds[i]->option, "vsock"))
			dm.devs[0].kind = dm_kinds[i];
	assert_non_null(dm.devs[0].kind);
	snprintf(dm.devs[0].name, sizeof(dm.devs[0].name), "virtio-vsock0");
	dm.devs[0].d = (struct device){.dev = f->vdev, .ops = f->ops, .vdev = f->vdev};
	dm.nr = 1;
	char err[256];
	assert_int_equal(devmgr_can_save(&dm, "snapshot", err, sizeof(err)), 0);
	assert_int_equal(devmgr_can_save(&dm, "migrate", err, sizeof(err)), 0);
	assert_int_equal(devmgr_can_track(&dm, "migrate", true, true, err, sizeof(err)), 0);
	assert_int_equal(
	    devmgr_can_track(&dm, "take a Diff snapshot of", true, false, err, sizeof(err)), -1);
	assert_string_equal(err, "cannot take a Diff snapshot of a VM with virtio-vsock0: the "
				 "kernel's vhost-vsock writes received packets into guest memory "
				 "and logs none of them (drivers/vhost/vsock.c)");
	assert_null(f->ops->dirty_log);
}

/* Saved: the rings stopped (running off first) and their positions in
 * the virtqs for the transport; the section the hybrid's. Restored on a
 * new device (a new process: its own /dev/vhost-vsock, its CID): a cut,
 * another layout or CID refused with nothing owed; else the rings start
 * where they were and the guest gets one TRANSPORT_RESET, in the first
 * event buffer it gives. */
static void test_round_trip(void **state)
{
	struct fx *f = *state;
	struct virtio_dev *a = f->vdev;
	assert_int_equal(a->ops->activate(a), 0);
	ncalls = 0;
	uint8_t sec[16];
	save(f, a, sec);
	assert_int_equal(calls[0].req, VHOST_VSOCK_SET_RUNNING);
	assert_int_equal(calls[0].val, 0);
	assert_int_equal(find_call(VHOST_VSOCK_SET_RUNNING, ~0u), 0); /* never on again */
	assert_int_equal(count_of(VHOST_VSOCK_SET_RUNNING), 1);
	for (unsigned int q = 0; q < 2; q++) {
		assert_non_null(call_of(VHOST_GET_VRING_BASE, q));
		assert_int_equal(a->vqs[q].last_avail_idx, 7);
		assert_int_equal(taken[q], 1);
	}
	assert_int_equal(a->vqs[VSOCK_EVQ].last_avail_idx, 0);
	assert_int_equal(rescheds[VSOCK_RXQ], 1); /* the I/O thread's restart */
	const uint8_t want[16] = {1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0};
	assert_memory_equal(sec, want, 16);

	const struct dev_ops *bops;
	struct virtio_dev *b = dev_open(&f->fm, &bops);
	assert_non_null(b);
	for (unsigned int q = 0; q < 2; q++) { /* the transport's restore */
		b->vqs[q].last_avail_idx = a->vqs[q].last_avail_idx;
		b->vqs[q].used_idx = a->vqs[q].used_idx;
	}
	char err[200];
	static const struct {
		unsigned int at;
		uint8_t val;
		const char *why;
	} bad[] = {{0, 2, "its layout is unknown"},
		   {4, 1, "a reserved field is set"},
		   {8, 4, "its guest CID differs"},
		   {12, 1, "its guest CID differs"}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t h[16];
		memcpy(h, sec, 16);
		h[bad[i].at] = bad[i].val;
		assert_int_equal(bops->restore(b, h, 16, err, sizeof(err)), -1);
		char line[200];
		snprintf(line, sizeof(line), "virtio-vsock0: saved state refused: %s", bad[i].why);
		assert_string_equal(err, line);
	}
	for (size_t n = 0; n < 16; n++) {
		assert_int_equal(bops->restore(b, sec, n, err, sizeof(err)), -1);
		assert_string_equal(err, "virtio-vsock0: saved state refused: its size is wrong");
	}
	assert_false(vv(b)->reset_owed);
	assert_int_equal(bops->restore(b, sec, 16, err, sizeof(err)), 0);
	assert_true(vv(b)->reset_owed);
	ncalls = 0;
	assert_int_equal(b->ops->activate(b), 0);
	expect_started_at(7);
	assert_int_equal(ev_used(&f->fm), 0); /* no buffer yet: still owed */
	ev_post(&f->fm, b);
	assert_int_equal(ev_used(&f->fm), 1);
	assert_int_equal(ev_id(&f->fm, 0), VIRTIO_VSOCK_EVENT_TRANSPORT_RESET);
	ev_post(&f->fm, b); /* once */
	assert_int_equal(ev_used(&f->fm), 1);
	bops->stop(b);
	bops->destroy(b);
}

/* The same process goes on after a snapshot: the kick the save signalled
 * reaches the I/O thread once the save lets it go, and the rings go back
 * to the kernel where they stopped, nothing owed to the guest. */
static void test_restart_after_save(void **state)
{
	struct fx *f = *state;
	struct virtio_dev *v = f->vdev;
	ev_post(&f->fm, v);
	assert_int_equal(v->ops->activate(v), 0);
	uint8_t sec[16];
	save(f, v, sec);
	ncalls = 0;
	v->ops->queue_notify(v, VSOCK_EVQ); /* the event queue restarts nothing */
	assert_int_equal(ncalls, 0);
	v->ops->queue_notify(v, VSOCK_RXQ);
	expect_started_at(7);
	assert_int_equal(handed[VSOCK_RXQ], 2);
	assert_int_equal(handed[VSOCK_TXQ], 2);
	assert_int_equal(ev_used(&f->fm), 0);
	ncalls = 0;
	v->ops->queue_notify(v, VSOCK_TXQ); /* running: the kernel's */
	assert_int_equal(ncalls, 0);
	/* A reset after a save: nothing runs, nothing is restarted. */
	save(f, v, sec);
	v->ops->reset(v);
	ncalls = 0;
	v->ops->queue_notify(v, VSOCK_RXQ);
	assert_int_equal(ncalls, 0);
}

/* A migration's switch on one host: the source lets its node go (the
 * kernel frees the CID), and nothing restarts it; a failed switch takes
 * it back (the CID refused while the target holds it: one line, nothing
 * left open, and a retry), restarts the rings and owes the guest a
 * TRANSPORT_RESET: its host streams are gone. */
static void test_switch(void **state)
{
	struct fx *f = *state;
	struct virtio_dev *v = f->vdev;
	char err[200];
	ev_post(&f->fm, v);
	assert_int_equal(v->ops->activate(v), 0);
	uint8_t sec[16];
	save(f, v, sec);
	unsigned int fds = open_fds();
	assert_int_equal(f->ops->handover(v, true, err, sizeof(err)), 0);
	assert_int_equal(open_fds(), fds - 1);
	assert_null(f->ops->dirty_blind(v)); /* closed: it writes nothing */
	ncalls = 0;
	v->ops->queue_notify(v, VSOCK_RXQ); /* the held kick, after the switch */
	assert_int_equal(ncalls, 0);
	fail_req = VHOST_VSOCK_SET_GUEST_CID;
	fail_errno = EADDRINUSE;
	owners = 0;
	assert_int_equal(f->ops->handover(v, false, err, sizeof(err)), -1);
	assert_string_equal(err, "virtio-vsock0: guest CID 3 is in use on this host (another VM "
				 "has it)");
	assert_int_equal(owners, 1);
	assert_int_equal(open_fds(), fds - 1);
	assert_int_equal(ev_used(&f->fm), 0);
	v->ops->queue_notify(v, VSOCK_RXQ); /* still released */
	assert_null(call_of(VHOST_VSOCK_SET_RUNNING, ~0u));
	fail_req = 0;
	ncalls = 0;
	assert_int_equal(f->ops->handover(v, false, err, sizeof(err)), 0);
	assert_int_equal(open_fds(), fds);
	assert_int_equal(call_of(VHOST_VSOCK_SET_GUEST_CID, ~0u)->val, 3);
	assert_int_equal(rescheds[VSOCK_RXQ], 2);
	ncalls = 0;
	v->ops->queue_notify(v, VSOCK_RXQ);
	expect_started_at(7);
	assert_int_equal(ev_used(&f->fm), 1);
	assert_int_equal(ev_id(&f->fm, 0), VIRTIO_VSOCK_EVENT_TRANSPORT_RESET);
	ncalls = 0;
	assert_int_equal(f->ops->handover(v, false, err, sizeof(err)), 0); /* had it */
	assert_int_equal(ncalls, 0);
}

/* The kernel was never told to run the rings (SET_RUNNING 1) since
 * ncalls was last cleared. */
static void never_running(void)
{
	for (unsigned int i = 0; i < ncalls; i++)
		assert_false(calls[i].req == VHOST_VSOCK_SET_RUNNING && calls[i].val == 1);
}

/* A migration's pre-copy: the rings stop where they are (the kernel
 * writes no guest memory, none of which it would log) and stay stopped
 * whatever the guest kicks, or a driver's reset and start, until the
 * pre-copy ends in a failure: then a kick hands them back where they
 * stood. Never a log base. */
static void test_dirty_stop(void **state)
{
	struct fx *f = *state;
	struct virtio_dev *v = f->vdev;
	char err[200];
	assert_int_equal(v->ops->activate(v), 0);
	ncalls = 0;
	assert_int_equal(f->ops->dirty_stop(v, true, err, sizeof(err)), 0);
	assert_true(find_call(VHOST_VSOCK_SET_RUNNING, ~0u) >= 0);
	assert_true(find_call(VHOST_GET_VRING_BASE, VSOCK_RXQ) >= 0);
	assert_true(find_call(VHOST_GET_VRING_BASE, VSOCK_TXQ) >= 0);
	ncalls = 0;
	v->ops->queue_notify(v, VSOCK_RXQ);
	v->ops->queue_notify(v, VSOCK_TXQ);
	assert_int_equal(ncalls, 0);
	/* A driver that starts again meanwhile gets no running ring either
	 * (checked by the kernel and taken back: test_quiet_start_refused). */
	v->ops->reset(v);
	ncalls = 0;
	assert_int_equal(v->ops->activate(v), 0);
	v->ops->queue_notify(v, VSOCK_RXQ);
	never_running();
	assert_false(vv(v)->running);
	ncalls = 0;
	assert_int_equal(f->ops->dirty_stop(v, false, err, sizeof(err)), 0);
	v->ops->queue_notify(v, VSOCK_RXQ);
	assert_true(find_call(VHOST_SET_VRING_BASE, VSOCK_RXQ) >= 0);
	assert_int_equal(call_of(VHOST_VSOCK_SET_RUNNING, ~0u)->val, 1);
	assert_int_equal(find_call(VHOST_SET_LOG_BASE, ~0u), -1);
}

/* A driver the kernel would refuse (tx left disabled, no vector for a
 * ring, a ring address it refuses) is refused during a migration's
 * pre-copy too, though its rings stay stopped: an activation passed then
 * would go into the state as DRIVER_OK and not inactive, and the target's
 * restore, which does run the rings, would fail: that migration, every
 * later one and every snapshot's load, until the driver resets (review9).
 * A driver the kernel takes gets its rings checked and taken back, never
 * running, until the pre-copy ends. */
static void test_quiet_start_refused(void **state)
{
	struct fx *f = *state;
	struct virtio_dev *v = f->vdev;
	char err[200];
	assert_int_equal(f->ops->dirty_stop(v, true, err, sizeof(err)), 0);
	handoff_fail_q = VSOCK_TXQ; /* no vector for tx */
	assert_int_equal(v->ops->activate(v), -1);
	assert_int_equal(handed[VSOCK_TXQ], 0);
	never_running();
	v->ops->reset(v);
	handoff_fail_q = ~0u;
	fail_req = VHOST_SET_VRING_ADDR; /* the kernel refuses a ring */
	fail_errno = EFAULT;
	assert_int_equal(v->ops->activate(v), -1);
	v->ops->reset(v);
	fail_req = 0;
	ncalls = 0;
	memset(handed, 0, sizeof(handed));
	memset(taken, 0, sizeof(taken));
	assert_int_equal(v->ops->activate(v), 0); /* taken: checked, not run */
	never_running();
	for (unsigned int q = 0; q < 2; q++) {
		assert_int_equal(taken[q], handed[q]);
		assert_non_null(call_of(VHOST_GET_VRING_BASE, q));
	}
	assert_false(vv(v)->running);
	assert_int_equal(f->ops->dirty_stop(v, false, err, sizeof(err)), 0);
	ncalls = 0;
	v->ops->queue_notify(v, VSOCK_RXQ);
	expect_started_at(0);
	v->ops->reset(v);
	virtq_reset(&v->vqs[VSOCK_TXQ]); /* left disabled */
	assert_int_equal(f->ops->dirty_stop(v, true, err, sizeof(err)), 0);
	assert_int_equal(v->ops->activate(v), -1);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_can_save), T(test_round_trip), T(test_restart_after_save),
	    T(test_switch),   T(test_dirty_stop), T(test_quiet_start_refused),
	};
	return cmocka_run_group_tests_name("vsock_vhost_snap", tests, NULL, NULL);
}
