// SPDX-License-Identifier: Apache-2.0
/* The fixture of the vsock tests (test_virtio_vsock.c,
 * test_review_vsock.c): a device on fake guest memory in a temporary
 * directory for its Unix sockets, the guest driver's side (RX buffers, TX
 * packets, expected ops) and host peers (dial, listen, streams either
 * way). Included once per test program, after its includes. */
#ifndef SKIFF_TEST_VSOCK_FX_H
#define SKIFF_TEST_VSOCK_FX_H

#define RAM_SIZE (4u << 20)
#define QSZ	 256
#define CID	 42
#define RXBUF	 (VSOCK_HDR_LEN + 4096)
#define RX_DATA	 0x100000 /* RX buffers: QSZ of RXBUF (1.1 MiB) */
#define TX_DATA	 0x300000 /* TX buffers, reused round robin */
#define TXBUF	 (VSOCK_HDR_LEN + 8192)

static const uint64_t ring_gpa[VSOCK_NR_QUEUES] = {0x1000, 0x4000, 0x7000};

struct gq {
	uint16_t avail_idx, next_desc, used_seen;
};

struct fx {
	struct fake_mem fm;
	struct virtio_dev *vdev;
	struct virtio_vsock *v;
	struct gq q[VSOCK_NR_QUEUES];
	unsigned int tx_slot;
	char dir[40], uds[64];
	int broken;
};

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

static void on_broken(struct virtq *vq, void *opaque)
{
	(void)vq;
	((struct fx *)opaque)->broken++;
}

/* ---- the guest ---- */

static void guest_add(struct fx *f, unsigned int q, uint64_t gpa, uint32_t len, bool w)
{
	struct gq *g = &f->q[q];
	uint16_t d = g->next_desc;
	struct virtq_desc desc = {.addr = gpa, .len = len, .flags = w ? VIRTQ_DESC_F_WRITE : 0};
	memcpy(fake_mem_at(&f->fm, ring_gpa[q] + 16 * (uint64_t)d), &desc, sizeof(desc));
	g->next_desc = (uint16_t)((d + 1) % QSZ);
	uint16_t *ring = fake_mem_at(&f->fm, ring_gpa[q] + 0x1000);
	ring[2 + (g->avail_idx % QSZ)] = d;
	__atomic_store_n(&ring[1], ++g->avail_idx, __ATOMIC_RELEASE);
}

/* Posts n RX buffers (descriptor d holds buffer d). */
static void rx_post(struct fx *f, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		uint16_t d = f->q[VSOCK_RXQ].next_desc;
		guest_add(f, VSOCK_RXQ, RX_DATA + (uint64_t)d * RXBUF, RXBUF, true);
	}
	f->vdev->ops->queue_notify(f->vdev, VSOCK_RXQ);
}

/* The next packet the device gave the guest: false if none. */
static bool rx_take(struct fx *f, struct virtio_vsock_hdr *h, uint8_t *payload)
{
	struct gq *g = &f->q[VSOCK_RXQ];
	uint64_t used = ring_gpa[VSOCK_RXQ] + 0x2000;
	uint16_t idx = __atomic_load_n((uint16_t *)fake_mem_at(&f->fm, used + 2), __ATOMIC_ACQUIRE);
	if (idx == g->used_seen)
		return false;
	struct virtq_used_elem e;
	memcpy(&e, fake_mem_at(&f->fm, used + 4 + 8 * (uint64_t)(g->used_seen % QSZ)), sizeof(e));
	g->used_seen++;
	const uint8_t *buf = fake_mem_at(&f->fm, RX_DATA + (uint64_t)e.id * RXBUF);
	memcpy(h, buf, sizeof(*h));
	assert_int_equal(e.len, VSOCK_HDR_LEN + h->len);
	assert_int_equal(h->src_cid, VSOCK_HOST_CID);
	assert_int_equal(h->dst_cid, CID);
	assert_int_equal(h->type, VIRTIO_VSOCK_TYPE_STREAM);
	if (payload)
		memcpy(payload, buf + VSOCK_HDR_LEN, h->len);
	return true;
}

/* Polls the host side, then takes the next packet, which must be op. */
static struct virtio_vsock_hdr expect_op(struct fx *f, uint16_t op)
{
	struct virtio_vsock_hdr h;
	virtio_vsock_poll(f->vdev);
	assert_true(rx_take(f, &h, NULL));
	assert_int_equal(h.op, op);
	return h;
}

static struct virtio_vsock_hdr ghdr(uint16_t op, uint32_t src_port, uint32_t dst_port)
{
	return (struct virtio_vsock_hdr){.src_cid = CID,
					 .dst_cid = VSOCK_HOST_CID,
					 .src_port = src_port,
					 .dst_port = dst_port,
					 .type = VIRTIO_VSOCK_TYPE_STREAM,
					 .op = op,
					 .buf_alloc = 1 << 20};
}

/* Sends a packet: header, payload, a chain of out_len bytes (0: just
 * what they need), then a TX kick. */
static void tx_send_len(struct fx *f, struct virtio_vsock_hdr h, const void *data, uint32_t out_len)
{
	uint64_t gpa = TX_DATA + (uint64_t)(f->tx_slot++ % 64) * TXBUF;
	memcpy(fake_mem_at(&f->fm, gpa), &h, sizeof(h));
	if (data)
		memcpy(fake_mem_at(&f->fm, gpa + VSOCK_HDR_LEN), data, h.len);
	guest_add(f, VSOCK_TXQ, gpa, out_len ? out_len : VSOCK_HDR_LEN + h.len, false);
	f->vdev->ops->queue_notify(f->vdev, VSOCK_TXQ);
}

static void tx_send(struct fx *f, struct virtio_vsock_hdr h, const void *data)
{
	tx_send_len(f, h, data, 0);
}

/* ---- counters ---- */

struct found {
	const char *what;
	uint64_t value;
	int seen;
};

static void find_emit(void *ctx, const char *owner, const char *what, uint64_t value)
{
	struct found *c = ctx;
	assert_string_equal(owner, "virtio-vsock0");
	if (!strcmp(what, c->what)) {
		c->value = value;
		c->seen++;
	}
}

static __attribute__((unused)) uint64_t counter(struct fx *f, const char *what)
{
	struct found c = {.what = what};
	virtio_vsock_counters(f->vdev, find_emit, &c);
	assert_int_equal(c.seen, 1);
	return c.value;
}

/* ---- the host ---- */

static int host_dial(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%.100s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

static int host_listen(struct fx *f, uint32_t port)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%.64s_%u", f->uds, port);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 8), 0);
	return fd;
}

/* Reads exactly n bytes within a second (the device wrote them already). */
static void host_read(int fd, void *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		assert_int_equal(poll(&p, 1, 1000), 1);
		ssize_t r = read(fd, (char *)buf + got, n - got);
		assert_true(r > 0);
		got += (size_t)r;
	}
}

static __attribute__((unused)) bool host_readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	return poll(&p, 1, 1000) == 1;
}

/* ---- fixtures ---- */

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || fake_mem_init(&f->fm, RAM_SIZE))
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/skiff-vsock-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->uds, sizeof(f->uds), "%.40s/v.sock", f->dir);
	struct vsock_spec s;
	char err[256] = "";
	char spec[256];
	vsock_spec_init(&s);
	snprintf(spec, sizeof(spec), "cid=%d,uds=%s", CID, f->uds);
	if (opt_parse_spec(&vsock_spec_table, spec, &s, err, sizeof(err)))
		return -1;
	f->vdev = virtio_vsock_create("virtio-vsock0", &s, err, sizeof(err));
	if (!f->vdev)
		return -1;
	f->v = f->vdev->priv;
	struct virtio_dev *v = f->vdev;
	v->gm = &f->fm.gm;
	v->transport = &fake_transport;
	v->transport_data = f;
	for (unsigned int q = 0; q < VSOCK_NR_QUEUES; q++) {
		struct virtq *vq = &v->vqs[q];
		if (virtq_init(vq, "vsock q", v->queue_max_size, on_broken, f) ||
		    virtq_set_size(vq, QSZ) || virtq_set_addr(vq, VIRTQ_RING_DESC, ring_gpa[q]) ||
		    virtq_set_addr(vq, VIRTQ_RING_AVAIL, ring_gpa[q] + 0x1000) ||
		    virtq_set_addr(vq, VIRTQ_RING_USED, ring_gpa[q] + 0x2000) ||
		    virtq_activate(vq, &f->fm.gm))
			return -1;
	}
	if (v->ops->activate(v))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];
	virtio_vsock_destroy(f->vdev);
	fake_mem_free(&f->fm);
	snprintf(cmd, sizeof(cmd), "rm -rf %.40s", f->dir);
	if (system(cmd))
		return -1;
	assert_int_equal(f->broken, 0);
	free(f);
	return 0;
}

/* A host peer connected to guest port 52 and the guest's answer: the
 * host's fd; *local is the port the device assigned. */
static __attribute__((unused)) int host_stream(struct fx *f, uint32_t *local)
{
	int fd = host_dial(f->uds);
	assert_int_equal(write(fd, "CONNECT 52\n", 11), 11);
	struct virtio_vsock_hdr h = expect_op(f, VIRTIO_VSOCK_OP_REQUEST);
	assert_int_equal(h.dst_port, 52);
	*local = h.src_port;
	tx_send(f, ghdr(VIRTIO_VSOCK_OP_RESPONSE, 52, h.src_port), NULL);
	char ok[32] = "";
	int n = snprintf(ok, sizeof(ok), "OK %u\n", h.src_port);
	char got[32] = "";
	host_read(fd, got, (size_t)n);
	assert_string_equal(got, ok);
	return fd;
}

/* A guest stream to host port 1234, its listener's accepted end. */
static __attribute__((unused)) int guest_stream(struct fx *f, int *lfd)
{
	*lfd = host_listen(f, 1234);
	tx_send(f, ghdr(VIRTIO_VSOCK_OP_REQUEST, 5000, 1234), NULL);
	struct virtio_vsock_hdr h = expect_op(f, VIRTIO_VSOCK_OP_RESPONSE);
	assert_int_equal(h.src_port, 1234);
	assert_int_equal(h.dst_port, 5000);
	assert_int_equal(h.buf_alloc, VSOCK_CONN_BUF);
	int a = accept4(*lfd, NULL, NULL, SOCK_CLOEXEC);
	assert_true(a >= 0);
	return a;
}

#endif
