// SPDX-License-Identifier: Apache-2.0
/* Review of virtio-net's snapshot section, layout 2 (virtio_net_snap.c,
 * b243e99), as a hostile snapshot file would attack it where fuzzing
 * does not reach: the card's section is loaded before the transport's
 * (devmgr_restore), so its checks cannot see which features the driver
 * accepted. Each test is a finding's proof: it failed before the fix
 * named in its comment. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "devices/virtio-net/virtio_net_priv.h"
#include "fake_mem.h"

#define RAM_SIZE (4u << 20)
#define QSZ	 64
#define NP	 2
#define F(bit)	 (1ULL << (bit))
/* A driver that takes the control queue but not MQ: its control queue
 * is q2 (virtio 1.2 5.1.2), where a second pair's RX queue would be. */
#define NO_MQ                                                                                      \
	(F(VIRTIO_F_VERSION_1) | F(VIRTIO_NET_F_MAC) | F(VIRTIO_NET_F_MRG_RXBUF) |                 \
	 F(VIRTIO_NET_F_CTRL_VQ))
#define CTRLQ_NO_MQ 2u

static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x42};

static void fake_notify_queue(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev, (void)q;
}

static void fake_notify_config(struct virtio_dev *vdev)
{
	(void)vdev;
}

static const struct virtio_transport_ops fake_transport = {
    .notify_queue = fake_notify_queue,
    .notify_config = fake_notify_config,
};

static uint64_t ring(unsigned int q, unsigned int which)
{
	return 0x10000 + 0x4000 * (uint64_t)q + 0x1000 * which;
}

static uint16_t *g16(struct fake_mem *fm, uint64_t gpa)
{
	return fake_mem_at(fm, gpa);
}

/* Layout 2 as virtio_net_save writes it: layout, MAC and two zero
 * bytes, pairs, pairs enabled, RX and TX coalescing, held bits. */
static size_t section(uint8_t *out, uint32_t curr_pairs, uint32_t rx_max, uint32_t rx_us)
{
	uint32_t layout = 2, npairs = NP, zero = 0;
	size_t n = 0;
	memcpy(out + n, &layout, 4), n += 4;
	memcpy(out + n, mac, 6), n += 6;
	memset(out + n, 0, 2), n += 2;
	memcpy(out + n, &npairs, 4), n += 4;
	memcpy(out + n, &curr_pairs, 4), n += 4;
	memcpy(out + n, &rx_max, 4), n += 4;
	memcpy(out + n, &rx_us, 4), n += 4;
	memcpy(out + n, &zero, 4), n += 4; /* TX max_packets */
	memcpy(out + n, &zero, 4), n += 4; /* TX usecs */
	memcpy(out + n, &zero, 4), n += 4; /* held */
	return n;
}

/* Finding (review4, medium): a section enabling two pairs loaded onto a
 * card whose driver (in the transport's section, loaded after it) did
 * not accept MQ. The control queue would have refused VQ_PAIRS_SET
 * without MQ; the load took it, so pair 1 ran, and its receive queue is
 * q2, which without MQ is the control queue: frames from tap queue 1
 * were written into the driver's control commands, and the control queue
 * (ctrl_lock) and pair 1's receive (its rx_lock) both consumed one ring.
 * Coalescing the driver never accepted held its notifications back too.
 * Fixed in virtio_net.c's activate (virtio_net_ctrl_clamp): what the
 * accepted features do not allow is as at power-on. */
static void test_pairs_without_mq(void **state)
{
	(void)state;
	struct fake_mem fm;
	assert_int_equal(fake_mem_init(&fm, RAM_SIZE), 0);
	struct tap taps[NP];
	int wire[NP];
	char err[200] = "";
	for (unsigned int i = 0; i < NP; i++) {
		int sv[2];
		assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
		tap_from_fd(&taps[i], sv[0]);
		wire[i] = sv[1];
	}
	struct virtio_net *n = virtio_net_create("virtio-net0", taps, NP, mac, err, sizeof(err));
	assert_non_null(n);
	struct virtio_dev *v = &n->vdev;
	v->gm = &fm.gm;
	v->transport = &fake_transport;
	assert_int_equal(virtio_dev_init_queues(v), 0);
	atomic_store(&n->coal_watched, true);

	/* The card's section first, as devmgr_restore loads it. */
	uint8_t s[64];
	size_t len = section(s, NP, 8, 500000);
	if (virtio_net_restore(n, s, len, err, sizeof(err)) < 0)
		fail_msg("refused at the section (the fix may refuse it here too): %s", err);
	/* Then the transport's: a driver without MQ, its three queues, and
	 * DRIVER_OK. */
	v->driver_features = NO_MQ;
	for (unsigned int q = 0; q < 3; q++) {
		struct virtq *vq = &v->vqs[q];
		assert_int_equal(virtq_set_size(vq, QSZ), 0);
		assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_DESC, ring(q, 0)), 0);
		assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_AVAIL, ring(q, 1)), 0);
		assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_USED, ring(q, 2)), 0);
		assert_int_equal(virtq_set_features(vq, NO_MQ), 0);
		assert_int_equal(virtq_activate(vq, &fm.gm), 0);
	}
	assert_int_equal(v->ops->activate(v), 0);

	/* The driver's pending command on its control queue: header, data,
	 * ack (written by the device). */
	uint64_t cmd = 0x100000;
	struct virtq_desc d[3] = {{cmd, 2, VIRTQ_DESC_F_NEXT, 1},
				  {cmd + 64, 2, VIRTQ_DESC_F_NEXT, 2},
				  {cmd + 128, 1, VIRTQ_DESC_F_WRITE, 0}};
	d[2].len = 1526; /* room for a frame: whatever RX makes of the chain, it is not RX's */
	memcpy(fake_mem_at(&fm, ring(CTRLQ_NO_MQ, 0)), d, sizeof(d));
	*g16(&fm, ring(CTRLQ_NO_MQ, 1) + 4) = 0;
	*g16(&fm, ring(CTRLQ_NO_MQ, 1) + 2) = 1;

	/* A frame from the host on tap queue 1. */
	struct virtio_net_hdr_v1 h = {0};
	uint8_t frame[60] = {0x5a};
	struct iovec iov[2] = {{&h, sizeof(h)}, {frame, sizeof(frame)}};
	assert_int_equal(writev(wire[1], iov, 2), (ssize_t)(sizeof(h) + sizeof(frame)));
	virtio_net_tap_event(&n->pairs[1], EPOLLIN);

	uint16_t used = *g16(&fm, ring(CTRLQ_NO_MQ, 2) + 2);
	if (used || atomic_load(&n->curr_pairs) != 1)
		fail_msg("without MQ: %u pairs enabled, the control queue's used index %u "
			 "(a frame in a control command)",
			 atomic_load(&n->curr_pairs), used);
	/* Coalescing the driver did not accept holds nothing back. */
	assert_int_equal(atomic_load(&n->coal_usecs[VIRTIO_NET_RXQ]), 0);
	assert_int_equal(atomic_load(&n->coal_max[VIRTIO_NET_RXQ]), 0);

	virtio_net_destroy(n);
	for (unsigned int i = 0; i < NP; i++)
		close(wire[i]);
	fake_mem_free(&fm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pairs_without_mq),
	};
	return cmocka_run_group_tests_name("review_net_snap", tests, NULL, NULL);
}
