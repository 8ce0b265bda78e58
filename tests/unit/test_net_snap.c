// SPDX-License-Identifier: Apache-2.0
/* virtio-net's snapshot section (virtio_net_snap.c) with what the driver
 * set through the control queue: a two-pair card whose driver enabled
 * both pairs and set RX and TX coalescing, with an RX notification held,
 * saved, restored onto a fresh card with its queues moved as the
 * transport moves them: the same section saved again, the held
 * notification sent, pair 1 receiving and sending with the built-in path,
 * and with vhost=on both pairs' rings handed to vhost at their restored
 * positions. Every cut, the 16-byte section of layout 1, and every field
 * the control queue would have refused or no card leaves is refused in
 * one line with the card as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/vhost.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/snap.h"
#include "devices/virtio-net/virtio_net_priv.h"
#include "fake_mem.h"
#include "iothread/iothread.h"
#include "virtio/virtq_state.h"

#define RAM_SIZE (4u << 20)
#define QSZ	 64
#define NP	 2
#define NQ	 (2 * NP + 1)
#define CTRLQ	 (2 * NP)
#define BUF_GPA	 0x100000
#define HDR	 ((uint32_t)sizeof(struct virtio_net_hdr_v1))
#define W	 VIRTQ_DESC_F_WRITE
#define F(bit)	 (1ULL << (bit))
#define FEATURES                                                                                   \
	(F(VIRTIO_F_VERSION_1) | F(VIRTIO_NET_F_MAC) | F(VIRTIO_NET_F_MRG_RXBUF) |                 \
	 F(VIRTIO_NET_F_CTRL_VQ) | F(VIRTIO_NET_F_MQ) | F(VIRTIO_NET_F_NOTF_COAL))
#define SNAP_LEN 40

static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x42};

/* ---- the transport: counts notifications, hands queues to vhost ---- */

static unsigned int notifies[VIRTIO_MAX_QUEUES];
static unsigned int handoff_mask; /* queues handed to vhost, a bit each */

static void fake_notify_queue(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev;
	notifies[q]++;
}

static void fake_notify_config(struct virtio_dev *vdev)
{
	(void)vdev;
}

static int fake_handoff(struct virtio_dev *vdev, unsigned int q, int *kick, int *call)
{
	(void)vdev;
	handoff_mask |= 1u << q;
	*kick = *call = -1;
	return 0;
}

static void fake_takeback(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev;
	handoff_mask &= ~(1u << q);
}

static const struct virtio_transport_ops fake_transport = {
    .notify_queue = fake_notify_queue,
    .notify_config = fake_notify_config,
    .queue_handoff = fake_handoff,
    .queue_takeback = fake_takeback,
};

/* ---- /dev/vhost-net played on pair i's fake_vhost[i] ---- */

static int fake_vhost[NP] = {-1, -1};
static int vring_base[NP][2]; /* VHOST_SET_VRING_BASE's, -1 if none */

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	for (unsigned int i = 0; fd >= 0 && i < NP; i++) {
		if (fd != fake_vhost[i])
			continue;
		struct vhost_vring_state *st = arg;
		if (req == VHOST_SET_VRING_BASE)
			vring_base[i][st->index & 1] = (int)st->num;
		return 0;
	}
	return (int)syscall(SYS_ioctl, fd, req, arg);
}

/* ---- a card and its driver ---- */

struct card {
	struct virtio_net *n;
	struct fake_mem *fm;
	int wire[NP];	     /* the far end of each pair's tap queue */
	struct iothread *io; /* vhost=on: its tap queues leave it (never started) */
};

static uint64_t next_buf = BUF_GPA;

static uint64_t ring(unsigned int q, unsigned int which)
{
	return 0x10000 + 0x4000 * (uint64_t)q + 0x1000 * which;
}

static uint16_t *g16(struct fake_mem *fm, uint64_t gpa)
{
	return fake_mem_at(fm, gpa);
}

static uint16_t used_idx(struct fake_mem *fm, unsigned int q)
{
	return *g16(fm, ring(q, 2) + 2);
}

static struct card card_make(struct fake_mem *fm, bool vhost)
{
	struct card c = {.fm = fm};
	struct tap taps[NP];
	char err[200] = "";
	for (unsigned int i = 0; i < NP; i++) {
		int sv[2];
		assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
		tap_from_fd(&taps[i], sv[0]);
		c.wire[i] = sv[1];
	}
	c.n = virtio_net_create("virtio-net0", taps, NP, mac, err, sizeof(err));
	assert_non_null(c.n);
	struct virtio_dev *v = &c.n->vdev;
	v->gm = &fm->gm;
	v->transport = &fake_transport;
	assert_int_equal(virtio_dev_init_queues(v), 0);
	if (vhost) { /* as virtio_net_new_device sets it up */
		c.io = calloc(1, sizeof(*c.io));
		assert_int_equal(iothread_init(c.io, "net-snap"), 0);
		c.n->io = c.io;
		for (unsigned int i = 0; i < NP; i++) {
			fake_vhost[i] = eventfd(0, EFD_CLOEXEC);
			c.n->pairs[i].vhost.fd = fake_vhost[i];
		}
		c.n->vhost_on = true;
		v->host_features &= ~F(VIRTIO_NET_F_NOTF_COAL);
	}
	/* The test plays the I/O thread that watches the timers. */
	atomic_store(&c.n->coal_watched, true);
	return c;
}

static void card_free(struct card *c)
{
	for (unsigned int i = 0; c->io && i < NP; i++)
		fake_vhost[i] = -1; /* closed next: the number may come back */
	virtio_net_destroy(c->n);
	for (unsigned int i = 0; i < NP; i++)
		close(c->wire[i]);
	if (c->io) {
		iothread_destroy(c->io);
		free(c->io);
	}
}

/* The driver sets up every queue, then DRIVER_OK. */
static void driver_ok(struct card *c, uint64_t features)
{
	struct virtio_dev *v = &c->n->vdev;
	v->driver_features = features;
	for (unsigned int q = 0; q < NQ; q++) {
		struct virtq *vq = &v->vqs[q];
		assert_int_equal(virtq_set_size(vq, QSZ), 0);
		assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_DESC, ring(q, 0)), 0);
		assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_AVAIL, ring(q, 1)), 0);
		assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_USED, ring(q, 2)), 0);
		assert_int_equal(virtq_set_features(vq, features), 0);
		assert_int_equal(virtq_activate(vq, &c->fm->gm), 0);
	}
	assert_int_equal(v->ops->activate(v), 0);
}

/* Posts a chain (each buffer its own flags) on queue q, three descriptors
 * a chain; its buffers' addresses in gpa. */
static void post(struct fake_mem *fm, unsigned int q, const uint32_t *lens, const uint16_t *flags,
		 unsigned int cnt, uint64_t *gpa)
{
	uint16_t idx = *g16(fm, ring(q, 1) + 2);
	for (unsigned int i = 0; i < cnt; i++) {
		uint16_t d = (uint16_t)((3 * idx + i) % QSZ);
		gpa[i] = next_buf;
		next_buf += (lens[i] + 63) & ~63u;
		struct virtq_desc desc = {.addr = gpa[i],
					  .len = lens[i],
					  .flags = flags[i] | (i + 1 < cnt ? VIRTQ_DESC_F_NEXT : 0),
					  .next = (uint16_t)((d + 1) % QSZ)};
		memcpy(fake_mem_at(fm, ring(q, 0) + 16 * (uint64_t)d), &desc, sizeof(desc));
	}
	*g16(fm, ring(q, 1) + 4 + 2 * (uint64_t)(idx % QSZ)) = (uint16_t)(3 * idx % QSZ);
	*g16(fm, ring(q, 1) + 2) = (uint16_t)(idx + 1);
}

/* A control command as Linux lays it out; the ack. */
static uint8_t ctrl(struct card *c, uint8_t cls, uint8_t cmd, const void *data, uint32_t len)
{
	uint32_t lens[3] = {2, len, 1};
	uint16_t flags[3] = {0, 0, W};
	uint64_t g[3];
	post(c->fm, CTRLQ, lens, flags, 3, g);
	uint8_t hdr[2] = {cls, cmd};
	memcpy(fake_mem_at(c->fm, g[0]), hdr, 2);
	memcpy(fake_mem_at(c->fm, g[1]), data, len);
	c->n->vdev.ops->queue_notify(&c->n->vdev, CTRLQ);
	return *(uint8_t *)fake_mem_at(c->fm, g[2]);
}

static void coal_set(struct card *c, uint8_t cmd, uint32_t max_packets, uint32_t usecs)
{
	uint32_t d[2] = {max_packets, usecs}; /* little-endian host: as the driver's */
	assert_int_equal(ctrl(c, VIRTIO_NET_CTRL_NOTF_COAL, cmd, d, 8), VIRTIO_NET_OK);
}

/* The driver posts a receive buffer on pair i. */
static void rx_buf(struct card *c, unsigned int i)
{
	uint32_t len = 1526;
	uint16_t fl = W;
	uint64_t gpa;
	post(c->fm, 2 * i, &len, &fl, 1, &gpa);
}

/* A frame from the host on pair i's tap queue, a buffer posted for it.
 * RX then has buffers left (never starved: that notifies at once). */
static void rx_frame(struct card *c, unsigned int i)
{
	rx_buf(c, i);
	struct virtio_net_hdr_v1 h = {0};
	uint8_t frame[60] = {0x5a};
	struct iovec iov[2] = {{&h, HDR}, {frame, sizeof(frame)}};
	assert_int_equal(writev(c->wire[i], iov, 2), HDR + sizeof(frame));
	virtio_net_tap_event(&c->n->pairs[i], EPOLLIN);
}

/* The driver sends a 60-byte frame on pair i; it reaches tap queue i. */
static void tx_frame(struct card *c, unsigned int i)
{
	uint32_t len = HDR + 60;
	uint16_t fl = 0;
	uint64_t gpa;
	post(c->fm, 2 * i + 1, &len, &fl, 1, &gpa);
	memset(fake_mem_at(c->fm, gpa), 0, HDR);
	memset(fake_mem_at(c->fm, gpa + HDR), 0x77, 60);
	c->n->vdev.ops->queue_notify(&c->n->vdev, 2 * i + 1);
	uint8_t pkt[256];
	assert_int_equal(recv(c->wire[i], pkt, sizeof(pkt), MSG_DONTWAIT), HDR + 60);
	assert_int_equal(pkt[HDR], 0x77);
}

/* The driver of card c enables both pairs and sets RX and TX coalescing;
 * a frame on pair 1 leaves its RX notification held. */
static void drive(struct card *c)
{
	uint16_t two = NP;
	assert_int_equal(ctrl(c, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, &two, 2),
			 VIRTIO_NET_OK);
	coal_set(c, VIRTIO_NET_CTRL_NOTF_COAL_RX_SET, 8, 500);
	coal_set(c, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, 16, 250000);
	memset(notifies, 0, sizeof(notifies));
	rx_buf(c, 1);
	rx_frame(c, 1);
	assert_int_equal(used_idx(c->fm, 2), 1);
	assert_int_equal(notifies[2], 0);
	assert_true(c->n->pairs[1].rx_coal.armed);
}

static size_t save(struct virtio_net *n, uint8_t **out)
{
	struct snap_writer w;
	struct snap_image img;
	char err[200] = "";
	size_t len;
	snap_writer_init(&w);
	assert_int_equal(virtio_net_save(n, &w, SNAP_ID_DEVICE, 2, err, sizeof(err)), 0);
	const uint8_t *b = snap_writer_image(&w, &len);
	assert_int_equal(snap_parse(&img, b, len, err, sizeof(err)), 0);
	const struct snap_section *s = snap_find(&img, SNAP_ID_DEVICE, 2);
	*out = calloc(1, s->len + 1);
	memcpy(*out, s->data, s->len);
	size_t n_ = s->len;
	snap_image_free(&img);
	snap_writer_free(&w);
	return n_;
}

/* What a load does: the memory file, the queues (the transport's
 * section), the card's own section, then the transport's DRIVER_OK. */
static void load(struct card *a, struct card *b, const uint8_t *p, size_t n)
{
	char err[200] = "";
	memcpy(b->fm->ram, a->fm->ram, RAM_SIZE);
	struct virtio_dev *v = &b->n->vdev;
	v->driver_features = a->n->vdev.driver_features;
	for (unsigned int q = 0; q < NQ; q++) {
		struct virtq_state s;
		virtq_state_save(&a->n->vdev.vqs[q], &s);
		assert_int_equal(virtq_state_restore(&v->vqs[q], v->gm, &s, err, sizeof(err)), 0);
	}
	assert_int_equal(virtio_net_restore(b->n, p, n, err, sizeof(err)), 0);
	assert_int_equal(v->ops->activate(v), 0);
}

/* The card as built: one pair, no coalescing, nothing held. */
static void as_built(const struct virtio_net *n)
{
	assert_int_equal(atomic_load(&n->curr_pairs), 1);
	assert_false(n->pairs[1].tap_attached);
	for (unsigned int d = 0; d < 2; d++) {
		assert_int_equal(atomic_load(&n->coal_max[d]), 0);
		assert_int_equal(atomic_load(&n->coal_usecs[d]), 0);
	}
	for (unsigned int i = 0; i < NP; i++)
		assert_false(n->pairs[i].rx_coal.armed || n->pairs[i].tx_coal.armed);
}

static void test_round_trip(void **state)
{
	(void)state;
	struct fake_mem fa, fb;
	assert_int_equal(fake_mem_init(&fa, RAM_SIZE), 0);
	assert_int_equal(fake_mem_init(&fb, RAM_SIZE), 0);
	struct card a = card_make(&fa, false), b = card_make(&fb, false);
	driver_ok(&a, FEATURES);
	drive(&a);
	uint8_t *p, *p2;
	size_t n = save(a.n, &p);
	assert_int_equal(n, SNAP_LEN);
	load(&a, &b, p, n);

	/* What the driver set, and the held notification, saved alike. */
	assert_int_equal(atomic_load(&b.n->curr_pairs), 2);
	assert_true(b.n->pairs[1].tap_attached);
	assert_int_equal(atomic_load(&b.n->coal_max[VIRTIO_NET_RXQ]), 8);
	assert_int_equal(atomic_load(&b.n->coal_usecs[VIRTIO_NET_RXQ]), 500);
	assert_int_equal(atomic_load(&b.n->coal_max[VIRTIO_NET_TXQ]), 16);
	assert_int_equal(atomic_load(&b.n->coal_usecs[VIRTIO_NET_TXQ]), 250000);
	assert_int_equal(save(b.n, &p2), n);
	assert_memory_equal(p, p2, n);
	free(p2);

	/* The held notification goes out at the timer's first expiry. */
	struct virtio_net_coal *c = &b.n->pairs[1].rx_coal;
	assert_true(c->armed);
	struct pollfd pfd = {.fd = c->tfd, .events = POLLIN};
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	memset(notifies, 0, sizeof(notifies));
	virtio_net_coal_event(c, EPOLLIN);
	assert_int_equal(notifies[2], 1);
	assert_false(c->armed);

	/* Pair 1 runs: a frame in, with RX coalescing as set (held), and a
	 * frame out on its own tap queue, its notification held for TX's. */
	rx_frame(&b, 1);
	assert_int_equal(used_idx(&fb, 2), 2);
	assert_int_equal(notifies[2], 1);
	assert_true(c->armed);
	tx_frame(&b, 1);
	assert_int_equal(used_idx(&fb, 3), 1);
	assert_int_equal(notifies[3], 0);
	assert_true(b.n->pairs[1].tx_coal.armed);
	assert_int_equal(used_idx(&fa, 3), 0); /* not the old card's */

	card_free(&a);
	card_free(&b);
	free(p);
	fake_mem_free(&fa);
	fake_mem_free(&fb);
}

/* vhost=on (no coalescing offered): both pairs' rings go to their vhost
 * at the load's activate, each at the position the queues restored. */
static void test_vhost_round_trip(void **state)
{
	(void)state;
	struct fake_mem fa, fb;
	assert_int_equal(fake_mem_init(&fa, RAM_SIZE), 0);
	assert_int_equal(fake_mem_init(&fb, RAM_SIZE), 0);
	uint64_t features = FEATURES & ~F(VIRTIO_NET_F_NOTF_COAL);
	struct card a = card_make(&fa, false);
	a.n->vdev.host_features &= ~F(VIRTIO_NET_F_NOTF_COAL);
	driver_ok(&a, features);
	uint16_t two = NP;
	assert_int_equal(ctrl(&a, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, &two, 2),
			 VIRTIO_NET_OK);
	rx_buf(&a, 1);
	rx_frame(&a, 1);
	tx_frame(&a, 1);
	tx_frame(&a, 1);
	uint8_t *p;
	size_t n = save(a.n, &p);
	struct card b = card_make(&fb, true);
	memset(vring_base, 0xff, sizeof(vring_base));
	handoff_mask = 0;
	load(&a, &b, p, n);
	assert_true(b.n->vhost_running);
	assert_true(b.n->pairs[0].vhost_running && b.n->pairs[1].vhost_running);
	assert_int_equal(handoff_mask, 0xf); /* every data queue, not the control queue */
	assert_int_equal(atomic_load(&b.n->curr_pairs), 2);
	assert_true(b.n->pairs[1].tap_attached);
	assert_int_equal(vring_base[0][0], 0);
	assert_int_equal(vring_base[0][1], 0);
	assert_int_equal(vring_base[1][0], 1);
	assert_int_equal(vring_base[1][1], 2);
	b.n->vdev.ops->reset(&b.n->vdev);
	assert_int_equal(atomic_load(&b.n->curr_pairs), 1);
	card_free(&a);
	card_free(&b);
	free(p);
	fake_mem_free(&fa);
	fake_mem_free(&fb);
}

static void refused(struct virtio_net *n, const void *p, size_t len, const char *why)
{
	char err[200] = "", want[200];
	assert_int_equal(virtio_net_restore(n, p, len, err, sizeof(err)), -1);
	if (why) {
		snprintf(want, sizeof(want), "virtio-net0: saved state refused: %s", why);
		assert_string_equal(err, want);
	}
	assert_true(err[0] && !strchr(err, '\n'));
	as_built(n);
}

static void test_hostile_refused(void **state)
{
	(void)state;
	struct fake_mem fm;
	assert_int_equal(fake_mem_init(&fm, RAM_SIZE), 0);
	struct card a = card_make(&fm, false), b = card_make(&fm, false);
	driver_ok(&a, FEATURES);
	drive(&a);
	uint8_t *p;
	size_t n = save(a.n, &p);
	uint8_t *buf = calloc(1, n + 1);
	for (size_t k = 0; k <= n + 1; k++) {
		memcpy(buf, p, n);
		if (k != n)
			refused(b.n, buf, k, k == 16 ? NULL : "its size is wrong");
	}
	/* Layout 1, as an older skiff wrote it: MAC, zero, pairs, enabled. */
	uint8_t old[16] = {0};
	uint32_t np = NP, one = 1;
	memcpy(old, mac, 6);
	memcpy(old + 8, &np, 4);
	memcpy(old + 12, &one, 4);
	refused(b.n, old, sizeof(old),
		"its layout is an older skiff's, without the control queue's state");
	static const struct {
		size_t at;
		uint32_t v;
		const char *why;
	} bad[] = {
	    {0, 1, "its layout is unknown"},
	    {0, 4, "its layout is unknown"},
	    {4, 0xffffffff, "its MAC differs"},
	    {8, 0x00010000, "its MAC differs"}, /* the zero after it */
	    {12, 3, "its queue pair count differs"},
	    {16, 0, "its enabled queue pair count is out of range"},
	    {16, 3, "its enabled queue pair count is out of range"},
	    {24, VIRTIO_NET_COAL_USECS_MAX + 1, "its coalescing usecs are out of range"},
	    {32, 0xffffffff, "its coalescing usecs are out of range"},
	    {36, 1u << CTRLQ, "it holds a notification for a queue it does not have"},
	    {36, 1u << 30, "it holds a notification for a queue it does not have"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(buf, p, n);
		uint32_t v = bad[i].v;
		if (bad[i].at == 8) /* keep the MAC's last two bytes */
			v |= (uint32_t)buf[8] | (uint32_t)buf[9] << 8;
		memcpy(buf + bad[i].at, &v, 4);
		refused(b.n, buf, n, bad[i].why);
	}
	/* Bit 31 (the TX coalescing is the card's own) is layout 3's: in
	 * layout 2 it is a queue this card does not have. */
	memcpy(buf, p, n);
	uint32_t two = 2, held = 1u << 31;
	memcpy(buf, &two, 4);
	memcpy(buf + 36, &held, 4);
	refused(b.n, buf, n, "it holds a notification for a queue it does not have");
	/* Coalescing onto a card that offers none (vhost=on); without it the
	 * same card takes the section. */
	struct card v = card_make(&fm, true);
	refused(v.n, p, n, "it has coalescing state, and this card offers no coalescing");
	memcpy(buf, p, n);
	memset(buf + 20, 0, 16);
	refused(v.n, buf, n, "it has coalescing state, and this card offers no coalescing");
	memset(buf + 36, 0, 4);
	char err[200] = "";
	assert_int_equal(virtio_net_restore(v.n, buf, n, err, sizeof(err)), 0);
	assert_int_equal(atomic_load(&v.n->curr_pairs), 2);
	card_free(&v);
	/* The kernel refusing pair 1's tap queue (TUNSETQUEUE on a socket):
	 * one line, the card as it was. */
	b.n->pairs[1].tap.is_tun = b.n->pairs[1].tap.multi_queue = true;
	assert_int_equal(virtio_net_restore(b.n, p, n, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "virtio-net0: cannot enable 2 queue pairs"));
	assert_null(strchr(err, '\n'));
	as_built(b.n);
	free(buf);
	free(p);
	card_free(&a);
	card_free(&b);
	fake_mem_free(&fm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_vhost_round_trip),
	    cmocka_unit_test(test_hostile_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
