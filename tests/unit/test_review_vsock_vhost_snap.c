// SPDX-License-Identifier: Apache-2.0
/* Review of vsock backend=vhost's snapshots and migration
 * (src/devices/virtio-vsock/virtio_vsock_vhost_snap.c): each test a
 * finding that failed on the code before its fix. On the fixture of
 * vsock_vhost_fx.h. */
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
#include "virtio/virtq_state.h"

#include "vsock_vhost_fx.h"

#define F_LOG (1ull << VHOST_F_LOG_ALL)

static struct vsock_vhost *vv(struct virtio_dev *v)
{
	return v->priv;
}

static void save(struct fx *f)
{
	struct snap_writer w;
	char err[200] = "";
	snap_writer_init(&w);
	assert_int_equal(f->ops->save(f->vdev, &w, SNAP_ID_DEVICE, 0, err, sizeof(err)), 0);
	snap_writer_free(&w);
}

/* Whether the kernel was told to run the rings (SET_RUNNING 1). */
static bool started(void)
{
	for (unsigned int i = 0; i < ncalls; i++)
		if (calls[i].req == VHOST_VSOCK_SET_RUNNING && calls[i].val == 1)
			return true;
	return false;
}

/* Finding 1: a save whose GET_VRING_BASE fails on a ring breaks it (the
 * kernel did not say where it stopped: from skiff's old position the
 * guest would get buffers twice, vhost_stop_ring). The I/O thread's
 * restart handed that ring back to the kernel all the same, at the stale
 * position (0 here: where activate had started it). A guest can cause
 * the same through virtq_resume_at's check by writing its used index.
 * Now a broken ring is never restarted: the device stops, once. */
static void test_broken_ring_not_restarted(void **state)
{
	struct fx *f = *state;
	struct virtio_dev *v = f->vdev;
	assert_int_equal(v->ops->activate(v), 0);
	fail_req = VHOST_GET_VRING_BASE;
	fail_errno = EIO;
	fail_index = VSOCK_TXQ;
	save(f);
	assert_true(v->vqs[VSOCK_TXQ].broken);
	assert_true(vv(v)->parked);
	fail_req = 0;
	ncalls = 0;
	v->ops->queue_notify(v, VSOCK_RXQ); /* the save's kick: the restart */
	assert_false(started());
	assert_null(call_of(VHOST_SET_VRING_BASE, ~0u));
	assert_false(vv(v)->running);
	assert_false(vv(v)->parked);
	ncalls = 0;
	v->ops->queue_notify(v, VSOCK_TXQ); /* once: no retry per kick */
	assert_int_equal(ncalls, 0);
}

/* Finding 1 too, by a failed migration switch: released, taken back, the
 * broken ring stays with skiff. */
static void test_broken_ring_not_taken_back(void **state)
{
	struct fx *f = *state;
	struct virtio_dev *v = f->vdev;
	char err[200];
	assert_int_equal(v->ops->activate(v), 0);
	fail_req = VHOST_GET_VRING_BASE;
	fail_errno = EIO;
	fail_index = VSOCK_RXQ;
	save(f);
	fail_req = 0;
	unsigned int fds = open_fds();
	assert_int_equal(f->ops->handover(v, true, err, sizeof(err)), 0);
	assert_int_equal(f->ops->handover(v, false, err, sizeof(err)), 0);
	assert_int_equal(open_fds(), fds);
	ncalls = 0;
	v->ops->queue_notify(v, VSOCK_RXQ);
	assert_false(started());
	assert_null(call_of(VHOST_SET_VRING_BASE, ~0u));
	assert_int_equal(count_of(VHOST_SET_VRING_KICK), 0);
}

/* Finding 2 (a take-back whose first reopen fails and whose retry
 * succeeds, vmm_mig_send.c's take_back trying 50 times) lost vhost's log
 * then; the device has no log since (the kernel's vhost-vsock logs no
 * packet: dirty_stop instead). What stays: the failed reopen leaves no
 * fd open, the retry takes the node back, and a kick restarts the rings
 * with no log base. */
static void test_take_back_retry(void **state)
{
	struct fx *f = *state;
	struct virtio_dev *v = f->vdev;
	char err[200];
	assert_int_equal(v->ops->activate(v), 0);
	save(f);
	unsigned int fds = open_fds();
	assert_int_equal(f->ops->handover(v, true, err, sizeof(err)), 0);
	snprintf(vv(v)->path, sizeof(vv(v)->path), "/nonexistent/vhost-vsock");
	assert_int_equal(f->ops->handover(v, false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot open /nonexistent/vhost-vsock"));
	assert_int_equal(open_fds(), fds - 1);
	snprintf(vv(v)->path, sizeof(vv(v)->path), "/dev/null");
	assert_int_equal(f->ops->handover(v, false, err, sizeof(err)), 0);
	assert_int_equal(open_fds(), fds);
	ncalls = 0;
	v->ops->queue_notify(v, VSOCK_RXQ);
	assert_true(started());
	assert_null(call_of(VHOST_SET_LOG_BASE, ~0u));
}

/* Finding 4: a ring that broke before a save (finding 1's failed
 * GET_VRING_BASE, or a guest's used index that does not fit) is saved
 * broken, with NEEDS_RESET, and the transport's restore leaves it so:
 * configured, not active (virtq_state_restore), then calls activate,
 * since the device was live. activate refused a ring not set up, the
 * restore failed ("the restored device does not activate"): a guest
 * could make its VM impossible to restore or migrate. The restored
 * device is now what the source was after the failed restart: active,
 * nothing running, the guest owed its reset; its reset starts it again. */
static void test_restored_broken_ring(void **state)
{
	struct fx *f = *state;
	struct virtio_dev *v = f->vdev;
	char err[200];
	struct virtq *rx = &v->vqs[VSOCK_RXQ];
	virtq_mark_broken(rx, VIRTQ_ERR_INFLIGHT);
	struct virtq_state s;
	virtq_state_save(rx, &s);
	virtq_reset(rx);
	assert_int_equal(virtq_state_restore(rx, &f->fm.gm, &s, err, sizeof(err)), 0);
	assert_true(rx->broken);
	static const uint8_t sec[16] = {1, 0, 0, 0, 0, 0, 0, 0, 3};
	assert_int_equal(f->ops->restore(v, sec, sizeof(sec), err, sizeof(err)), 0);
	ncalls = 0;
	assert_int_equal(v->ops->activate(v), 0);
	assert_false(started());
	assert_null(call_of(VHOST_SET_VRING_BASE, ~0u));
	assert_true(vv(v)->active);
	assert_false(vv(v)->running);
	assert_true(vv(v)->reset_owed); /* no event buffer yet */
	ncalls = 0;
	v->ops->queue_notify(v, VSOCK_TXQ); /* nothing restarts */
	assert_int_equal(ncalls, 0);
	/* The driver's reset, then DRIVER_OK again: the rings run. */
	v->ops->reset(v);
	for (unsigned int q = 0; q < VSOCK_NR_QUEUES; q++) {
		uint64_t base = 0x10000 + 0x4000 * (uint64_t)q;
		struct virtq *vq = &v->vqs[q];
		virtq_reset(vq);
		assert_int_equal(virtq_set_size(vq, QSZ) |
				     virtq_set_addr(vq, VIRTQ_RING_DESC, base) |
				     virtq_set_addr(vq, VIRTQ_RING_AVAIL, base + 0x1000) |
				     virtq_set_addr(vq, VIRTQ_RING_USED, base + 0x2000) |
				     virtq_activate(vq, &f->fm.gm),
				 0);
	}
	ncalls = 0;
	assert_int_equal(v->ops->activate(v), 0);
	assert_true(started());
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_broken_ring_not_restarted),
	    T(test_broken_ring_not_taken_back),
	    T(test_take_back_retry),
	    T(test_restored_broken_ring),
	};
	return cmocka_run_group_tests_name("review_vsock_vhost_snap", tests, NULL, NULL);
}
