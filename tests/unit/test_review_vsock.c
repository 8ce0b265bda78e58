// SPDX-License-Identifier: Apache-2.0
/* Review of virtio-vsock (src/devices/virtio-vsock/) as a hostile local
 * client of its Unix socket and a hostile guest driver would attack it.
 * Each test is a finding's proof: it failed before the fix named in its
 * comment. The fixture is test_virtio_vsock.c's: a fake guest RAM, real
 * virtqueues, real Unix sockets in a temporary directory, and no device
 * thread (the test polls where the thread would wake). */
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
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "devices/virtio-vsock/virtio_vsock.h"
#include "devices/virtio-vsock/virtio_vsock_priv.h"
#include "fake_mem.h"
#include "virtio/virtio_dev.h"

#include "vsock_fx.h"

/* ---- findings ---- */

/* Finding 1 (medium, a local client): a client that wrote part of a
 * CONNECT line and hung up stayed in VS_HOST_LINE for ever. The peek
 * still saw the unread bytes (not EOF) and the edge-triggered socket
 * raised no further event, so its fd and its slot leaked; VSOCK_MAX_CONNS
 * such clients refused every later stream both ways. Fix: host_line takes
 * a hang-up without a whole line as the end of that client. */
static void test_partial_line_then_hangup(void **state)
{
	struct fx *f = *state;
	/* Seen before the hang-up, then the hang-up's own edge. */
	int fd = host_dial(f->uds);
	assert_int_equal(write(fd, "CONN", 4), 4);
	virtio_vsock_poll(f->vdev);
	assert_int_equal(f->v->nr_conns, 1);
	close(fd);
	virtio_vsock_poll(f->vdev);
	/* Gone before the accept: the line and the hang-up in one go. */
	fd = host_dial(f->uds);
	assert_int_equal(write(fd, "CONNECT 52", 10), 10);
	assert_int_equal(shutdown(fd, SHUT_WR), 0);
	virtio_vsock_poll(f->vdev);
	virtio_vsock_poll(f->vdev);
	assert_int_equal(f->v->nr_conns, 0);
	assert_int_equal(counter(f, "host_bad_lines"), 2);
	/* The half-closed one is closed on our side too: EOF or a reset (its
	 * bytes were never read), not a wait. */
	assert_true(host_readable(fd));
	char c;
	assert_true(read(fd, &c, 1) <= 0);
	close(fd);
}

/* Finding 2 (low, a guest): a second REQUEST for an open stream's ports
 * was answered with a RST (the guest forgets the stream) while the device
 * kept the stream and its host socket: the host peer waited for ever on a
 * stream nobody had, holding a slot. Linux resets the stream in that case
 * (virtio_transport_recv_connected). Fix: the stream is reset. */
static void test_request_on_open_stream(void **state)
{
	struct fx *f = *state;
	rx_post(f, 16);
	int lfd;
	int a = guest_stream(f, &lfd);
	assert_int_equal(f->v->nr_conns, 1);
	tx_send(f, ghdr(VIRTIO_VSOCK_OP_REQUEST, 5000, 1234), NULL);
	struct virtio_vsock_hdr h = expect_op(f, VIRTIO_VSOCK_OP_RST);
	assert_int_equal(h.src_port, 1234);
	assert_int_equal(h.dst_port, 5000);
	assert_int_equal(f->v->nr_conns, 0);
	assert_true(host_readable(a)); /* EOF, never a wait */
	char c;
	assert_int_equal(read(a, &c, 1), 0);
	close(a);
	close(lfd);
}

/* Finding 3 (medium, a local client): clients that connect and never send
 * their CONNECT line each held a slot for ever; VSOCK_MAX_CONNS of them
 * (any process that may open the socket) refused every guest REQUEST, so
 * the guest's streams to the host depended on the goodwill of every local
 * client. Fix: at most VSOCK_LINE_WAIT_MAX clients wait for their line;
 * more are closed at once (counted as refused). */
static void test_silent_clients_starve_guest(void **state)
{
	struct fx *f = *state;
	enum { N = VSOCK_MAX_CONNS };
	/* Both ends of N streams live in this process: 1024 fds is a common
	 * soft limit, the hard one is higher. */
	struct rlimit rl;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < 2 * N + 64) {
		rl.rlim_cur = rl.rlim_max < 2 * N + 64 ? rl.rlim_max : 2 * N + 64;
		assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
		if (rl.rlim_cur < 2 * N + 64)
			skip(); /* the host allows no more: nothing to prove here */
	}
	int *fds = calloc(N, sizeof(int));
	assert_non_null(fds);
	for (int i = 0; i < N; i++) {
		fds[i] = host_dial(f->uds);
		if (i % 16 == 15) /* the device accepts 16 a turn: the backlog never fills */
			virtio_vsock_poll(f->vdev);
	}
	virtio_vsock_poll(f->vdev);
	rx_post(f, 16);
	int lfd;
	int a = guest_stream(f, &lfd); /* RESPONSE, not RST */
	close(a);
	close(lfd);
	for (int i = 0; i < N; i++)
		close(fds[i]);
	free(fds);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_partial_line_then_hangup),
	    T(test_request_on_open_stream),
	    T(test_silent_clients_starve_guest),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
