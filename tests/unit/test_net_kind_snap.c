// SPDX-License-Identifier: Apache-2.0
/* virtio-net's own snapshot section (dev_ops.save and restore) and its
 * hand-over at a migration's switch: a section round-trips onto a fresh
 * card of the same MAC; another MAC, or a section cut short anywhere, is
 * refused with the card as it was (moved from test_kind_snap.c: a test of
 * virtio-net may read its private state, make check-layers). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "devices/virtio-net/virtio_net_priv.h"
#include "kind_snap_fx.h"

static struct virtio_net *net_make(const uint8_t *mac, int *wire)
{
	struct tap taps[1];
	int sv[2];
	char err[200];
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	tap_from_fd(&taps[0], sv[0]);
	*wire = sv[1];
	struct virtio_net *n = virtio_net_create("virtio-net0", taps, 1, mac, err, sizeof(err));
	assert_non_null(n);
	return n;
}

static void test_net(void **state)
{
	(void)state;
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x42}, other[6] = {0x02, 0, 0, 0, 0, 7};
	struct dev_ops ops = {.save = virtio_net_save, .restore = virtio_net_restore};
	int w1, w2, w3;
	struct virtio_net *a = net_make(mac, &w1);
	uint8_t *p;
	size_t n = save(&ops, a, &p);
	/* vhost=on whose rings vhost does not run (no DRIVER_OK yet, or
	 * the built-in path after a fallback): the same section, nothing to
	 * fetch from the kernel. The running case needs /dev/vhost-net: the
	 * testbed's. */
	a->vhost_on = true;
	uint8_t *pv;
	size_t nv = save(&ops, a, &pv);
	assert_int_equal(nv, n);
	assert_memory_equal(pv, p, n);
	assert_false(a->vhost_running);
	free(pv);
	a->vhost_on = false;
	char err[200] = "";
	struct virtio_net *b = net_make(mac, &w2);
	assert_int_equal(virtio_net_restore(b, p, n, err, sizeof(err)), 0);
	cuts_refused(&ops, b, p, n);
	struct virtio_net *c = net_make(other, &w3);
	assert_int_equal(virtio_net_restore(c, p, n, err, sizeof(err)), -1);
	assert_string_equal(err, "virtio-net0: saved state refused: its MAC differs");
	virtio_net_destroy(a);
	virtio_net_destroy(b);
	virtio_net_destroy(c);
	close(w1);
	close(w2);
	close(w3);
	free(p);
}

/* A live migration's switch on one host: the source lets go of its tap
 * queue (a single-queue tap takes one process at a time), and a take back
 * that cannot reopen it is one line; a second release is harmless. */
static void test_net_handover(void **state)
{
	(void)state;
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x42};
	int w;
	char err[200] = "";
	struct virtio_net *a = net_make(mac, &w);
	snprintf(a->pairs[0].tap.name, sizeof(a->pairs[0].tap.name), "skiff-no-tap");
	assert_int_equal(virtio_net_handover(a, true, err, sizeof(err)), 0);
	assert_int_equal(a->pairs[0].tap.fd, -1);
	char b;
	assert_int_equal(recv(w, &b, 1, MSG_DONTWAIT), 0); /* the queue's other end: closed */
	assert_int_equal(virtio_net_handover(a, true, err, sizeof(err)), 0);
	assert_int_equal(virtio_net_handover(a, false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "skiff-no-tap"));
	assert_null(strchr(err, '\n'));
	assert_int_equal(a->pairs[0].tap.fd, -1);
	/* vhost's writes are in no dirty log: a Diff or a migration refuses. */
	assert_null(virtio_net_dirty_blind(a));
	a->vhost_on = true;
	assert_non_null(strstr(virtio_net_dirty_blind(a), "vhost=on"));
	a->vhost_on = false;
	virtio_net_destroy(a);
	close(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_net),
	    cmocka_unit_test(test_net_handover),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
