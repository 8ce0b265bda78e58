// SPDX-License-Identifier: Apache-2.0
/* Unit tests for virtio-net (src/devices/virtio-net/virtio_net*.c, src/net/): --net
 * SPEC parsing, and the packet paths with the test playing the guest
 * driver on fake guest RAM and a SOCK_SEQPACKET socketpair standing in for
 * the tap (one packet per message, header included, as a tap with
 * IFF_VNET_HDR). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/if_tun.h>
#include <linux/vhost.h>
#include <sys/eventfd.h>

#include "devices/virtio-net/virtio_net.h"
#include "devices/virtio-net/virtio_net_priv.h"
#include "devices/virtio-net/virtio_net_spec.h"
#include "fake_mem.h"
#include "net/tap.h"

#define RAM_SIZE (4u << 20)
#define QSZ	 256
#define BUF_GPA	 0x100000 /* guest buffers from here up */
#define W	 VIRTQ_DESC_F_WRITE
#define HDR	 VIRTIO_NET_HDR_LEN

#define F(bit) (1ULL << (bit))
#define F_BASE                                                                                     \
	(F(VIRTIO_F_VERSION_1) | F(VIRTIO_NET_F_MAC) | F(VIRTIO_NET_F_STATUS) |                    \
	 F(VIRTQ_F_EVENT_IDX))
#define F_OFFLOADS                                                                                 \
	(F(VIRTIO_NET_F_CSUM) | F(VIRTIO_NET_F_GUEST_CSUM) | F(VIRTIO_NET_F_HOST_TSO4) |           \
	 F(VIRTIO_NET_F_HOST_TSO6) | F(VIRTIO_NET_F_GUEST_TSO4) | F(VIRTIO_NET_F_GUEST_TSO6))
#define F_ALL (F_BASE | F_OFFLOADS | F(VIRTIO_NET_F_MRG_RXBUF))

/* ---- a readv that overstates its length (the device must not trust it) ---- */

static ssize_t readv_extra;
static int readv_cnt; /* the last call's iovec count that read a frame */

/* readv on gate_fd waits until the test opens the gate: an RX run the
 * test holds in the middle, its lock taken. */
static int gate_fd = -1;
static bool gate_entered, gate_open;
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;

ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	pthread_mutex_lock(&gate_mu);
	if (fd == gate_fd) {
		gate_entered = true;
		pthread_cond_broadcast(&gate_cv);
		while (!gate_open)
			pthread_cond_wait(&gate_cv, &gate_mu);
	}
	pthread_mutex_unlock(&gate_mu);
	ssize_t r = syscall(SYS_readv, fd, iov, cnt);
	if (r > 0)
		readv_cnt = cnt;
	return r > 0 ? r + readv_extra : r;
}

/* ---- a tap that takes any packet (the real one would, up to its limits) ---- */

static int sink_fd = -1; /* writev on this fd succeeds without sending */
static size_t sink_last;
static unsigned int sink_count;

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	if (fd != sink_fd || fd < 0)
		return syscall(SYS_writev, fd, iov, cnt);
	size_t total = 0;
	for (int i = 0; i < cnt; i++)
		total += iov[i].iov_len;
	sink_last = total;
	sink_count++;
	return (ssize_t)total;
}

/* ---- the transport's side: the real virtio_notify_if_needed calls this ---- */

static unsigned int notifies[VIRTIO_MAX_QUEUES];

static void fake_notify_queue(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev;
	if (q < VIRTIO_MAX_QUEUES)
		notifies[q]++;
}

static void fake_notify_config(struct virtio_dev *vdev)
{
	(void)vdev;
}

/* As Linux maps a card's vectors: one pair's three queues share one, so
 * every interrupt sent changes it; with more pairs each queue has its
 * own (fake_irq_seq_off: a transport that cannot say). */
static bool fake_irq_seq_off;

static int fake_irq_seq(struct virtio_dev *vdev, unsigned int q, uint64_t *seq)
{
	if (fake_irq_seq_off || q >= VIRTIO_MAX_QUEUES)
		return -1;
	*seq = notifies[q];
	for (unsigned int i = 0; vdev->num_queues == 3 && i < VIRTIO_MAX_QUEUES; i++)
		*seq += i == q ? 0 : notifies[i];
	return 0;
}

static const struct virtio_transport_ops fake_transport = {
    .notify_queue = fake_notify_queue,
    .notify_config = fake_notify_config,
    .queue_irq_seq = fake_irq_seq,
};

/* ---- an ioctl that plays /dev/vhost-net on fake_vhost_fd ---- */

static int fake_vhost_fd = -1;
static unsigned int fake_vhost_refuse_ring = ~0u; /* its VHOST_SET_VRING_NUM fails */
static bool fake_vhost_base_unknown;		  /* VHOST_GET_VRING_BASE fails */
static uint16_t fake_vhost_base[2];		  /* what it answers */

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (fd < 0 || fd != fake_vhost_fd)
		return (int)syscall(SYS_ioctl, fd, req, arg);
	struct vhost_vring_state *st = arg;
	if ((req == VHOST_SET_VRING_NUM && st->index == fake_vhost_refuse_ring) ||
	    (req == VHOST_GET_VRING_BASE && fake_vhost_base_unknown)) {
		errno = EINVAL;
		return -1;
	}
	if (req == VHOST_GET_VRING_BASE)
		st->num = fake_vhost_base[st->index & 1];
	return 0;
}

/* A transport that can hand queues off (vhost=on): the handoff fails for
 * queues from handoff_fail_from on; counts what the device asked. */
static unsigned int handoff_fail_from, handoffs, takebacks;
static unsigned int handoff_mask;	/* the queues handed off, a bit each */
static unsigned int offload_at_handoff; /* the tap's, when vhost took over */

static int fake_queue_handoff(struct virtio_dev *vdev, unsigned int q, int *kick, int *call)
{
	offload_at_handoff =
	    ((struct virtio_net *)((char *)vdev - offsetof(struct virtio_net, vdev)))
		->pairs[0]
		.tap.offload;
	if (q >= handoff_fail_from)
		return -1;
	handoffs++;
	handoff_mask |= 1u << q;
	*kick = *call = -1;
	return 0;
}

static void fake_queue_takeback(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev;
	(void)q;
	takebacks++;
}

static const struct virtio_transport_ops fake_vhost_transport = {
    .notify_queue = fake_notify_queue,
    .notify_config = fake_notify_config,
    .queue_handoff = fake_queue_handoff,
    .queue_takeback = fake_queue_takeback,
};

/* ---- fixture ---- */

struct gq { /* the guest's view of one queue */
	uint64_t desc, avail, used;
	uint16_t avail_idx, next_desc;
	uint16_t size;
};

#define NQ_MAX (2 * VIRTIO_NET_PAIRS_MAX + 1)

struct fx {
	struct fake_mem fm;
	struct virtio_net *n;
	int wire;			 /* the far end of the "tap" (pair 0's) */
	int wires[VIRTIO_NET_PAIRS_MAX]; /* every pair's, wires[0] == wire */
	struct gq q[NQ_MAX];
	uint64_t next_buf;
	int broken_calls;
	uint16_t rx_size; /* 0: QSZ */
};

/* Pair 0, the only one of a single-queue device. */
#define P0(f) (&(f)->n->pairs[0])

static void on_broken(struct virtq *vq, void *opaque)
{
	struct fx *f = opaque;
	(void)vq;
	f->broken_calls++;
}

static uint16_t *g16(struct fx *f, uint64_t gpa)
{
	return fake_mem_at(&f->fm, gpa);
}

static void queue_config(struct fx *f, unsigned int qi, uint64_t features)
{
	struct virtq *vq = &f->n->vdev.vqs[qi];
	struct gq *g = &f->q[qi];
	g->desc = 0x10000 + 0x10000 * (uint64_t)qi;
	g->avail = g->desc + 0x1000;
	g->used = g->desc + 0x2000;
	g->avail_idx = g->next_desc = 0;
	g->size = qi == VIRTIO_NET_RXQ && f->rx_size ? f->rx_size : QSZ;
	memset(fake_mem_at(&f->fm, g->desc), 0, 0x3000); /* a new driver's rings */
	assert_int_equal(virtq_init(vq, qi % 2 ? "net tx" : "net rx", QSZ, on_broken, f), 0);
	assert_int_equal(virtq_set_size(vq, g->size), 0);
	assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_DESC, g->desc), 0);
	assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_AVAIL, g->avail), 0);
	assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_USED, g->used), 0);
	assert_int_equal(virtq_set_features(vq, features), 0);
	assert_int_equal(virtq_activate(vq, &f->fm.gm), 0);
}

/* Creates a device of npairs pairs over a socketpair each, the driver
 * sets up every queue (2 for one pair, 2N + 1 for more) and activates it
 * with features. */
static void fx_start_pairs(struct fx *f, uint64_t features, unsigned int npairs)
{
	char err[200];
	struct tap taps[VIRTIO_NET_PAIRS_MAX];
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x42};

	for (unsigned int i = 0; i < npairs; i++) {
		int sv[2];
		assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
		tap_from_fd(&taps[i], sv[0]);
		f->wires[i] = sv[1];
	}
	f->wire = f->wires[0];
	f->n = virtio_net_create("virtio-net0", taps, npairs, mac, err, sizeof(err));
	assert_non_null(f->n);
	struct virtio_dev *v = &f->n->vdev;
	v->gm = &f->fm.gm;
	v->transport = &fake_transport;
	v->driver_features = features;
	pthread_mutex_init(&v->lock, NULL);
	for (unsigned int q = 0; q < v->num_queues; q++)
		queue_config(f, q, features);
	assert_int_equal(v->ops->activate(v), 0);
	memset(notifies, 0, sizeof(notifies));
}

/* Creates the device over a socketpair and activates it with features. */
static void fx_start(struct fx *f, uint64_t features)
{
	fx_start_pairs(f, features, 1);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || fake_mem_init(&f->fm, RAM_SIZE) != 0)
		return -1;
	f->next_buf = BUF_GPA;
	f->wire = -1;
	for (unsigned int i = 0; i < VIRTIO_NET_PAIRS_MAX; i++)
		f->wires[i] = -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	sink_fd = -1;
	sink_count = 0;
	sink_last = 0;
	virtio_net_destroy(f->n);
	for (unsigned int i = 0; i < VIRTIO_NET_PAIRS_MAX; i++)
		if (f->wires[i] >= 0)
			close(f->wires[i]);
	fake_mem_free(&f->fm);
	free(f);
	return 0;
}

/* ---- the guest driver ---- */

static uint64_t buf_alloc(struct fx *f, uint32_t len)
{
	uint64_t gpa = f->next_buf;
	f->next_buf += (len + 63) & ~63u;
	assert_true(f->next_buf <= RAM_SIZE);
	return gpa;
}

/* Posts a chain of n buffers of the given lengths; returns its head. */
static uint16_t post(struct fx *f, unsigned int qi, const uint32_t *lens, unsigned int cnt,
		     uint16_t flags, uint64_t *gpas)
{
	struct gq *g = &f->q[qi];
	uint16_t head = g->next_desc;
	for (unsigned int i = 0; i < cnt; i++) {
		uint16_t idx = g->next_desc++ % g->size;
		uint64_t gpa = buf_alloc(f, lens[i]);
		if (gpas)
			gpas[i] = gpa;
		struct virtq_desc d = {.addr = gpa,
				       .len = lens[i],
				       .flags = flags | (i + 1 < cnt ? VIRTQ_DESC_F_NEXT : 0),
				       .next = (uint16_t)((idx + 1) % g->size)};
		memcpy(fake_mem_at(&f->fm, g->desc + 16 * (uint64_t)idx), &d, sizeof(d));
	}
	*g16(f, g->avail + 4 + 2 * (uint64_t)(g->avail_idx % g->size)) = head % g->size;
	g->avail_idx++;
	*g16(f, g->avail + 2) = g->avail_idx;
	return head % g->size;
}

static uint16_t post1(struct fx *f, unsigned int qi, uint32_t len, uint16_t flags, uint64_t *gpa)
{
	return post(f, qi, &len, 1, flags, gpa);
}

static uint16_t used_idx(struct fx *f, unsigned int qi)
{
	return *g16(f, f->q[qi].used + 2);
}

static struct virtq_used_elem used_elem(struct fx *f, unsigned int qi, uint16_t slot)
{
	struct virtq_used_elem e;
	memcpy(&e, fake_mem_at(&f->fm, f->q[qi].used + 4 + 8 * (uint64_t)(slot % f->q[qi].size)),
	       sizeof(e));
	return e;
}

/* With EVENT_IDX: the guest's next avail index triggers a kick. */
static bool kick_armed(struct fx *f, unsigned int qi)
{
	return *g16(f, f->q[qi].used + 4 + 8 * (uint64_t)f->q[qi].size) == f->q[qi].avail_idx;
}

/* ---- the wire ---- */

static void wire_send(struct fx *f, const struct virtio_net_hdr_v1 *h, const uint8_t *data,
		      size_t len)
{
	struct iovec iov[2] = {{(void *)h, HDR}, {(void *)data, len}};
	assert_int_equal(writev(f->wire, iov, 2), (ssize_t)(HDR + len));
}

static void fill_pattern(uint8_t *p, size_t len, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + seed);
}

/* Bytes waiting for the device on its end of the socketpair. */
static ssize_t tap_queued(struct fx *f)
{
	char b[1];
	return recv(P0(f)->tap.fd, b, sizeof(b), MSG_PEEK | MSG_DONTWAIT | MSG_TRUNC);
}

/* ---- --net SPEC ---- */

static void test_spec_good(void **state)
{
	(void)state;
	struct net_spec s;
	char err[200];
	assert_int_equal(net_spec_parse("tap=tap0", &s, err, sizeof(err)), 0);
	assert_string_equal(s.tap, "tap0");
	assert_false(s.has_mac);
	assert_int_equal(net_spec_parse("tap=tap1,mac=52:54:00:AB:cd:0f", &s, err, sizeof(err)), 0);
	assert_string_equal(s.tap, "tap1");
	assert_true(s.has_mac);
	static const uint8_t want[6] = {0x52, 0x54, 0x00, 0xab, 0xcd, 0x0f};
	assert_memory_equal(s.mac, want, 6);
	assert_int_equal(net_spec_parse("mac=02:00:00:00:00:01,tap=x", &s, err, sizeof(err)), 0);
	assert_string_equal(s.tap, "x");
	assert_int_equal(net_spec_parse("tap=123456789012345", &s, err, sizeof(err)), 0);

	uint8_t mac[6];
	char str[NET_MAC_STRLEN];
	net_mac_default(3, mac);
	net_mac_format(mac, str);
	assert_string_equal(str, "02:73:6b:69:66:03");
	assert_int_equal(mac[0] & 1, 0); /* unicast */
	assert_int_equal(mac[0] & 2, 2); /* locally administered */
}

/* spec must be refused with a message containing what. */
static void expect_bad_spec(const char *spec, const char *what)
{
	struct net_spec s;
	char err[200] = "";
	assert_int_equal(net_spec_parse(spec, &s, err, sizeof(err)), -1);
	if (!strstr(err, what))
		fail_msg("spec '%s': message '%s' lacks '%s'", spec, err, what);
	assert_null(strchr(err, '\n'));
}

static void test_spec_bad(void **state)
{
	(void)state;
	expect_bad_spec("", "tap=NAME is required");
	expect_bad_spec("tap=", "needs an interface name");
	expect_bad_spec("tap", "invalid tap= (needs a value)");
	expect_bad_spec("mac=52:54:00:12:34:56", "tap=NAME is required");
	expect_bad_spec("tap=a,mac=zz:54:00:12:34:56", "malformed mac");
	expect_bad_spec("tap=a,mac=52:54:00:12:34", "malformed mac");
	expect_bad_spec("tap=a,mac=52:54:00:12:34:567", "malformed mac");
	expect_bad_spec("tap=a,mac=52-54-00-12-34-56", "malformed mac");
	expect_bad_spec("tap=a,mac=", "malformed mac");
	expect_bad_spec("tap=a,mac=01:00:5e:00:00:01", "multicast");
	expect_bad_spec("tap=a,mac=ff:ff:ff:ff:ff:ff", "multicast");
	expect_bad_spec("tap=a,mac=00:00:00:00:00:00", "not a valid address");
	/* Issue 32.3: the API's guest_mac (fc_mac=) is Firecracker's rule: any
	 * address but zero (its tests use 07:00:00:00:00:01). */
	expect_bad_spec("tap=a,fc_mac=00:00:00:00:00:00", "not a valid address");
	expect_bad_spec("tap=a,fc_mac=07:00:00:00:00", "malformed mac");
	struct net_spec fs;
	char ferr[200];
	assert_int_equal(net_spec_parse("tap=a,fc_mac=07:00:00:00:00:01", &fs, ferr, sizeof(ferr)),
			 0);
	assert_true(fs.has_mac);
	assert_int_equal(fs.mac[0], 7);
	expect_bad_spec("tap=a,foo=1", "unknown option 'foo'");
	expect_bad_spec("tap=a,queues=0", "queues");
	expect_bad_spec("tap=a,queues=9", "use 1 to 8");
	expect_bad_spec("tap=a,queues=two", "queues");
	expect_bad_spec("tap=a,queues=2,queues=2", "given twice");
	expect_bad_spec("tap=a,tap=b", "given twice");
	expect_bad_spec("tap=a,mac=02:00:00:00:00:01,mac=02:00:00:00:00:02", "given twice");
	expect_bad_spec("tap=a,,mac=02:00:00:00:00:01", "unknown option ''");
	expect_bad_spec("tap=a,", "unknown option ''");
	expect_bad_spec("tap=a/b", "invalid interface name");
	expect_bad_spec("tap=..", "invalid interface name");
	expect_bad_spec("tap=a b", "invalid interface name");
	expect_bad_spec("tap=1234567890123456", "invalid interface name"); /* 16 > IFNAMSIZ-1 */
}

static void test_config_space(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	uint8_t cfg[VIRTIO_NET_CONFIG_LEN];
	f->n->vdev.ops->config_read(&f->n->vdev, 0, cfg, sizeof(cfg));
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x42};
	assert_memory_equal(cfg, mac, 6);
	assert_int_equal(cfg[6] | cfg[7] << 8, VIRTIO_NET_S_LINK_UP);
	assert_int_equal(cfg[8] | cfg[9] << 8, 1); /* max_virtqueue_pairs */
	uint8_t b = 0xff;
	f->n->vdev.ops->config_read(&f->n->vdev, 4, &b, 1);
	assert_int_equal(b, 0);
	assert_true(f->n->vdev.host_features & F(VIRTIO_NET_F_MRG_RXBUF));
	assert_int_equal(f->n->vdev.num_queues, 3); /* rx, tx, control */
}

/* ---- RX ---- */

/* A frame larger than one buffer spans three chains; the first (split in
 * two descriptors, the header across both) says num_buffers = 3. */
static void test_rx_mergeable(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	uint64_t a[2], b, c;
	static const uint32_t first[2] = {8, 992};
	uint16_t ha = post(f, VIRTIO_NET_RXQ, first, 2, W, a);
	uint16_t hb = post1(f, VIRTIO_NET_RXQ, 1000, W, &b);
	uint16_t hc = post1(f, VIRTIO_NET_RXQ, 1000, W, &c);

	uint8_t frame[2500], got[2500];
	fill_pattern(frame, sizeof(frame), 1);
	struct virtio_net_hdr_v1 h = {.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
				      .csum_start = 34,
				      .csum_offset = 16,
				      .num_buffers = 0x7777};
	wire_send(f, &h, frame, sizeof(frame));
	virtio_net_tap_event(P0(f), EPOLLIN);

	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 3);
	struct virtq_used_elem e0 = used_elem(f, 0, 0), e1 = used_elem(f, 0, 1),
			       e2 = used_elem(f, 0, 2);
	assert_int_equal(e0.id, ha);
	assert_int_equal(e0.len, 1000);
	assert_int_equal(e1.id, hb);
	assert_int_equal(e1.len, 1000);
	assert_int_equal(e2.id, hc);
	assert_int_equal(e2.len, HDR + 2500 - 2000);
	struct virtio_net_hdr_v1 gh;
	memcpy(&gh, fake_mem_at(&f->fm, a[0]), 8);
	memcpy((uint8_t *)&gh + 8, fake_mem_at(&f->fm, a[1]), 4);
	assert_int_equal(gh.num_buffers, 3);
	assert_int_equal(gh.flags, VIRTIO_NET_HDR_F_NEEDS_CSUM);
	assert_int_equal(gh.csum_start, 34);
	assert_int_equal(gh.csum_offset, 16);
	memcpy(got, fake_mem_at(&f->fm, a[1] + 4), 988);
	memcpy(got + 988, fake_mem_at(&f->fm, b), 1000);
	memcpy(got + 1988, fake_mem_at(&f->fm, c), 512);
	assert_memory_equal(got, frame, sizeof(frame));
	assert_int_equal(notifies[VIRTIO_NET_RXQ], 1);
	assert_int_equal(f->n->stats.rx_packets, 1);
	assert_int_equal(f->n->stats.rx_bytes, 2500);
	assert_false(f->n->vdev.vqs[0].broken);
}

/* Frames like the one before go from the tap straight into chains popped
 * ahead of the read, not through rx_buf; chains a shorter frame leaves
 * empty go back and take the next frame. */
static void test_rx_pop_ahead(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	uint64_t gpa[9];
	uint16_t head[9];
	for (int i = 0; i < 9; i++)
		head[i] = post1(f, VIRTIO_NET_RXQ, 1000, W, &gpa[i]);
	static const size_t len[4] = {2500, 2500, 40, 1500};
	static const int nbuf[4] = {3, 3, 1, 2}, iovs[4] = {3, 5, 5, 3};
	uint8_t frame[4][2500], got[2500];
	struct virtio_net_hdr_v1 h = {0};
	int c = 0; /* chains used so far */
	for (int k = 0; k < 4; k++) {
		fill_pattern(frame[k], len[k], 10 + k);
		wire_send(f, &h, frame[k], len[k]);
		virtio_net_rx_run(P0(f));
		/* first frame: no size known yet; the small one pops two
		 * ahead and gives them back; the next is sized by it */
		assert_int_equal(readv_cnt, iovs[k]);
		assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), c + nbuf[k]);
		struct virtio_net_hdr_v1 gh;
		memcpy(&gh, fake_mem_at(&f->fm, gpa[c]), HDR);
		assert_int_equal(gh.num_buffers, nbuf[k]);
		size_t off = 0;
		for (int i = 0; i < nbuf[k]; i++, c++) {
			struct virtq_used_elem e = used_elem(f, 0, (uint16_t)c);
			size_t skip = i ? 0 : HDR,
			       n = len[k] - off < 1000 - skip ? len[k] - off : 1000 - skip;
			assert_int_equal(e.id, head[c]);
			assert_int_equal(e.len, skip + n);
			memcpy(got + off, fake_mem_at(&f->fm, gpa[c] + skip), n);
			off += n;
		}
		assert_int_equal(off, len[k]);
		assert_memory_equal(got, frame[k], len[k]);
	}
	assert_int_equal(f->n->stats.rx_packets, 4);
	assert_int_equal(P0(f)->rx_nused, 0);
	assert_false(f->n->vdev.vqs[0].broken);
}

/* The queue breaks on a chain popped ahead: the read does not happen
 * (the frame stays in the tap, the first chain is untouched); a reset
 * forgets the size the old driver's frames had. */
static void test_rx_pop_ahead_breaks(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	for (int i = 0; i < 3; i++)
		post1(f, VIRTIO_NET_RXQ, 1000, W, NULL);
	uint8_t frame[2500];
	fill_pattern(frame, sizeof(frame), 7);
	struct virtio_net_hdr_v1 h = {0};
	wire_send(f, &h, frame, sizeof(frame));
	virtio_net_rx_run(P0(f));
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 3);
	uint64_t x, y;
	post1(f, VIRTIO_NET_RXQ, 1000, W, &x);
	memset(fake_mem_at(&f->fm, x), 0xaa, 1000);
	uint16_t hy = post1(f, VIRTIO_NET_RXQ, 1000, W, &y);
	uint64_t outside = RAM_SIZE; /* the chain popped ahead points outside RAM */
	memcpy(fake_mem_at(&f->fm, f->q[0].desc + 16 * (uint64_t)hy), &outside, 8);
	wire_send(f, &h, frame, sizeof(frame));
	virtio_net_rx_run(P0(f));
	assert_true(f->n->vdev.vqs[0].broken);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 3);
	assert_int_equal(*(uint8_t *)fake_mem_at(&f->fm, x), 0xaa);
	assert_int_equal(tap_queued(f), HDR + sizeof(frame));
	assert_int_equal(P0(f)->rx_nused, 0);
	assert_int_equal(P0(f)->rx_ahead, sizeof(frame));
	f->n->vdev.ops->reset(&f->n->vdev);
	assert_int_equal(P0(f)->rx_ahead, 0);
	assert_int_equal(f->n->stats.rx_dropped, 0);
}

static void rx_no_buffers(struct fx *f, uint64_t features)
{
	fx_start(f, features);
	uint8_t frame[60];
	fill_pattern(frame, sizeof(frame), 2);
	struct virtio_net_hdr_v1 h = {0};
	/* One buffer, two frames: the second finds the ring empty. */
	post1(f, VIRTIO_NET_RXQ, 1526, W, NULL);
	wire_send(f, &h, frame, 10);
	wire_send(f, &h, frame, sizeof(frame));
	/* Kicks are off while buffers last. */
	if (!(features & F(VIRTQ_F_EVENT_IDX))) {
		virtio_net_rx_run(P0(f));
		assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 1);
		assert_int_equal(*g16(f, f->q[0].used), 0); /* kicks re-armed */
	} else {
		virtio_net_tap_event(P0(f), EPOLLIN);
		assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 1);
		assert_true(kick_armed(f, VIRTIO_NET_RXQ)); /* at avail index 1 */
	}
	assert_int_equal(tap_queued(f), HDR + sizeof(frame)); /* still in the tap */
	assert_true(f->n->stats.rx_starved >= 1);
	assert_int_equal(notifies[VIRTIO_NET_RXQ], 1);
	/* Again with nothing posted: nothing changes, nothing is lost. */
	virtio_net_tap_event(P0(f), EPOLLIN);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 1);
	assert_int_equal(tap_queued(f), HDR + sizeof(frame));

	/* The driver asks for the next interrupt (used_event = 1). */
	*g16(f, f->q[0].avail + 4 + 2 * (uint64_t)QSZ) = 1;
	uint64_t gpa;
	uint16_t head = post1(f, VIRTIO_NET_RXQ, 1526, W, &gpa);
	f->n->vdev.ops->queue_notify(&f->n->vdev, VIRTIO_NET_RXQ); /* the refill kick */
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 2);
	assert_int_equal(used_elem(f, 0, 1).id, head);
	assert_int_equal(used_elem(f, 0, 1).len, HDR + sizeof(frame));
	struct virtio_net_hdr_v1 gh;
	memcpy(&gh, fake_mem_at(&f->fm, gpa), HDR);
	assert_int_equal(gh.num_buffers, 1);
	assert_memory_equal(fake_mem_at(&f->fm, gpa + HDR), frame, sizeof(frame));
	assert_true(tap_queued(f) < 0); /* drained: EAGAIN */
	assert_int_equal(notifies[VIRTIO_NET_RXQ], 2);
}

/* No buffers: the frame stays in the tap, the refill kick is armed, and
 * the kick delivers it; with EVENT_IDX and with the NO_NOTIFY flag. */
static void test_rx_no_buffers(void **state)
{
	rx_no_buffers(*state, F_ALL);
}

static void test_rx_no_buffers_no_event_idx(void **state)
{
	rx_no_buffers(*state, F_ALL & ~F(VIRTQ_F_EVENT_IDX));
}

/* Buffers run out in the middle of a frame: it is kept (not lost, not
 * half-published) and delivered whole after the refill. */
static void test_rx_partial_then_refill(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	uint64_t a, b, c;
	uint16_t ha = post1(f, VIRTIO_NET_RXQ, 100, W, &a);
	uint8_t frame[1000], got[1000];
	fill_pattern(frame, sizeof(frame), 3);
	struct virtio_net_hdr_v1 h = {0};
	wire_send(f, &h, frame, sizeof(frame));

	virtio_net_rx_run(P0(f));
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 0);
	assert_int_equal(P0(f)->rx_nused, 1); /* the first chain is held */
	assert_int_equal(P0(f)->rx_left, sizeof(frame) - 88);
	assert_true(kick_armed(f, VIRTIO_NET_RXQ));
	assert_true(tap_queued(f) < 0); /* the frame left the tap */
	/* A second frame waits in the tap behind the kept one. */
	uint8_t second[40];
	fill_pattern(second, sizeof(second), 4);
	wire_send(f, &h, second, sizeof(second));

	uint16_t hb = post1(f, VIRTIO_NET_RXQ, 600, W, &b);
	post1(f, VIRTIO_NET_RXQ, 600, W, &c);
	f->n->vdev.ops->queue_notify(&f->n->vdev, VIRTIO_NET_RXQ);
	/* 12 + 88, 600 and 312 bytes of the three chains. */
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 3);
	assert_int_equal(used_elem(f, 0, 0).id, ha);
	assert_int_equal(used_elem(f, 0, 0).len, 100);
	assert_int_equal(used_elem(f, 0, 1).id, hb);
	assert_int_equal(used_elem(f, 0, 1).len, 600);
	assert_int_equal(used_elem(f, 0, 2).len, 312);
	struct virtio_net_hdr_v1 gh;
	memcpy(&gh, fake_mem_at(&f->fm, a), HDR);
	assert_int_equal(gh.num_buffers, 3);
	memcpy(got, fake_mem_at(&f->fm, a + HDR), 88);
	memcpy(got + 88, fake_mem_at(&f->fm, b), 600);
	memcpy(got + 688, fake_mem_at(&f->fm, c), 312);
	assert_memory_equal(got, frame, sizeof(frame));
	assert_int_equal(P0(f)->rx_nused, 0);
	/* The second frame found no buffer: still in the tap. */
	assert_int_equal(tap_queued(f), HDR + sizeof(second));
	uint64_t d;
	post1(f, VIRTIO_NET_RXQ, 200, W, &d);
	f->n->vdev.ops->queue_notify(&f->n->vdev, VIRTIO_NET_RXQ);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 4);
	assert_memory_equal(fake_mem_at(&f->fm, d + HDR), second, sizeof(second));
}

/* A frame needing more chains than the whole ring can hold is dropped
 * rather than waited for forever. */
static void test_rx_frame_larger_than_ring(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	for (int i = 0; i < QSZ; i++)
		post1(f, VIRTIO_NET_RXQ, 16, W, NULL);
	uint8_t frame[QSZ * 16];
	fill_pattern(frame, sizeof(frame), 5);
	struct virtio_net_hdr_v1 h = {0};
	wire_send(f, &h, frame, sizeof(frame));
	wire_send(f, &h, frame, 4);
	virtio_net_rx_run(P0(f));
	assert_int_equal(f->n->stats.rx_dropped, 1);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 1); /* the 4-byte frame */
	assert_int_equal(used_elem(f, 0, 0).len, HDR + 4);
	assert_int_equal(f->n->stats.rx_packets, 1);
	assert_false(f->n->vdev.vqs[0].broken);
}

/* readv claiming more bytes than the buffers it was given: the frame is
 * cut to what they hold, never read past rx_buf. */
static void test_rx_readv_overstated(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	post1(f, VIRTIO_NET_RXQ, 1526, W, NULL);
	uint8_t frame[60] = {0};
	struct virtio_net_hdr_v1 h = {0};
	wire_send(f, &h, frame, sizeof(frame));
	readv_extra = 1 << 20;
	virtio_net_rx_run(P0(f));
	readv_extra = 0;
	size_t cap = sizeof(P0(f)->rx_buf) + 1526 - HDR;
	assert_true(P0(f)->rx_frame <= cap);
	assert_true(P0(f)->rx_off + P0(f)->rx_left <= sizeof(P0(f)->rx_buf));
	/* The rest waits for buffers (MRG_RXBUF); a reset forgets it. */
	f->n->vdev.ops->reset(&f->n->vdev);
	assert_int_equal(P0(f)->rx_left, 0);
}

/* The same with a ring smaller than the device's array of chains: the
 * bound is the ring's size, not only the array's. */
static void test_rx_frame_larger_than_small_ring(void **state)
{
	struct fx *f = *state;
	f->rx_size = 64;
	fx_start(f, F_ALL);
	for (int i = 0; i < 64; i++)
		post1(f, VIRTIO_NET_RXQ, 16, W, NULL);
	uint8_t frame[64 * 16];
	fill_pattern(frame, sizeof(frame), 5);
	struct virtio_net_hdr_v1 h = {0};
	wire_send(f, &h, frame, sizeof(frame));
	wire_send(f, &h, frame, 4);
	virtio_net_rx_run(P0(f));
	assert_int_equal(f->n->stats.rx_dropped, 1);
	assert_int_equal(P0(f)->rx_nused, 0);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 1); /* the 4-byte frame */
	assert_int_equal(used_elem(f, 0, 0).len, HDR + 4);
	assert_false(f->n->vdev.vqs[0].broken);
}

/* Without MRG_RXBUF a frame must fit one chain; one that does not is
 * dropped and the chain is used for the next frame. */
static void test_rx_no_mrg(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_BASE | F_OFFLOADS);
	uint64_t gpa;
	uint16_t head = post1(f, VIRTIO_NET_RXQ, 100, W, &gpa);
	uint8_t big[500], small[50];
	fill_pattern(big, sizeof(big), 6);
	fill_pattern(small, sizeof(small), 7);
	struct virtio_net_hdr_v1 h = {0};
	wire_send(f, &h, big, sizeof(big));
	wire_send(f, &h, small, sizeof(small));
	virtio_net_rx_run(P0(f));
	assert_int_equal(f->n->stats.rx_dropped, 1);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 1);
	assert_int_equal(used_elem(f, 0, 0).id, head);
	assert_int_equal(used_elem(f, 0, 0).len, HDR + sizeof(small));
	struct virtio_net_hdr_v1 gh;
	memcpy(&gh, fake_mem_at(&f->fm, gpa), HDR);
	assert_int_equal(gh.num_buffers, 1); /* 5.1.6.4: 1 without MRG_RXBUF */
	assert_memory_equal(fake_mem_at(&f->fm, gpa + HDR), small, sizeof(small));
}

/* Header rules towards a guest without offloads: flags cleared (DATA_VALID
 * is only for GUEST_CSUM), GSO or partial-checksum frames dropped. */
static void test_rx_header_rules(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_BASE | F(VIRTIO_NET_F_MRG_RXBUF));
	uint64_t gpa;
	post1(f, VIRTIO_NET_RXQ, 1526, W, &gpa);
	uint8_t frame[64] = {0};
	struct virtio_net_hdr_v1 tso = {.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
					.gso_type = VIRTIO_NET_HDR_GSO_TCPV4,
					.gso_size = 1448};
	struct virtio_net_hdr_v1 csum = {.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM};
	struct virtio_net_hdr_v1 valid = {.flags = VIRTIO_NET_HDR_F_DATA_VALID};
	wire_send(f, &tso, frame, sizeof(frame));
	wire_send(f, &csum, frame, sizeof(frame));
	wire_send(f, &valid, frame, sizeof(frame));
	virtio_net_rx_run(P0(f));
	assert_int_equal(f->n->stats.rx_dropped, 2);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 1);
	struct virtio_net_hdr_v1 gh;
	memcpy(&gh, fake_mem_at(&f->fm, gpa), HDR);
	assert_int_equal(gh.flags, 0);
	assert_int_equal(gh.gso_type, 0);
	assert_int_equal(gh.num_buffers, 1);
}

/* A chain too short for the header is a driver bug: the queue breaks,
 * once, and nothing is written. */
static void test_rx_chain_shorter_than_header(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	uint64_t gpa;
	post1(f, VIRTIO_NET_RXQ, 8, W, &gpa);
	memset(fake_mem_at(&f->fm, gpa), 0xaa, 8);
	uint8_t frame[20] = {0};
	struct virtio_net_hdr_v1 h = {0};
	wire_send(f, &h, frame, sizeof(frame));
	virtio_net_rx_run(P0(f));
	virtio_net_rx_run(P0(f));
	assert_true(f->n->vdev.vqs[0].broken);
	assert_int_equal(f->broken_calls, 1);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 0);
	assert_int_equal(*(uint8_t *)fake_mem_at(&f->fm, gpa), 0xaa);
	assert_int_equal(tap_queued(f), HDR + sizeof(frame));
}

/* After reset nothing runs and a kept frame is dropped. */
static void test_reset_quiesces(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	post1(f, VIRTIO_NET_RXQ, 100, W, NULL);
	uint8_t frame[1000] = {0};
	struct virtio_net_hdr_v1 h = {0};
	wire_send(f, &h, frame, sizeof(frame));
	virtio_net_rx_run(P0(f));
	assert_int_equal(P0(f)->rx_nused, 1); /* a frame in progress */
	f->n->vdev.ops->reset(&f->n->vdev);
	assert_int_equal(P0(f)->rx_nused, 0);
	assert_int_equal(f->n->stats.rx_dropped, 1);
	/* Nothing may touch guest memory now. */
	wire_send(f, &h, frame, 10);
	post1(f, VIRTIO_NET_TXQ, HDR + 10, 0, NULL);
	fake_mem_protect(&f->fm, false);
	virtio_net_tap_event(P0(f), EPOLLIN | EPOLLOUT);
	f->n->vdev.ops->queue_notify(&f->n->vdev, VIRTIO_NET_RXQ);
	f->n->vdev.ops->queue_notify(&f->n->vdev, VIRTIO_NET_TXQ);
	virtio_net_sched_event(f->n, EPOLLIN);
	fake_mem_protect(&f->fm, true);
	assert_int_equal(tap_queued(f), HDR + 10);
}

/* Lines written to stderr while fn(f) runs. */
static int stderr_lines(void (*fn)(struct fx *), struct fx *f)
{
	FILE *tmp = tmpfile();
	assert_non_null(tmp);
	fflush(stderr);
	int saved = dup(STDERR_FILENO);
	dup2(fileno(tmp), STDERR_FILENO);
	fn(f);
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

static void vhost_cycles(struct fx *f)
{
	struct virtio_dev *v = &f->n->vdev;
	for (int i = 0; i < 10000; i++) {
		assert_int_equal(v->ops->activate(v), 0);
		v->ops->reset(v);
	}
}

static void vhost_cycles_once(struct fx *f)
{
	struct virtio_dev *v = &f->n->vdev;
	assert_int_equal(v->ops->activate(v), 0);
}

/* vhost=on, and the guest makes every activate fall back to the built-in
 * path (no MSI-X vector for a queue; vhost refusing the rings): 10,000
 * DRIVER_OK/reset cycles log one line, and give back what they took. */
static void test_vhost_fallback_logged_once(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	struct virtio_dev *v = &f->n->vdev;
	v->ops->reset(v);
	v->transport = &fake_vhost_transport;
	f->n->vhost_on = true;
	P0(f)->vhost.fd = -1; /* every vhost ioctl fails: "refused the rings" */
	handoffs = takebacks = 0;
	handoff_fail_from = 1; /* queue 1 has no vector */
	assert_int_equal(stderr_lines(vhost_cycles, f), 1);
	assert_int_equal(handoffs, 10000);
	assert_int_equal(takebacks, 20000); /* both queues: the failed one is a no-op */
	assert_false(f->n->vhost_running);
	handoffs = takebacks = 0;
	handoff_fail_from = 2;
	assert_int_equal(stderr_lines(vhost_cycles, f), 0); /* said already */
	assert_int_equal(handoffs, 20000);
	assert_int_equal(takebacks, 20000);
	/* Another device says it once too. */
	f->n->vhost_fallback_logged = false;
	assert_int_equal(stderr_lines(vhost_cycles, f), 1);
}

/* vhost reads the tap as skiff left it: the guest's offloads must be on
 * the tap before the queues go to vhost, or the host segments and
 * checksums every frame the guest receives. */
static void test_vhost_gets_tap_offloads(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	struct virtio_dev *v = &f->n->vdev;
	v->ops->reset(v);
	assert_int_equal(P0(f)->tap.offload, 0);
	v->transport = &fake_vhost_transport;
	f->n->vhost_on = true;
	P0(f)->vhost.fd = -1;
	handoff_fail_from = 2;
	offload_at_handoff = 0;
	assert_int_equal(stderr_lines(vhost_cycles_once, f), 1); /* the refusal */
	assert_int_equal(offload_at_handoff, TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6);
	v->ops->reset(v);
	assert_int_equal(P0(f)->tap.offload, 0);
}

/* vhost runs the rx ring, then refuses the tx ring: the built-in path
 * goes on where vhost stopped (its next avail index, the used index it
 * published), not from 0, which would hand the guest buffers it already
 * got back. A ring whose position vhost does not tell breaks instead. */
static void test_vhost_fallback_resumes(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	struct virtio_dev *v = &f->n->vdev;
	struct virtq *rx = &v->vqs[0];
	v->ops->reset(v);
	v->transport = &fake_vhost_transport;
	f->n->vhost_on = true;
	handoff_fail_from = 2;
	fake_vhost_fd = P0(f)->vhost.fd = eventfd(0, 0);
	fake_vhost_refuse_ring = 1;
	uint64_t gpa[4];
	uint16_t head[4];
	for (int i = 0; i < 4; i++)
		head[i] = post1(f, VIRTIO_NET_RXQ, 1000, W, &gpa[i]);
	/* vhost used three of them, as the guest's used ring shows */
	for (int i = 0; i < 3; i++) {
		struct virtq_used_elem e = {.id = head[i], .len = 100};
		memcpy(fake_mem_at(&f->fm, f->q[0].used + 4 + 8 * (uint64_t)i), &e, sizeof(e));
	}
	*g16(f, f->q[0].used + 2) = 3;
	fake_vhost_base[0] = 3;
	assert_int_equal(stderr_lines(vhost_cycles_once, f), 1); /* the refusal */
	assert_false(f->n->vhost_running);
	assert_int_equal(rx->last_avail_idx, 3);
	assert_int_equal(rx->used_idx, 3);
	/* the next frame lands in the fourth buffer, the first vhost left */
	uint8_t *got = fake_mem_at(&f->fm, gpa[3] + HDR);
	memset(got, 0, 60);
	wire_send(f, &(struct virtio_net_hdr_v1){0}, (const uint8_t *)"vhost stopped here", 18);
	virtio_net_rx_run(P0(f));
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 4);
	assert_int_equal(used_elem(f, 0, 3).id, head[3]);
	assert_memory_equal(got, "vhost stopped here", 18);
	assert_false(rx->broken);
	/* The same, and vhost does not say where it stopped. */
	v->ops->reset(v);
	fake_vhost_base_unknown = true;
	assert_int_equal(stderr_lines(vhost_cycles_once, f), 1); /* the queue stopped */
	assert_true(rx->broken);
	fake_vhost_base_unknown = false;
	fake_vhost_refuse_ring = ~0u;
	fake_vhost_fd = -1;
}

static void *rx_thread(void *arg)
{
	virtio_net_rx_run(arg);
	return NULL;
}

struct resetter {
	struct virtio_net *n;
	_Atomic pid_t tid;
	atomic_bool done;
};

static void *reset_thread(void *arg)
{
	struct resetter *r = arg;
	atomic_store(&r->tid, gettid());
	r->n->vdev.ops->reset(&r->n->vdev);
	atomic_store(&r->done, true);
	return NULL;
}

/* 'S' while the thread sleeps (on a lock, say). */
static char thread_state(pid_t tid)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	FILE *fp = fopen(path, "r");
	if (!fp)
		return '?';
	size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	return p && p[1] ? p[2] : '?';
}

/* Reset waits for an RX run in progress (held inside its readv by the
 * test): it sleeps rather than return while the run may still write the
 * guest's buffers. */
static void test_reset_waits_for_rx(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	post1(f, VIRTIO_NET_RXQ, 1526, W, NULL);
	uint8_t frame[60] = {0};
	struct virtio_net_hdr_v1 h = {0};
	wire_send(f, &h, frame, sizeof(frame));
	gate_entered = gate_open = false;
	gate_fd = P0(f)->tap.fd;
	pthread_t rx, rs;
	assert_int_equal(pthread_create(&rx, NULL, rx_thread, P0(f)), 0);
	pthread_mutex_lock(&gate_mu);
	while (!gate_entered)
		pthread_cond_wait(&gate_cv, &gate_mu);
	pthread_mutex_unlock(&gate_mu);
	struct resetter r = {.n = f->n};
	assert_int_equal(pthread_create(&rs, NULL, reset_thread, &r), 0);
	while (!atomic_load(&r.tid))
		sched_yield();
	while (!atomic_load(&r.done) && thread_state(atomic_load(&r.tid)) != 'S')
		sched_yield();
	bool returned_early = atomic_load(&r.done);
	pthread_mutex_lock(&gate_mu);
	gate_open = true;
	gate_fd = -1;
	pthread_cond_broadcast(&gate_cv);
	pthread_mutex_unlock(&gate_mu);
	pthread_join(rx, NULL);
	pthread_join(rs, NULL);
	assert_false(returned_early);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 1); /* the run finished first */
}

/* ---- TX ---- */

static ssize_t wire_recv(struct fx *f, void *buf, size_t len)
{
	return recv(f->wire, buf, len, MSG_DONTWAIT);
}

/* A chain of three descriptors, the header split across the first two,
 * reaches the tap as one packet with the header in front. */
static void test_tx_multi_descriptor(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	static const uint32_t lens[3] = {6, 106, 400};
	uint64_t g[3];
	uint16_t head = post(f, VIRTIO_NET_TXQ, lens, 3, 0, g);
	struct virtio_net_hdr_v1 h = {.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
				      .gso_type = VIRTIO_NET_HDR_GSO_TCPV4,
				      .hdr_len = 54,
				      .gso_size = 1448,
				      .csum_start = 34,
				      .csum_offset = 16,
				      .num_buffers = 0x5555};
	uint8_t data[500];
	fill_pattern(data, sizeof(data), 8);
	memcpy(fake_mem_at(&f->fm, g[0]), &h, 6);
	memcpy(fake_mem_at(&f->fm, g[1]), (uint8_t *)&h + 6, 6);
	memcpy(fake_mem_at(&f->fm, g[1] + 6), data, 100);
	memcpy(fake_mem_at(&f->fm, g[2]), data + 100, 400);

	f->n->vdev.ops->queue_notify(&f->n->vdev, VIRTIO_NET_TXQ);
	uint8_t pkt[1024];
	assert_int_equal(wire_recv(f, pkt, sizeof(pkt)), HDR + 500);
	struct virtio_net_hdr_v1 got;
	memcpy(&got, pkt, HDR);
	assert_int_equal(got.gso_type, VIRTIO_NET_HDR_GSO_TCPV4);
	assert_int_equal(got.gso_size, 1448);
	assert_int_equal(got.csum_start, 34);
	assert_int_equal(got.num_buffers, 0);
	assert_memory_equal(pkt + HDR, data, sizeof(data));
	assert_int_equal(used_idx(f, VIRTIO_NET_TXQ), 1);
	assert_int_equal(used_elem(f, 1, 0).id, head);
	assert_int_equal(used_elem(f, 1, 0).len, 0);
	assert_int_equal(notifies[VIRTIO_NET_TXQ], 1);
	assert_true(kick_armed(f, VIRTIO_NET_TXQ));
	assert_int_equal(f->n->stats.tx_packets, 1);
	assert_int_equal(f->n->stats.tx_bytes, 500);
}

static void post_tx(struct fx *f, const struct virtio_net_hdr_v1 *h, size_t data_len)
{
	uint64_t gpa;
	post1(f, VIRTIO_NET_TXQ, (uint32_t)(HDR + data_len), 0, &gpa);
	memcpy(fake_mem_at(&f->fm, gpa), h, HDR);
	memset(fake_mem_at(&f->fm, gpa + HDR), 0x5a, data_len);
}

/* Offloads the driver did not negotiate, and chains without a whole
 * header, are dropped and completed; the queue keeps working. */
static void test_tx_bad_headers(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_BASE | F(VIRTIO_NET_F_MRG_RXBUF));
	struct virtio_net_hdr_v1 tso = {.gso_type = VIRTIO_NET_HDR_GSO_TCPV4, .gso_size = 1000};
	struct virtio_net_hdr_v1 csum = {.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM};
	struct virtio_net_hdr_v1 udp = {.gso_type = 3 /* UFO */};
	struct virtio_net_hdr_v1 ok = {0};
	post_tx(f, &tso, 100);
	post_tx(f, &csum, 100);
	post_tx(f, &udp, 100);
	post1(f, VIRTIO_NET_TXQ, 8, 0, NULL);	/* shorter than a header */
	post1(f, VIRTIO_NET_TXQ, 100, W, NULL); /* writable only */
	post_tx(f, &ok, 60);
	virtio_net_tx_run(P0(f));
	assert_int_equal(used_idx(f, VIRTIO_NET_TXQ), 6);
	assert_int_equal(f->n->stats.tx_dropped, 5);
	assert_int_equal(f->n->stats.tx_packets, 1);
	uint8_t pkt[256];
	assert_int_equal(wire_recv(f, pkt, sizeof(pkt)), HDR + 60);
	assert_true(wire_recv(f, pkt, sizeof(pkt)) < 0);
	assert_false(f->n->vdev.vqs[1].broken);
}

static void post_tx_frame(struct fx *f, const struct virtio_net_hdr_v1 *h)
{
	post_tx(f, h, 100);
}

/* Offsets and sizes that would reach the host kernel are checked against
 * the frame: each bad header is dropped and counted, the edge cases pass. */
static void test_tx_bad_offsets(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	const uint8_t C = VIRTIO_NET_HDR_F_NEEDS_CSUM, T4 = VIRTIO_NET_HDR_GSO_TCPV4,
		      T6 = VIRTIO_NET_HDR_GSO_TCPV6;
	/* Frames of 100 bytes; the checksum field ends exactly at the end. */
	const struct virtio_net_hdr_v1 good[] = {
	    {.flags = C, .csum_start = 80, .csum_offset = 18},
	    {.flags = C,
	     .gso_type = T4,
	     .hdr_len = 54,
	     .gso_size = 1448,
	     .csum_start = 34,
	     .csum_offset = 16},
	    {.hdr_len = 100},
	};
	const struct virtio_net_hdr_v1 bad[] = {
	    {.flags = C, .csum_start = 81, .csum_offset = 18},	       /* 1 byte past */
	    {.flags = C, .csum_start = 0xffff, .csum_offset = 0xffff}, /* 16-bit wrap */
	    {.hdr_len = 101},
	    {.flags = C, .gso_type = T4, .hdr_len = 54, .csum_start = 34, .csum_offset = 16},
	    /* GSO without NEEDS_CSUM: */
	    {.gso_type = T4, .hdr_len = 54, .gso_size = 1448, .csum_start = 34, .csum_offset = 16},
	    {.flags = C,
	     .gso_type = T6,
	     .hdr_len = 74,
	     .gso_size = 1428,
	     .csum_start = 54,
	     .csum_offset = 6}, /* a UDP checksum offset on TCP segmentation */
	    {.flags = C,
	     .gso_type = T4 | VIRTIO_NET_HDR_GSO_ECN,
	     .hdr_len = 54,
	     .gso_size = 1448,
	     .csum_start = 34,
	     .csum_offset = 16},
	};
	uint8_t pkt[256];
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		post_tx_frame(f, &bad[i]);
		virtio_net_tx_run(P0(f));
		if (f->n->stats.tx_dropped != i + 1)
			fail_msg("bad header %u was not dropped", i);
		assert_true(wire_recv(f, pkt, sizeof(pkt)) < 0);
	}
	for (unsigned int i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		post_tx_frame(f, &good[i]);
		virtio_net_tx_run(P0(f));
		if (wire_recv(f, pkt, sizeof(pkt)) != HDR + 100)
			fail_msg("good header %u was not sent", i);
	}
	assert_int_equal(f->n->stats.tx_packets, 3);
	assert_int_equal(used_idx(f, VIRTIO_NET_TXQ), 10);
	assert_false(f->n->vdev.vqs[1].broken);
}

/* A GSO segment size under NET_GSO_MIN_MSS (Linux's TCP_MIN_MSS) would
 * have the host cut one frame into tens of thousands of segments: dropped
 * and counted, like the e1000's TSO (issue 32); the floor itself passes. */
static void test_tx_gso_mss_floor(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	struct virtio_net_hdr_v1 h = {.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
				      .gso_type = VIRTIO_NET_HDR_GSO_TCPV4,
				      .hdr_len = 54,
				      .csum_start = 34,
				      .csum_offset = 16};
	uint8_t pkt[256];
	static const uint16_t small[] = {1, NET_GSO_MIN_MSS - 1};
	for (unsigned int i = 0; i < 2; i++) {
		h.gso_size = small[i];
		post_tx_frame(f, &h);
		virtio_net_tx_run(P0(f));
		assert_int_equal(f->n->stats.tx_dropped, i + 1);
		assert_true(wire_recv(f, pkt, sizeof(pkt)) < 0);
	}
	h.gso_size = NET_GSO_MIN_MSS;
	post_tx_frame(f, &h);
	virtio_net_tx_run(P0(f));
	assert_int_equal(wire_recv(f, pkt, sizeof(pkt)), HDR + 100);
	assert_int_equal(f->n->stats.tx_packets, 1);
	assert_int_equal(used_idx(f, VIRTIO_NET_TXQ), 3);
}

/* The largest frame goes to the tap; one byte more is dropped, not handed
 * to the kernel. */
static void test_tx_max_frame(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	sink_fd = P0(f)->tap.fd;
	struct virtio_net_hdr_v1 ok = {0};
	post_tx(f, &ok, VIRTIO_NET_MAX_FRAME + 1);
	post_tx(f, &ok, VIRTIO_NET_MAX_FRAME);
	virtio_net_tx_run(P0(f));
	assert_int_equal(used_idx(f, VIRTIO_NET_TXQ), 2);
	assert_int_equal(f->n->stats.tx_dropped, 1);
	assert_int_equal(sink_count, 1);
	assert_int_equal(sink_last, HDR + VIRTIO_NET_MAX_FRAME);
}

/* An indirect chain of 1024 descriptors, first holding the header and
 * first data bytes: the frame alone needs 1024 iovecs, more than one
 * writev takes besides the header; dropped. 1023 pieces are sent. */
static void tx_post_pieces(struct fx *f, uint32_t first_len)
{
	enum { N = 1024 };
	uint64_t table, data = buf_alloc(f, 2048);
	post1(f, VIRTIO_NET_TXQ, 16 * N, VIRTQ_DESC_F_INDIRECT, &table);
	memset(fake_mem_at(&f->fm, data), 0, 2048); /* a plain header */
	for (uint16_t i = 0; i < N; i++) {
		uint64_t a = i ? data + first_len + i - 1 : data;
		struct virtq_desc d = {.addr = a,
				       .len = i ? 1 : first_len,
				       .flags = i + 1 < N ? VIRTQ_DESC_F_NEXT : 0,
				       .next = (uint16_t)(i + 1)};
		memcpy(fake_mem_at(&f->fm, table + 16 * (uint64_t)i), &d, sizeof(d));
	}
}

static void test_tx_too_many_pieces(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL | F(VIRTQ_F_INDIRECT_DESC));
	sink_fd = P0(f)->tap.fd;
	tx_post_pieces(f, HDR + 1); /* 1 + 1023 data pieces */
	tx_post_pieces(f, HDR);	    /* 1023 data pieces */
	virtio_net_tx_run(P0(f));
	assert_int_equal(used_idx(f, VIRTIO_NET_TXQ), 2);
	assert_int_equal(f->n->stats.tx_dropped, 1);
	assert_int_equal(sink_count, 1);
	assert_int_equal(sink_last, HDR + 1023);
	assert_false(f->n->vdev.vqs[1].broken);
}

/* The tap is full: the chain goes back to the ring, TX waits for
 * writability, and the EPOLLOUT event sends it. */
static void test_tx_eagain(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	int fd = P0(f)->tap.fd, sndbuf = 4096;
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	uint8_t junk[1000] = {0};
	int queued = 0;
	while (send(fd, junk, sizeof(junk), MSG_DONTWAIT) > 0)
		queued++;
	assert_true(errno == EAGAIN || errno == EWOULDBLOCK);

	struct virtio_net_hdr_v1 ok = {0};
	post_tx(f, &ok, 300);
	f->n->vdev.ops->queue_notify(&f->n->vdev, VIRTIO_NET_TXQ);
	assert_int_equal(used_idx(f, VIRTIO_NET_TXQ), 0);
	assert_true(P0(f)->tx_blocked);
	assert_int_equal(f->n->vdev.vqs[1].last_avail_idx, 0); /* given back */
	/* Kicks while blocked do nothing. */
	f->n->vdev.ops->queue_notify(&f->n->vdev, VIRTIO_NET_TXQ);
	assert_int_equal(used_idx(f, VIRTIO_NET_TXQ), 0);

	uint8_t pkt[2048];
	for (int i = 0; i < queued; i++)
		assert_int_equal(wire_recv(f, pkt, sizeof(pkt)), sizeof(junk));
	virtio_net_tap_event(P0(f), EPOLLOUT);
	assert_int_equal(used_idx(f, VIRTIO_NET_TXQ), 1);
	assert_false(P0(f)->tx_blocked);
	assert_int_equal(wire_recv(f, pkt, sizeof(pkt)), HDR + 300);
	assert_int_equal(f->n->stats.tx_blocked, 1);
}

/* More chains than the budget: one run stops, the I/O thread resumes. The
 * tap takes every packet (sink), so the budget is what stops the run. */
static void test_tx_budget(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	sink_fd = P0(f)->tap.fd;
	struct virtio_net_hdr_v1 ok = {0};
	/* The ring holds QSZ == budget chains. */
	for (int i = 0; i < VIRTIO_NET_BUDGET; i++)
		post_tx(f, &ok, 20);
	uint64_t sched;
	while (read(f->n->sched_fd, &sched, sizeof(sched)) > 0) {
	}
	atomic_store(&f->n->sched, 0);
	virtio_net_tx_run(P0(f));
	assert_int_equal(used_idx(f, VIRTIO_NET_TXQ), VIRTIO_NET_BUDGET);
	assert_int_equal(sink_count, VIRTIO_NET_BUDGET);
	assert_false(P0(f)->tx_blocked);
	/* The whole budget was used on one run: the I/O thread is asked back. */
	assert_true(read(f->n->sched_fd, &sched, sizeof(sched)) == sizeof(sched));
	assert_true(atomic_load(&f->n->sched) & VIRTIO_NET_SCHED_TX);
	/* It finds the ring empty and stops without asking again. */
	atomic_store(&f->n->sched, 0);
	virtio_net_sched_event(f->n, EPOLLIN);
	assert_int_equal(used_idx(f, VIRTIO_NET_TXQ), VIRTIO_NET_BUDGET);
	assert_true(read(f->n->sched_fd, &sched, sizeof(sched)) < 0);
}

/* A TCP/IPv4 GSO frame's header, as Linux sends it. */
static const struct virtio_net_hdr_v1 tcp_gso = {.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
						 .gso_type = VIRTIO_NET_HDR_GSO_TCPV4,
						 .hdr_len = 54,
						 .gso_size = 1448,
						 .csum_start = 34,
						 .csum_offset = 16};

/* The host answers a GSO frame (ACKs) while it is written: receive runs
 * right after it, inside the transmit run, with no tap event between;
 * after a plain frame it waits for its event as before. */
static void test_tx_gso_then_rx(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	post1(f, VIRTIO_NET_RXQ, 2048, W, NULL);
	uint8_t ack[60], pkt[1024];
	fill_pattern(ack, sizeof(ack), 3);
	struct virtio_net_hdr_v1 none = {0};
	wire_send(f, &none, ack, sizeof(ack)); /* waiting in the "tap" */

	post_tx(f, &none, 60);
	f->n->vdev.ops->queue_notify(&f->n->vdev, VIRTIO_NET_TXQ);
	assert_int_equal(wire_recv(f, pkt, sizeof(pkt)), HDR + 60);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 0);

	post_tx(f, &tcp_gso, 500);
	f->n->vdev.ops->queue_notify(&f->n->vdev, VIRTIO_NET_TXQ);
	assert_int_equal(wire_recv(f, pkt, sizeof(pkt)), HDR + 500);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 1);
	assert_int_equal(used_elem(f, VIRTIO_NET_RXQ, 0).len, HDR + sizeof(ack));
	assert_int_equal(notifies[VIRTIO_NET_RXQ], 1);
}

/* Receive inside a transmit run spends that run's budget: a guest sending
 * GSO frames while the host floods it gets at most VIRTIO_NET_BUDGET
 * frames moved by one run, both ways together, and the I/O thread is asked
 * back for the rest. */
static void test_tx_gso_rx_budget(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	for (int i = 0; i < QSZ; i++)
		post1(f, VIRTIO_NET_RXQ, 128, W, NULL);
	int sndbuf = 1 << 20;
	setsockopt(f->wire, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	uint8_t frame[60] = {0};
	struct virtio_net_hdr_v1 none = {0};
	struct iovec iov[2] = {{&none, HDR}, {frame, sizeof(frame)}};
	struct msghdr m = {.msg_iov = iov, .msg_iovlen = 2};
	int queued = 0;
	while (queued < QSZ && sendmsg(f->wire, &m, MSG_DONTWAIT) > 0)
		queued++;
	assert_int_equal(queued, QSZ); /* more than one run may move */

	for (int i = 0; i < 4; i++)
		post_tx(f, &tcp_gso, 500);
	uint64_t sched;
	while (read(f->n->sched_fd, &sched, sizeof(sched)) > 0) {
	}
	atomic_store(&f->n->sched, 0);
	virtio_net_tx_run(P0(f));
	assert_int_equal(used_idx(f, VIRTIO_NET_TXQ), 1);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), VIRTIO_NET_BUDGET - 1);
	assert_true(atomic_load(&f->n->sched) & VIRTIO_NET_SCHED_TX);
	assert_true(atomic_load(&f->n->sched) & VIRTIO_NET_SCHED_RX);
	/* The I/O thread's next turn finishes both. */
	virtio_net_sched_event(f->n, EPOLLIN);
	assert_int_equal(used_idx(f, VIRTIO_NET_TXQ), 4);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), QSZ);
}

static uint64_t fake_now;

static uint64_t fake_clock(void)
{
	return fake_now;
}

/* A limiter on the test's clock: bytes per 100 ms, packets per 100 ms. */
static void limit(struct throttle *t, uint64_t bytes, uint64_t packets)
{
	struct ratelimit_cfg c = {
	    .b = {[RL_BYTES] = {bytes, 0, 100}, [RL_OPS] = {packets, 0, 100}}};
	t->clock_ns = fake_clock;
	fake_now = 7000000000ull;
	throttle_update(t, &c, 3);
}

/* TX over the limit: the chain stays in the ring (nothing sent or
 * completed), kicks meanwhile send nothing, the poller sees no work; the
 * timer sends it once the bucket refilled. */
static void test_tx_rate_limited(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	struct virtio_dev *v = &f->n->vdev;
	limit(&f->n->tx_throttle, 1000, 100);
	struct virtio_net_hdr_v1 h = {0};
	uint8_t pkt[2048];
	post_tx(f, &h, 1000);
	post_tx(f, &h, 600);
	v->ops->queue_notify(v, VIRTIO_NET_TXQ);
	assert_int_equal(wire_recv(f, pkt, sizeof(pkt)), HDR + 1000);
	assert_true(wire_recv(f, pkt, sizeof(pkt)) < 0);
	assert_int_equal(used_idx(f, VIRTIO_NET_TXQ), 1);
	assert_int_equal(v->vqs[VIRTIO_NET_TXQ].last_avail_idx, 1);
	assert_int_equal(f->n->stats.tx_throttled, 1);
	assert_true(v->ops->queue_throttled(v, VIRTIO_NET_TXQ));
	v->ops->queue_notify(v, VIRTIO_NET_TXQ);
	assert_true(wire_recv(f, pkt, sizeof(pkt)) < 0);
	fake_now += 60000000; /* 600 bytes */
	throttle_event(&f->n->tx_throttle, 0);
	assert_int_equal(wire_recv(f, pkt, sizeof(pkt)), HDR + 600);
	assert_int_equal(used_idx(f, VIRTIO_NET_TXQ), 2);
	assert_false(v->ops->queue_throttled(v, VIRTIO_NET_TXQ));
	assert_false(v->vqs[VIRTIO_NET_TXQ].broken);
}

/* RX over the limit: the tap is not read (its queue keeps the packet) and
 * no buffer is used until the timer; a frame is charged once delivered. */
static void test_rx_rate_limited(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	limit(&f->n->rx_throttle, 1000, 1);
	post1(f, VIRTIO_NET_RXQ, 2000, W, NULL);
	post1(f, VIRTIO_NET_RXQ, 2000, W, NULL);
	uint8_t frame[800];
	fill_pattern(frame, sizeof(frame), 3);
	struct virtio_net_hdr_v1 h = {0};
	wire_send(f, &h, frame, sizeof(frame));
	wire_send(f, &h, frame, sizeof(frame));
	virtio_net_tap_event(P0(f), EPOLLIN);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 1); /* then out of packets (ops) */
	assert_int_equal(tap_queued(f), HDR + 800);
	assert_int_equal(f->n->stats.rx_throttled, 1);
	virtio_net_tap_event(P0(f), EPOLLIN); /* an edge while waiting */
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 1);
	fake_now += 100000000;
	throttle_event(&f->n->rx_throttle, 0);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 2);
	assert_true(tap_queued(f) < 0);
	assert_int_equal(f->n->stats.rx_packets, 2);
}

/* ---- multiqueue: pairs, the control queue ---- */

#define F_MQ   (F(VIRTIO_NET_F_CTRL_VQ) | F(VIRTIO_NET_F_MQ))
#define CTRLQ2 4 /* two pairs: rx0 tx0 rx1 tx1 ctrl */

/* Posts a chain of cnt descriptors with their own flags (readable and
 * writable mixed); returns its head. */
static uint16_t post_mixed(struct fx *f, unsigned int qi, const uint32_t *lens,
			   const uint16_t *flags, unsigned int cnt, uint64_t *gpas)
{
	struct gq *g = &f->q[qi];
	uint16_t head = g->next_desc;
	for (unsigned int i = 0; i < cnt; i++) {
		uint16_t idx = g->next_desc++ % g->size;
		gpas[i] = buf_alloc(f, lens[i]);
		struct virtq_desc d = {.addr = gpas[i],
				       .len = lens[i],
				       .flags = flags[i] | (i + 1 < cnt ? VIRTQ_DESC_F_NEXT : 0),
				       .next = (uint16_t)((idx + 1) % g->size)};
		memcpy(fake_mem_at(&f->fm, g->desc + 16 * (uint64_t)idx), &d, sizeof(d));
	}
	*g16(f, g->avail + 4 + 2 * (uint64_t)(g->avail_idx % g->size)) = head % g->size;
	g->avail_idx++;
	*g16(f, g->avail + 2) = g->avail_idx;
	return head % g->size;
}

/* Sends a control command as Linux lays it out (header, data, ack in
 * three descriptors) on queue qi and kicks it. Returns the ack the device
 * wrote, 0xee if it wrote none. */
static uint8_t ctrl_cmd(struct fx *f, unsigned int qi, uint8_t cls, uint8_t cmd, const void *data,
			uint32_t dlen)
{
	uint32_t lens[3] = {2, dlen, 1};
	uint16_t flags[3] = {0, 0, W};
	uint64_t g[3];
	unsigned int cnt = 3;
	if (!dlen) {
		lens[1] = 1, flags[1] = W, cnt = 2;
	}
	post_mixed(f, qi, lens, flags, cnt, g);
	uint8_t hdr[2] = {cls, cmd};
	memcpy(fake_mem_at(&f->fm, g[0]), hdr, 2);
	if (dlen)
		memcpy(fake_mem_at(&f->fm, g[1]), data, dlen);
	uint8_t *ack = fake_mem_at(&f->fm, g[cnt - 1]);
	*ack = 0xee;
	uint16_t before = used_idx(f, qi);
	f->n->vdev.ops->queue_notify(&f->n->vdev, qi);
	assert_int_equal(used_idx(f, qi), (uint16_t)(before + 1));
	assert_int_equal(used_elem(f, qi, before).len, 1);
	return *ack;
}

static uint8_t pairs_set(struct fx *f, uint16_t pairs)
{
	return ctrl_cmd(f, CTRLQ2, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, &pairs, 2);
}

/* One pair: no MQ, but the control queue (for coalescing), three queues.
 * More pairs: MQ too, 2N + 1 queues, max_virtqueue_pairs N. */
static void test_mq_features_config(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL);
	assert_false(f->n->vdev.host_features & F(VIRTIO_NET_F_MQ));
	assert_true(f->n->vdev.host_features & F(VIRTIO_NET_F_CTRL_VQ));
	assert_true(f->n->vdev.host_features & F(VIRTIO_NET_F_NOTF_COAL));
	assert_int_equal(f->n->vdev.num_queues, 3);
	assert_int_equal(f->n->vdev.msix_vectors, 2); /* config, one the queues share */
	virtio_net_destroy(f->n);
	close(f->wires[0]);
	f->wires[0] = -1;

	fx_start_pairs(f, F_ALL | F_MQ, 3);
	uint8_t cfg[VIRTIO_NET_CONFIG_LEN];
	f->n->vdev.ops->config_read(&f->n->vdev, 0, cfg, sizeof(cfg));
	assert_int_equal(cfg[8] | cfg[9] << 8, 3); /* max_virtqueue_pairs */
	assert_true(f->n->vdev.host_features & F(VIRTIO_NET_F_MQ));
	assert_true(f->n->vdev.host_features & F(VIRTIO_NET_F_CTRL_VQ));
	assert_int_equal(f->n->vdev.num_queues, 7);
	assert_int_equal(f->n->vdev.msix_vectors, 0);	     /* one per queue, and config */
	assert_int_equal(atomic_load(&f->n->curr_pairs), 1); /* until the driver says */
	/* The TX queues are the ones to poll: not rx, not the control queue. */
	assert_int_equal(f->n->vdev.poll_queues, 1u << 1 | 1u << 3 | 1u << 5);

	char err[200] = "";
	struct tap taps[VIRTIO_NET_PAIRS_MAX + 1];
	for (unsigned int i = 0; i <= VIRTIO_NET_PAIRS_MAX; i++)
		tap_from_fd(&taps[i], dup(STDERR_FILENO));
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x43};
	assert_null(virtio_net_create("x", taps, VIRTIO_NET_PAIRS_MAX + 1, mac, err, sizeof(err)));
	assert_non_null(strstr(err, "queue pairs"));
}

/* queues= as given; by default a pair per vCPU up to the limit, and one on
 * a tap made without multi_queue (or none: tap_open says why). */
static void test_mq_default_pairs(void **state)
{
	(void)state;
	assert_int_equal(virtio_net_pairs(0, 2, 1), 2);
	assert_int_equal(virtio_net_pairs(0, 4, 1), 4);
	assert_int_equal(virtio_net_pairs(0, 64, 1), VIRTIO_NET_PAIRS_MAX);
	assert_int_equal(virtio_net_pairs(0, 0, 1), 1);
	assert_int_equal(virtio_net_pairs(0, 1, 1), 1);
	assert_int_equal(virtio_net_pairs(0, 4, 0), 1);
	assert_int_equal(virtio_net_pairs(0, 4, -1), 1);
	assert_int_equal(virtio_net_pairs(3, 1, 0), 3); /* refused by tap_open_queues */
	assert_int_equal(virtio_net_pairs(1, 8, 1), 1);
}

/* Pair 1 carries nothing until the driver enables it; then a frame on tap
 * queue 1 lands in rx1 (not rx0) and a chain on tx1 reaches tap queue 1
 * (not 0). Disabled again, it stops. */
static void test_mq_pair1_traffic(void **state)
{
	struct fx *f = *state;
	fx_start_pairs(f, F_ALL | F_MQ, 2);
	struct virtio_net_pair *p1 = &f->n->pairs[1];
	uint64_t gpa;
	post1(f, 2, 1526, W, &gpa);
	post1(f, 0, 1526, W, NULL);
	uint8_t frame[100], pkt[256];
	fill_pattern(frame, sizeof(frame), 3);
	struct virtio_net_hdr_v1 h = {0};
	struct iovec iov[2] = {{&h, HDR}, {frame, sizeof(frame)}};
	assert_int_equal(writev(f->wires[1], iov, 2), HDR + sizeof(frame));
	virtio_net_tap_event(p1, EPOLLIN);
	assert_int_equal(used_idx(f, 2), 0); /* pair 1 not enabled yet */

	assert_int_equal(pairs_set(f, 2), VIRTIO_NET_OK);
	assert_int_equal(atomic_load(&f->n->curr_pairs), 2);
	virtio_net_sched_event(f->n, EPOLLIN); /* what enabling scheduled */
	assert_int_equal(used_idx(f, 2), 1);
	assert_int_equal(used_idx(f, 0), 0);
	assert_int_equal(used_elem(f, 2, 0).len, HDR + sizeof(frame));
	assert_memory_equal(fake_mem_at(&f->fm, gpa + HDR), frame, sizeof(frame));
	assert_int_equal(notifies[2], 1);
	assert_int_equal(notifies[0], 0);

	uint32_t len = HDR + 60;
	post1(f, 3, len, 0, &gpa);
	memset(fake_mem_at(&f->fm, gpa), 0, HDR);
	memset(fake_mem_at(&f->fm, gpa + HDR), 0x77, 60);
	f->n->vdev.ops->queue_notify(&f->n->vdev, 3);
	assert_int_equal(recv(f->wires[1], pkt, sizeof(pkt), MSG_DONTWAIT), HDR + 60);
	assert_int_equal(pkt[HDR], 0x77);
	assert_true(recv(f->wires[0], pkt, sizeof(pkt), MSG_DONTWAIT) < 0);
	assert_int_equal(used_idx(f, 3), 1);
	assert_int_equal(notifies[3], 1);

	/* Back to one pair: pair 1's traffic waits. */
	assert_int_equal(pairs_set(f, 1), VIRTIO_NET_OK);
	post1(f, 2, 1526, W, NULL);
	assert_int_equal(writev(f->wires[1], iov, 2), HDR + sizeof(frame));
	virtio_net_tap_event(p1, EPOLLIN);
	post1(f, 3, len, 0, &gpa);
	memset(fake_mem_at(&f->fm, gpa), 0, len);
	f->n->vdev.ops->queue_notify(&f->n->vdev, 3);
	assert_int_equal(used_idx(f, 2), 1);
	assert_int_equal(used_idx(f, 3), 1);
	assert_true(recv(f->wires[1], pkt, sizeof(pkt), MSG_DONTWAIT) < 0);
	assert_int_equal(f->n->stats.ctrl_ok, 2);
}

/* VQ_PAIRS_SET outside 1..max_virtqueue_pairs, commands the device does
 * not know and chains of the wrong shape are answered VIRTIO_NET_ERR; the
 * pair count stays and the queue keeps working. */
static void test_ctrl_refused(void **state)
{
	struct fx *f = *state;
	fx_start_pairs(f, F_ALL | F_MQ, 2);
	assert_int_equal(pairs_set(f, 0), VIRTIO_NET_ERR);
	assert_int_equal(pairs_set(f, 3), VIRTIO_NET_ERR);
	assert_int_equal(pairs_set(f, 0xffff), VIRTIO_NET_ERR);
	assert_int_equal(atomic_load(&f->n->curr_pairs), 1);
	uint8_t three[3] = {2, 0, 0};
	assert_int_equal(
	    ctrl_cmd(f, CTRLQ2, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, three, 3),
	    VIRTIO_NET_ERR);
	assert_int_equal(
	    ctrl_cmd(f, CTRLQ2, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, three, 1),
	    VIRTIO_NET_ERR);
	assert_int_equal(
	    ctrl_cmd(f, CTRLQ2, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, NULL, 0),
	    VIRTIO_NET_ERR);
	uint8_t on = 1;
	assert_int_equal(ctrl_cmd(f, CTRLQ2, 0 /* RX mode */, 0, &on, 1), VIRTIO_NET_ERR);
	assert_int_equal(ctrl_cmd(f, CTRLQ2, VIRTIO_NET_CTRL_MQ, 1 /* RSS */, three, 2),
			 VIRTIO_NET_ERR);
	assert_int_equal(ctrl_cmd(f, CTRLQ2, 0xff, 0xff, three, 2), VIRTIO_NET_ERR);
	/* One readable byte: no whole header. */
	static const uint32_t lens[2] = {1, 1};
	static const uint16_t fl[2] = {0, W};
	uint64_t g[2];
	post_mixed(f, CTRLQ2, lens, fl, 2, g);
	*(uint8_t *)fake_mem_at(&f->fm, g[1]) = 0xee;
	f->n->vdev.ops->queue_notify(&f->n->vdev, CTRLQ2);
	assert_int_equal(*(uint8_t *)fake_mem_at(&f->fm, g[1]), VIRTIO_NET_ERR);
	/* The header split over two descriptors is still a command. */
	uint16_t two = 2;
	static const uint32_t l4[4] = {1, 1, 2, 1};
	static const uint16_t f4[4] = {0, 0, 0, W};
	uint64_t g4[4];
	post_mixed(f, CTRLQ2, l4, f4, 4, g4);
	*(uint8_t *)fake_mem_at(&f->fm, g4[0]) = VIRTIO_NET_CTRL_MQ;
	*(uint8_t *)fake_mem_at(&f->fm, g4[1]) = VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET;
	memcpy(fake_mem_at(&f->fm, g4[2]), &two, 2);
	f->n->vdev.ops->queue_notify(&f->n->vdev, CTRLQ2);
	assert_int_equal(*(uint8_t *)fake_mem_at(&f->fm, g4[3]), VIRTIO_NET_OK);
	assert_int_equal(atomic_load(&f->n->curr_pairs), 2);
	assert_int_equal(f->n->stats.ctrl_err, 10);
	assert_int_equal(f->n->stats.ctrl_ok, 1);
	assert_int_equal(f->broken_calls, 0);
}

/* A command with no byte for the ack cannot be answered: the queue breaks
 * (nothing written, nothing completed), the data path is unaffected. */
static void test_ctrl_no_ack_room(void **state)
{
	struct fx *f = *state;
	fx_start_pairs(f, F_ALL | F_MQ, 2);
	uint64_t g[1];
	static const uint32_t lens[1] = {4};
	static const uint16_t fl[1] = {0};
	post_mixed(f, CTRLQ2, lens, fl, 1, g);
	uint8_t cmd[4] = {VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, 2, 0};
	memcpy(fake_mem_at(&f->fm, g[0]), cmd, 4);
	f->n->vdev.ops->queue_notify(&f->n->vdev, CTRLQ2);
	assert_int_equal(f->broken_calls, 1);
	assert_true(f->n->vdev.vqs[CTRLQ2].broken);
	assert_int_equal(used_idx(f, CTRLQ2), 0);
	assert_int_equal(atomic_load(&f->n->curr_pairs), 1);
	assert_memory_equal(fake_mem_at(&f->fm, g[0]), cmd, 4);
}

/* Without MQ negotiated the control queue is q2 (5.1.2), and VQ_PAIRS_SET
 * is refused: the driver did not accept multiqueue. */
static void test_ctrl_without_mq(void **state)
{
	struct fx *f = *state;
	fx_start_pairs(f, F_ALL | F(VIRTIO_NET_F_CTRL_VQ), 2);
	uint16_t two = 2;
	assert_int_equal(
	    ctrl_cmd(f, 2, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, &two, 2),
	    VIRTIO_NET_ERR);
	assert_int_equal(atomic_load(&f->n->curr_pairs), 1);
	assert_int_equal(used_idx(f, CTRLQ2), 0);
}

/* Reset goes back to one pair; the next driver enables pair 1 again. */
static void test_mq_reset(void **state)
{
	struct fx *f = *state;
	fx_start_pairs(f, F_ALL | F_MQ, 2);
	assert_int_equal(pairs_set(f, 2), VIRTIO_NET_OK);
	struct virtio_dev *v = &f->n->vdev;
	v->ops->reset(v);
	assert_int_equal(atomic_load(&f->n->curr_pairs), 1);
	assert_int_equal(atomic_load(&f->n->ctrlq), UINT_MAX);
	/* A kick on the old control queue index after reset does nothing. */
	fake_mem_protect(&f->fm, false);
	v->ops->queue_notify(v, CTRLQ2);
	fake_mem_protect(&f->fm, true);
	for (unsigned int q = 0; q < v->num_queues; q++)
		queue_config(f, q, F_ALL | F_MQ);
	assert_int_equal(v->ops->activate(v), 0);
	post1(f, 2, 1526, W, NULL);
	uint8_t frame[60] = {0};
	struct virtio_net_hdr_v1 h = {0};
	struct iovec iov[2] = {{&h, HDR}, {frame, sizeof(frame)}};
	assert_int_equal(writev(f->wires[1], iov, 2), HDR + sizeof(frame));
	virtio_net_tap_event(&f->n->pairs[1], EPOLLIN);
	assert_int_equal(used_idx(f, 2), 0);
	assert_int_equal(pairs_set(f, 2), VIRTIO_NET_OK);
	virtio_net_tap_event(&f->n->pairs[1], EPOLLIN);
	assert_int_equal(used_idx(f, 2), 1);
}

static unsigned int open_fds(void)
{
	unsigned int n = 0;
	for (int fd = 0; fd < 4096; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/* vhost=on with two pairs: each DRIVER_OK hands all four data queues
 * (never the control queue) to vhost; vhost refusing, or a queue without
 * a vector, gives back every one taken, and 1,000 DRIVER_OK/reset cycles
 * leave no fd behind. */
static void test_mq_vhost_reset_cycles(void **state)
{
	struct fx *f = *state;
	fx_start_pairs(f, F_ALL | F_MQ, 2);
	struct virtio_dev *v = &f->n->vdev;
	v->ops->reset(v);
	v->transport = &fake_vhost_transport;
	f->n->vhost_on = true;
	for (unsigned int i = 0; i < 2; i++)
		f->n->pairs[i].vhost.fd = -1;
	f->n->vhost_fallback_logged = true; /* quiet */
	unsigned int fds = open_fds();
	handoffs = takebacks = 0;
	handoff_fail_from = 3; /* pair 1's tx has no vector */
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(v->ops->activate(v), 0);
		assert_false(f->n->vhost_running);
		v->ops->reset(v);
	}
	assert_int_equal(handoffs, 3000);
	assert_int_equal(takebacks, 4000);
	handoffs = takebacks = 0;
	handoff_fail_from = 5; /* every data queue handed; vhost refuses */
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(v->ops->activate(v), 0);
		v->ops->reset(v);
	}
	assert_int_equal(handoffs, 4000);
	assert_int_equal(takebacks, 4000);
	assert_int_equal(open_fds(), fds);
	assert_int_equal(atomic_load(&f->n->curr_pairs), 1);
}

/* CTRL_VQ without MQ: the control queue is q2 (5.1.2), where pair 1's rx
 * would be with MQ. A driver that also sets up q3 must not get its
 * control queue handed to vhost as pair 1's rx ring (vhost would take its
 * kicks, and no command would be answered again): only pair 0 goes. */
static void test_vhost_ctrl_without_mq(void **state)
{
	struct fx *f = *state;
	uint64_t feat = F_ALL | F(VIRTIO_NET_F_CTRL_VQ);
	fx_start_pairs(f, feat, 2);
	struct virtio_dev *v = &f->n->vdev;
	v->ops->reset(v);
	v->transport = &fake_vhost_transport;
	f->n->vhost_on = true;
	f->n->vhost_fallback_logged = true; /* quiet */
	handoffs = takebacks = handoff_mask = 0;
	handoff_fail_from = NQ_MAX;
	v->driver_features = feat;
	assert_int_equal(v->ops->activate(v), 0); /* vhost refuses fd -1: built-in path */
	assert_int_equal(handoff_mask, 1u << 0 | 1u << 1);
	uint16_t two = 2;
	assert_int_equal(
	    ctrl_cmd(f, 2, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, &two, 2),
	    VIRTIO_NET_ERR);
	v->ops->reset(v);
}

/* The kernel refusing to attach a tap queue (TUNSETQUEUE; here pair 4's
 * "tap" is a socket, so the ioctl fails): VQ_PAIRS_SET 5 is answered
 * VIRTIO_NET_ERR and nothing changes: pair 3's queue, attached on the
 * way, is detached again, but pairs 1 and 2, enabled before, keep theirs.
 * Detached, they would stay enabled with no packet steered to them and
 * every one they send refused (EBADFD). */
static void test_mq_attach_refused(void **state)
{
	struct fx *f = *state;
	fx_start_pairs(f, F_ALL | F_MQ, 5);
	uint16_t three = 3, five = 5;
	assert_int_equal(
	    ctrl_cmd(f, 10, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, &three, 2),
	    VIRTIO_NET_OK);
	struct virtio_net_pair *p = f->n->pairs;
	assert_false(p[3].tap_attached);
	p[4].tap.is_tun = p[4].tap.multi_queue = true;
	assert_int_equal(
	    ctrl_cmd(f, 10, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, &five, 2),
	    VIRTIO_NET_ERR);
	assert_int_equal(atomic_load(&f->n->curr_pairs), 3);
	assert_true(p[1].tap_attached);
	assert_true(p[2].tap_attached);
	assert_false(p[3].tap_attached);
	assert_false(p[4].tap_attached);
}

/* ---- notification coalescing (VIRTIO_NET_F_NOTF_COAL) ---- */

/* Without event-idx every push may interrupt: what is counted is what
 * the device decided. */
#define F_COAL                                                                                     \
	((F_ALL & ~F(VIRTQ_F_EVENT_IDX)) | F(VIRTIO_NET_F_CTRL_VQ) | F(VIRTIO_NET_F_NOTF_COAL))
#define CTRLQ1 2 /* one pair: rx0 tx0 ctrl */

static uint8_t coal_cmd(struct fx *f, uint8_t cmd, uint32_t max_packets, uint32_t usecs,
			uint32_t len)
{
	uint8_t d[9] = {0};
	memcpy(d, &max_packets, 4); /* little-endian host: as the driver lays it */
	memcpy(d + 4, &usecs, 4);
	return ctrl_cmd(f, CTRLQ1, VIRTIO_NET_CTRL_NOTF_COAL, cmd, d, len);
}

static void rx_frames(struct fx *f, unsigned int cnt)
{
	uint8_t frame[60];
	struct virtio_net_hdr_v1 h = {0};
	fill_pattern(frame, sizeof(frame), 3);
	for (unsigned int i = 0; i < cnt; i++)
		wire_send(f, &h, frame, sizeof(frame));
	virtio_net_tap_event(P0(f), EPOLLIN);
}

/* A device with coalescing negotiated; the test plays its I/O thread.
 * Its vCPUs halt in the guest (--cpu-pm on): the card holds TX. */
static void fx_start_coal(struct fx *f)
{
	fx_start(f, F_COAL);
	f->n->tx_hold = true; /* as virtio_net_new_device from dev_ctx */
	virtio_net_coal_defaults(f->n);
	atomic_store(&f->n->coal_watched, true);
}

/* The driver sends one 60-byte packet and kicks; it reaches the wire. */
static void tx_one_packet(struct fx *f)
{
	struct virtio_net_hdr_v1 h = {0};
	uint8_t pkt[256];
	post_tx(f, &h, 60);
	f->n->vdev.ops->queue_notify(&f->n->vdev, VIRTIO_NET_TXQ);
	assert_int_equal(wire_recv(f, pkt, sizeof(pkt)), HDR + 60);
}

/* rx-frames 3, rx-usecs 1 s: two frames are held, the third sends the
 * interrupt; a fourth waits for the timer, whose stale expiry later sends
 * nothing; after reset the next driver gets every interrupt again. */
static void test_coal_rx(void **state)
{
	struct fx *f = *state;
	fx_start_coal(f);
	struct virtio_net_pair *p = P0(f);
	for (unsigned int i = 0; i < 8; i++)
		post1(f, VIRTIO_NET_RXQ, 1526, W, NULL);
	assert_int_equal(coal_cmd(f, VIRTIO_NET_CTRL_NOTF_COAL_RX_SET, 3, 1000000, 8),
			 VIRTIO_NET_OK);
	rx_frames(f, 2);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 2);
	assert_int_equal(notifies[VIRTIO_NET_RXQ], 0);
	assert_true(p->rx_coal.armed);
	rx_frames(f, 1);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 3);
	assert_int_equal(notifies[VIRTIO_NET_RXQ], 1);
	assert_false(p->rx_coal.armed);
	rx_frames(f, 1);
	assert_int_equal(notifies[VIRTIO_NET_RXQ], 1);
	assert_true(p->rx_coal.armed);
	virtio_net_coal_event(&p->rx_coal, EPOLLIN); /* the timer */
	assert_int_equal(notifies[VIRTIO_NET_RXQ], 2);
	virtio_net_coal_event(&p->rx_coal, EPOLLIN); /* a stale expiry */
	assert_int_equal(notifies[VIRTIO_NET_RXQ], 2);
	assert_int_equal(f->n->stats.rx_held, 2);
	/* TX keeps the card's own hold: only RX was set. */
	assert_int_equal(atomic_load(&f->n->coal_usecs[VIRTIO_NET_TXQ]), VIRTIO_NET_TX_HOLD_USECS);

	/* A run that pushed nothing sends nothing and holds nothing. */
	virtio_net_rx_run(p);
	assert_int_equal(notifies[VIRTIO_NET_RXQ], 2);
	assert_int_equal(f->n->stats.rx_held, 2);

	rx_frames(f, 1);
	assert_true(p->rx_coal.armed);
	struct virtio_dev *v = &f->n->vdev;
	v->ops->reset(v);
	assert_false(p->rx_coal.armed);
	assert_int_equal(atomic_load(&f->n->coal_usecs[VIRTIO_NET_RXQ]), 0);
	assert_int_equal(atomic_load(&f->n->coal_max[VIRTIO_NET_RXQ]), 0);
	for (unsigned int q = 0; q < v->num_queues; q++)
		queue_config(f, q, F_COAL);
	assert_int_equal(v->ops->activate(v), 0);
	memset(notifies, 0, sizeof(notifies));
	post1(f, VIRTIO_NET_RXQ, 1526, W, NULL);
	rx_frames(f, 1);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 1);
	assert_int_equal(notifies[VIRTIO_NET_RXQ], 1);
}

/* The timer is real: armed for the hold's usecs, it expires and its
 * handler sends the notification. */
static void test_coal_timer_fires(void **state)
{
	struct fx *f = *state;
	fx_start_coal(f);
	struct virtio_net_coal *c = &P0(f)->tx_coal;
	assert_int_equal(coal_cmd(f, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, 64, 1000, 8), VIRTIO_NET_OK);
	tx_one_packet(f);
	assert_int_equal(notifies[VIRTIO_NET_TXQ], 0);
	struct itimerspec its;
	assert_int_equal(timerfd_gettime(c->tfd, &its), 0);
	assert_true(its.it_value.tv_sec == 0 && its.it_value.tv_nsec > 0 &&
		    its.it_value.tv_nsec <= 1000000);
	struct pollfd pfd = {.fd = c->tfd, .events = POLLIN};
	assert_int_equal(poll(&pfd, 1, 5000), 1); /* expired */
	virtio_net_coal_event(c, EPOLLIN);
	assert_int_equal(notifies[VIRTIO_NET_TXQ], 1);
	assert_false(c->armed);
	assert_int_equal(poll(&pfd, 1, 0), 0); /* read: not readable again */
}

/* Out of buffers while a notification is held: it goes at once, or the
 * driver would not refill before the timer. */
static void test_coal_rx_starved(void **state)
{
	struct fx *f = *state;
	fx_start_coal(f);
	assert_int_equal(coal_cmd(f, VIRTIO_NET_CTRL_NOTF_COAL_RX_SET, 32, 1000000, 8),
			 VIRTIO_NET_OK);
	post1(f, VIRTIO_NET_RXQ, 1526, W, NULL);
	post1(f, VIRTIO_NET_RXQ, 1526, W, NULL);
	rx_frames(f, 1);
	assert_int_equal(notifies[VIRTIO_NET_RXQ], 0); /* held: buffers left */
	rx_frames(f, 2);
	assert_int_equal(used_idx(f, VIRTIO_NET_RXQ), 2);
	assert_int_equal(notifies[VIRTIO_NET_RXQ], 1);
	assert_false(P0(f)->rx_coal.armed);
	assert_true(tap_queued(f) > 0); /* the third waits for a refill */
}

/* A pair disabled while its notification is held still gets it: the
 * driver has buffers to reclaim there. */
static void test_coal_pair_disabled(void **state)
{
	struct fx *f = *state;
	fx_start_pairs(f, (F_ALL & ~F(VIRTQ_F_EVENT_IDX)) | F_MQ | F(VIRTIO_NET_F_NOTF_COAL), 2);
	atomic_store(&f->n->coal_watched, true); /* the test plays the I/O thread */
	assert_int_equal(pairs_set(f, 2), VIRTIO_NET_OK);
	uint8_t d[8] = {8, 0, 0, 0, 0x40, 0x42, 0x0f, 0}; /* 8 packets, 1 s */
	assert_int_equal(
	    ctrl_cmd(f, CTRLQ2, VIRTIO_NET_CTRL_NOTF_COAL, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, d, 8),
	    VIRTIO_NET_OK);
	uint64_t gpa;
	uint8_t pkt[256];
	post1(f, 3, HDR + 60, 0, &gpa);
	memset(fake_mem_at(&f->fm, gpa), 0, HDR + 60);
	f->n->vdev.ops->queue_notify(&f->n->vdev, 3);
	assert_int_equal(recv(f->wires[1], pkt, sizeof(pkt), MSG_DONTWAIT), HDR + 60);
	assert_int_equal(used_idx(f, 3), 1);
	assert_int_equal(notifies[3], 0);
	assert_int_equal(pairs_set(f, 1), VIRTIO_NET_OK);
	virtio_net_coal_event(&f->n->pairs[1].tx_coal, EPOLLIN); /* the timer */
	assert_int_equal(notifies[3], 1);
}

/* tx-frames 2: the first packet's completion waits, the second's sends
 * it; with usecs 0 (or max_packets 0) every run notifies. */
static void test_coal_tx(void **state)
{
	struct fx *f = *state;
	fx_start_coal(f);
	assert_int_equal(coal_cmd(f, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, 2, 500, 8), VIRTIO_NET_OK);
	tx_one_packet(f);
	assert_int_equal(used_idx(f, VIRTIO_NET_TXQ), 1);
	assert_int_equal(notifies[VIRTIO_NET_TXQ], 0);
	assert_true(P0(f)->tx_coal.armed);
	tx_one_packet(f);
	assert_int_equal(used_idx(f, VIRTIO_NET_TXQ), 2);
	assert_int_equal(notifies[VIRTIO_NET_TXQ], 1);
	assert_false(P0(f)->tx_coal.armed);

	assert_int_equal(coal_cmd(f, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, 2, 0, 8), VIRTIO_NET_OK);
	tx_one_packet(f);
	assert_int_equal(notifies[VIRTIO_NET_TXQ], 2);
	assert_int_equal(coal_cmd(f, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, 0, 500, 8), VIRTIO_NET_OK);
	tx_one_packet(f);
	assert_int_equal(notifies[VIRTIO_NET_TXQ], 3);
	assert_int_equal(f->n->stats.tx_held, 1);

	/* No I/O thread watching the timer: nothing may wait for it. */
	atomic_store(&f->n->coal_watched, false);
	assert_int_equal(coal_cmd(f, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, 2, 500, 8), VIRTIO_NET_OK);
	tx_one_packet(f);
	assert_int_equal(notifies[VIRTIO_NET_TXQ], 4);
	assert_false(P0(f)->tx_coal.armed);
}

/* Refused, and nothing set: the feature not negotiated, a length other
 * than 8, a hold over a second, an unknown command. */
static void test_coal_refused(void **state)
{
	struct fx *f = *state;
	fx_start(f, F_ALL | F(VIRTIO_NET_F_CTRL_VQ));
	assert_int_equal(coal_cmd(f, VIRTIO_NET_CTRL_NOTF_COAL_RX_SET, 4, 100, 8), VIRTIO_NET_ERR);
	virtio_net_destroy(f->n);
	close(f->wires[0]);
	f->wires[0] = -1;

	fx_start(f, F_COAL);
	assert_int_equal(coal_cmd(f, VIRTIO_NET_CTRL_NOTF_COAL_RX_SET, 4, 100, 7), VIRTIO_NET_ERR);
	assert_int_equal(coal_cmd(f, VIRTIO_NET_CTRL_NOTF_COAL_RX_SET, 4, 100, 9), VIRTIO_NET_ERR);
	assert_int_equal(coal_cmd(f, VIRTIO_NET_CTRL_NOTF_COAL_RX_SET, 4, 1000001, 8),
			 VIRTIO_NET_ERR);
	assert_int_equal(coal_cmd(f, 2, 4, 100, 8), VIRTIO_NET_ERR);
	for (unsigned int d = 0; d < 2; d++) { /* halts in the host: no hold */
		assert_int_equal(atomic_load(&f->n->coal_usecs[d]), 0);
		assert_int_equal(atomic_load(&f->n->coal_max[d]), 0);
	}
	assert_int_equal(f->n->stats.ctrl_err, 4);
	assert_int_equal(coal_cmd(f, VIRTIO_NET_CTRL_NOTF_COAL_RX_SET, 4, 1000000, 8),
			 VIRTIO_NET_OK);
	assert_int_equal(atomic_load(&f->n->coal_usecs[VIRTIO_NET_RXQ]), 1000000);
	assert_int_equal(atomic_load(&f->n->coal_max[VIRTIO_NET_RXQ]), 4);
}

/* ---- a one-pair card's own TX hold (virtio_net_coal_defaults) ---- */

/* Nothing set by the driver: a TX completion waits for the timer, which
 * sends it when no other interrupt left on the shared vector since. */
static void test_txhold_timer(void **state)
{
	struct fx *f = *state;
	fx_start_coal(f);
	tx_one_packet(f);
	assert_int_equal(used_idx(f, VIRTIO_NET_TXQ), 1);
	assert_int_equal(notifies[VIRTIO_NET_TXQ], 0);
	assert_true(P0(f)->tx_coal.armed);
	virtio_net_coal_event(&P0(f)->tx_coal, EPOLLIN); /* the timer */
	assert_int_equal(notifies[VIRTIO_NET_TXQ], 1);
	assert_int_equal(f->n->stats.coal_covered, 0);
	/* A transport that cannot tell never lets one ride. */
	fake_irq_seq_off = true;
	tx_one_packet(f);
	post1(f, VIRTIO_NET_RXQ, 1526, W, NULL);
	rx_frames(f, 1);
	assert_int_equal(notifies[VIRTIO_NET_RXQ], 1);
	virtio_net_coal_event(&P0(f)->tx_coal, EPOLLIN);
	fake_irq_seq_off = false;
	assert_int_equal(notifies[VIRTIO_NET_TXQ], 2);
	assert_int_equal(f->n->stats.coal_covered, 0);
}

/* A receive interrupt after the held completion carries it: the timer
 * sends nothing. One before it carries nothing: the timer sends it. */
static void test_txhold_covered(void **state)
{
	struct fx *f = *state;
	fx_start_coal(f);
	for (unsigned int i = 0; i < 2; i++)
		post1(f, VIRTIO_NET_RXQ, 1526, W, NULL);
	tx_one_packet(f);
	rx_frames(f, 1);
	assert_int_equal(notifies[VIRTIO_NET_RXQ], 1);
	virtio_net_coal_event(&P0(f)->tx_coal, EPOLLIN);
	assert_int_equal(notifies[VIRTIO_NET_TXQ], 0);
	assert_int_equal(f->n->stats.coal_covered, 1);
	assert_false(P0(f)->tx_coal.armed);

	rx_frames(f, 1); /* before: no cover */
	assert_int_equal(notifies[VIRTIO_NET_RXQ], 2);
	tx_one_packet(f);
	virtio_net_coal_event(&P0(f)->tx_coal, EPOLLIN);
	assert_int_equal(notifies[VIRTIO_NET_TXQ], 1);
	assert_int_equal(f->n->stats.coal_covered, 1);
}

/* VIRTIO_NET_TX_HOLD_PACKETS completions send at once; the driver's
 * tx-usecs 0 ends the hold; a driver without NOTF_COAL, a card of two
 * pairs (a vector per queue: nothing to ride on) and one whose vCPUs halt
 * in the host (no tx_hold) never hold. */
static void test_txhold_limits(void **state)
{
	struct fx *f = *state;
	fx_start_coal(f);
	for (unsigned int i = 0; i < VIRTIO_NET_TX_HOLD_PACKETS - 1; i++)
		tx_one_packet(f);
	assert_int_equal(notifies[VIRTIO_NET_TXQ], 0);
	tx_one_packet(f);
	assert_int_equal(notifies[VIRTIO_NET_TXQ], 1);
	assert_false(P0(f)->tx_coal.armed);
	assert_int_equal(coal_cmd(f, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, 1, 0, 8), VIRTIO_NET_OK);
	tx_one_packet(f);
	assert_int_equal(notifies[VIRTIO_NET_TXQ], 2);
	virtio_net_destroy(f->n);
	close(f->wires[0]);
	f->wires[0] = -1;

	memset(notifies, 0, sizeof(notifies));
	fx_start(f, F_ALL & ~F(VIRTQ_F_EVENT_IDX));
	atomic_store(&f->n->coal_watched, true);
	assert_int_equal(atomic_load(&f->n->coal_usecs[VIRTIO_NET_TXQ]), 0);
	tx_one_packet(f);
	assert_int_equal(notifies[VIRTIO_NET_TXQ], 1);
	virtio_net_destroy(f->n);
	close(f->wires[0]);
	f->wires[0] = -1;

	fx_start_pairs(f, F_COAL | F_MQ, 2);
	f->n->tx_hold = true;
	virtio_net_coal_defaults(f->n);
	assert_int_equal(atomic_load(&f->n->coal_usecs[VIRTIO_NET_TXQ]), 0);
	assert_int_equal(atomic_load(&f->n->coal_max[VIRTIO_NET_TXQ]), 0);
	virtio_net_destroy(f->n);
	for (unsigned int i = 0; i < 2; i++) {
		close(f->wires[i]);
		f->wires[i] = -1;
	}

	memset(notifies, 0, sizeof(notifies));
	fx_start(f, F_COAL);
	atomic_store(&f->n->coal_watched, true);
	tx_one_packet(f);
	assert_int_equal(notifies[VIRTIO_NET_TXQ], 1);
	assert_int_equal(f->n->stats.tx_held, 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_spec_good),
	    cmocka_unit_test(test_spec_bad),
	    T(test_config_space),
	    T(test_rx_mergeable),
	    T(test_rx_pop_ahead),
	    T(test_rx_pop_ahead_breaks),
	    T(test_rx_no_buffers),
	    T(test_rx_no_buffers_no_event_idx),
	    T(test_rx_partial_then_refill),
	    T(test_rx_frame_larger_than_ring),
	    T(test_rx_frame_larger_than_small_ring),
	    T(test_rx_readv_overstated),
	    T(test_rx_no_mrg),
	    T(test_rx_header_rules),
	    T(test_rx_chain_shorter_than_header),
	    T(test_reset_quiesces),
	    T(test_reset_waits_for_rx),
	    T(test_vhost_fallback_logged_once),
	    T(test_vhost_gets_tap_offloads),
	    T(test_vhost_fallback_resumes),
	    T(test_tx_multi_descriptor),
	    T(test_tx_bad_headers),
	    T(test_tx_bad_offsets),
	    T(test_tx_gso_mss_floor),
	    T(test_tx_max_frame),
	    T(test_tx_too_many_pieces),
	    T(test_tx_eagain),
	    T(test_tx_budget),
	    T(test_tx_gso_then_rx),
	    T(test_tx_gso_rx_budget),
	    T(test_tx_rate_limited),
	    T(test_rx_rate_limited),
	    T(test_mq_features_config),
	    cmocka_unit_test(test_mq_default_pairs),
	    T(test_mq_pair1_traffic),
	    T(test_ctrl_refused),
	    T(test_ctrl_no_ack_room),
	    T(test_ctrl_without_mq),
	    T(test_mq_reset),
	    T(test_mq_vhost_reset_cycles),
	    T(test_vhost_ctrl_without_mq),
	    T(test_mq_attach_refused),
	    T(test_coal_rx),
	    T(test_coal_tx),
	    T(test_coal_timer_fires),
	    T(test_coal_rx_starved),
	    T(test_coal_pair_disabled),
	    T(test_coal_refused),
	    T(test_txhold_timer),
	    T(test_txhold_covered),
	    T(test_txhold_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
