// SPDX-License-Identifier: Apache-2.0
/* virtio-vsock at a live migration's switch (virtio_vsock_mig.c): the
 * source's release closes its host streams and listener and removes its
 * socket file, so a second device (the target) listens on the same path;
 * a failed switch's take-back listens again and owes the guest a
 * TRANSPORT_RESET; a file someone else put at the path (a symlink to
 * the socket too) is never removed, and taking back over it is refused with a reason. */
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
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "devices/virtio-vsock/virtio_vsock.h"
#include "devices/virtio-vsock/virtio_vsock_priv.h"
#include "fake_mem.h"
#include "virtio/virtio_dev.h"
#include "vsock_fx.h"

#define EV_DATA 0x3f0000

static int handover(struct fx *f, bool release, char *err, size_t errlen)
{
	return virtio_vsock_handover(f->vdev, release, err, errlen);
}

/* The fixture's device with RX buffers posted (host_stream's REQUEST). */
static int mig_setup(void **state)
{
	if (setup(state))
		return -1;
	rx_post(*state, 16);
	return 0;
}

static bool path_exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

static void test_release_frees_the_path(void **state)
{
	struct fx *f = *state;
	char err[256] = "";
	uint32_t local;
	int peer = host_stream(f, &local);
	assert_int_equal(handover(f, true, err, sizeof(err)), 0);
	/* The host peer's stream is closed: EOF, no fd kept. */
	char c;
	assert_int_equal(recv(peer, &c, 1, MSG_DONTWAIT), 0);
	close(peer);
	assert_int_equal(f->v->nr_conns, 0);
	assert_int_equal(f->v->listen_fd, -1);
	assert_false(path_exists(f->uds));
	/* The target's device listens on the same path. */
	struct vsock_spec s = {.cid = CID};
	snprintf(s.uds, sizeof(s.uds), "%s", f->uds);
	struct virtio_dev *t = virtio_vsock_create("virtio-vsock0", &s, err, sizeof(err));
	assert_non_null(t);
	close(host_dial(f->uds));
	/* While it does, the source cannot take back: a reason, no crash. */
	assert_int_equal(handover(f, false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot listen"));
	assert_true(f->v->released);
	virtio_vsock_destroy(t);
}

static void test_take_back_listens_and_resets(void **state)
{
	struct fx *f = *state;
	char err[256] = "";
	assert_int_equal(handover(f, true, err, sizeof(err)), 0);
	assert_int_equal(handover(f, false, err, sizeof(err)), 0);
	assert_false(f->v->released);
	assert_true(f->v->listen_fd >= 0);
	assert_true(f->v->reset_owed);
	/* Taken back twice (the controller retries): one listener. */
	int fd = f->v->listen_fd;
	assert_int_equal(handover(f, false, err, sizeof(err)), 0);
	assert_int_equal(f->v->listen_fd, fd);
	/* The guest's next event buffer gets the TRANSPORT_RESET. */
	memset(fake_mem_at(&f->fm, EV_DATA), 0xee, 8);
	guest_add(f, VSOCK_EVQ, EV_DATA, 8, true);
	virtio_vsock_poll(f->vdev);
	assert_false(f->v->reset_owed);
	uint32_t id;
	memcpy(&id, fake_mem_at(&f->fm, EV_DATA), 4);
	assert_int_equal(id, VIRTIO_VSOCK_EVENT_TRANSPORT_RESET);
	/* And a new host stream works. */
	uint32_t local;
	close(host_stream(f, &local));
}

static void test_foreign_file_kept(void **state)
{
	struct fx *f = *state;
	char err[256] = "";
	/* Someone replaced the socket file with their own. */
	assert_int_equal(unlink(f->uds), 0);
	int fd = open(f->uds, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(handover(f, true, err, sizeof(err)), 0);
	assert_true(path_exists(f->uds));
	assert_int_equal(handover(f, false, err, sizeof(err)), -1);
	assert_true(path_exists(f->uds));
	assert_int_equal(f->v->listen_fd, -1);
	/* Gone: the take-back's next try listens. */
	assert_int_equal(unlink(f->uds), 0);
	assert_int_equal(handover(f, false, err, sizeof(err)), 0);
	close(host_dial(f->uds));
}

static void test_symlink_kept(void **state)
{
	struct fx *f = *state;
	char err[256] = "", real[80];
	struct stat st;
	/* Our socket moved aside, a link to it at the path: the link is
	 * someone's file, not the one bind made. */
	snprintf(real, sizeof(real), "%s.real", f->uds);
	assert_int_equal(rename(f->uds, real), 0);
	assert_int_equal(symlink(real, f->uds), 0);
	assert_int_equal(handover(f, true, err, sizeof(err)), 0);
	assert_int_equal(lstat(f->uds, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_release_frees_the_path, mig_setup, teardown),
	    cmocka_unit_test_setup_teardown(test_take_back_listens_and_resets, mig_setup, teardown),
	    cmocka_unit_test_setup_teardown(test_foreign_file_kept, mig_setup, teardown),
	    cmocka_unit_test_setup_teardown(test_symlink_kept, mig_setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
