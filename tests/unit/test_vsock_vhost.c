// SPDX-License-Identifier: Apache-2.0
/* --vsock backend=vhost (src/devices/virtio-vsock/virtio_vsock_vhost.c,
 * issue 33.1; its options: test_vsock_vhost_opts.c): the device node missing
 * or the CID taken (one line, nothing left open), the rx and tx rings
 * handed to the kernel at DRIVER_OK and taken back at reset (never the
 * event queue), a refusal said once (its snapshot, restore, dirty log
 * and hand-over: test_vsock_vhost_snap.c). No /dev/vhost-vsock: the
 * device opens /dev/null and an ioctl of the test's plays the kernel for
 * every vhost request (vsock_vhost_fx.h). */
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

/* ---- making the device ---- */

static void expect_refused(const char *path, const char *want)
{
	struct vsock_spec s = {.cid = 3, .backend = VSOCK_BACKEND_VHOST};
	const struct dev_ops *ops = NULL;
	char err[256] = "";
	unsigned int fds = open_fds();
	assert_null(virtio_vsock_vhost_create("virtio-vsock0", &s, path, &ops, err, sizeof(err)));
	if (strcmp(err, want))
		fail_msg("'%s', want '%s'", err, want);
	assert_null(ops);
	assert_int_equal(open_fds(), fds); /* nothing left open */
}

static void test_create_refused(void **state)
{
	(void)state;
	reset_fakes();
	expect_refused("/nonexistent/vhost-vsock",
		       "cannot open /nonexistent/vhost-vsock: No such file or directory (load "
		       "the vhost_vsock module)");
	fail_req = VHOST_VSOCK_SET_GUEST_CID;
	fail_errno = EADDRINUSE;
	expect_refused("/dev/null", "guest CID 3 is in use on this host (another VM has it)");
	fail_errno = EINVAL;
	expect_refused("/dev/null", "vhost-vsock refused guest CID 3: Invalid argument");
	fail_req = VHOST_SET_OWNER;
	fail_errno = EBUSY;
	expect_refused("/dev/null", "null setup failed: Device or resource busy");
	reset_fakes();
}

static void test_create(void **state)
{
	(void)state;
	reset_fakes();
	struct vsock_spec s = {.cid = 4294967294u, .backend = VSOCK_BACKEND_VHOST};
	const struct dev_ops *ops = NULL;
	char err[256];
	unsigned int fds = open_fds();
	struct virtio_dev *v =
	    virtio_vsock_vhost_create("virtio-vsock0", &s, "/dev/null", &ops, err, sizeof(err));
	assert_non_null(v);
	assert_int_equal(open_fds(), fds + 1);
	assert_non_null(call_of(VHOST_SET_OWNER, ~0u));
	assert_int_equal(call_of(VHOST_VSOCK_SET_GUEST_CID, ~0u)->val, 4294967294u);
	assert_int_equal(v->device_id, 19);
	assert_int_equal(v->num_queues, 3);
	assert_int_equal(v->msix_vectors, 2);  /* config and one for the queues */
	assert_int_equal(v->host_features, 0); /* STREAM only */
	uint64_t cid = 0;
	v->ops->config_read(v, 0, &cid, 8);
	assert_int_equal(cid, 4294967294u);
	uint32_t hi = 0;
	v->ops->config_read(v, 4, &hi, 4);
	assert_int_equal(hi, 0);
	/* The stop closes the device node: the kernel stops its worker. */
	ops->stop(v);
	assert_int_equal(open_fds(), fds);
	ops->destroy(v);
	assert_int_equal(open_fds(), fds);
}

/* ---- DRIVER_OK and reset ---- */

static void test_activate_reset(void **state)
{
	struct fx *f = *state;
	struct virtio_dev *v = f->vdev;
	for (int round = 0; round < 2; round++) {
		ncalls = 0;
		assert_int_equal(v->ops->activate(v), 0);
		/* rx and tx to the kernel, the event queue stays */
		assert_int_equal(handed[VSOCK_RXQ], round + 1);
		assert_int_equal(handed[VSOCK_TXQ], round + 1);
		assert_int_equal(handed[VSOCK_EVQ], 0);
		assert_int_equal(call_of(VHOST_SET_FEATURES, ~0u)->val, F_VERSION | F_EVIDX);
		assert_non_null(call_of(VHOST_SET_MEM_TABLE, ~0u));
		for (unsigned int q = 0; q < 2; q++) {
			assert_int_equal(call_of(VHOST_SET_VRING_NUM, q)->val, QSZ);
			assert_int_equal(call_of(VHOST_SET_VRING_BASE, q)->val, 0);
			assert_non_null(call_of(VHOST_SET_VRING_ADDR, q));
			assert_int_equal(call_of(VHOST_SET_VRING_KICK, q)->val, 100 + q);
			assert_int_equal(call_of(VHOST_SET_VRING_CALL, q)->val, 200 + q);
		}
		assert_null(call_of(VHOST_SET_VRING_NUM, VSOCK_EVQ));
		/* running last, once the rings are there */
		assert_int_equal(calls[ncalls - 1].req, VHOST_VSOCK_SET_RUNNING);
		assert_int_equal(calls[ncalls - 1].val, 1);
		/* The event queue's kick does nothing: no event is owed. */
		ncalls = 0;
		v->ops->queue_notify(v, VSOCK_EVQ);
		assert_int_equal(ncalls, 0);
		v->ops->reset(v);
		assert_int_equal(calls[0].req, VHOST_VSOCK_SET_RUNNING);
		assert_int_equal(calls[0].val, 0);
		assert_non_null(call_of(VHOST_GET_VRING_BASE, 0));
		assert_non_null(call_of(VHOST_GET_VRING_BASE, 1));
		assert_int_equal(taken[VSOCK_RXQ], round + 1);
		assert_int_equal(taken[VSOCK_TXQ], round + 1);
		/* A second reset: nothing runs, nothing to take back. */
		ncalls = 0;
		v->ops->reset(v);
		assert_int_equal(ncalls, 0);
		assert_int_equal(taken[VSOCK_RXQ], round + 1);
	}
}

/* Lines written to stderr while the guest sets DRIVER_OK n times. */
static int refused_lines(struct virtio_dev *v, int n)
{
	FILE *tmp = tmpfile();
	assert_non_null(tmp);
	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	dup2(fileno(tmp), STDERR_FILENO);
	for (int i = 0; i < n; i++) {
		assert_int_equal(v->ops->activate(v), -1);
		v->ops->reset(v);
	}
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	int lines = 0, c;
	while ((c = fgetc(tmp)) != EOF)
		lines += c == '\n';
	fclose(tmp);
	return lines;
}

/* A refusal (no vector for tx, the kernel refusing a ring, a feature it
 * lacks) fails the device, never runs it, gives back what was handed
 * off and stops what was started; said once however often. */
static void test_activate_refused(void **state)
{
	struct fx *f = *state;
	struct virtio_dev *v = f->vdev;
	handoff_fail_q = VSOCK_TXQ;
	assert_int_equal(refused_lines(v, 100), 1);
	assert_int_equal(count_of(VHOST_VSOCK_SET_RUNNING), 100); /* each a 0 */
	assert_null(call_of(VHOST_SET_VRING_NUM, ~0u));
	assert_int_equal(handed[VSOCK_RXQ], 100);
	assert_int_equal(taken[VSOCK_RXQ], 100);
	handoff_fail_q = ~0u;
	/* The kernel refuses ring 1: ring 0, started, is stopped. */
	ncalls = 0;
	fail_req = VHOST_SET_VRING_NUM;
	fail_index = 1;
	fail_errno = EINVAL;
	assert_int_equal(refused_lines(v, 1), 0); /* said already */
	assert_non_null(call_of(VHOST_GET_VRING_BASE, 0));
	assert_null(call_of(VHOST_GET_VRING_BASE, 1));
	for (unsigned int i = 0; i < ncalls; i++)
		assert_false(calls[i].req == VHOST_VSOCK_SET_RUNNING && calls[i].val == 1);
	fail_req = 0;
	/* A driver that left tx disabled: nothing handed to the kernel. */
	ncalls = 0;
	memset(handed, 0, sizeof(handed));
	virtq_reset(&v->vqs[VSOCK_TXQ]);
	assert_int_equal(refused_lines(v, 1), 0);
	assert_int_equal(handed[VSOCK_TXQ], 0);
	assert_null(call_of(VHOST_SET_VRING_NUM, ~0u));
	/* The guest took EVENT_IDX, which this kernel lacks: refused before
	 * the kernel is told anything. */
	f->ops->destroy(v);
	fake_features = F_VERSION | F_INDIR;
	assert_int_equal(fx_open(f), 0);
	v = f->vdev;
	assert_int_equal(refused_lines(v, 1), 1); /* another device: its own line */
	assert_null(call_of(VHOST_SET_FEATURES, ~0u));
	assert_null(call_of(VHOST_SET_VRING_NUM, ~0u));
	for (unsigned int i = 0; i < ncalls; i++)
		assert_false(calls[i].req == VHOST_VSOCK_SET_RUNNING && calls[i].val == 1);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_create_refused),
	    cmocka_unit_test(test_create),
	    T(test_activate_reset),
	    T(test_activate_refused),
	};
	return cmocka_run_group_tests_name("vsock_vhost", tests, NULL, NULL);
}
