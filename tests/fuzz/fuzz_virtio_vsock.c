// SPDX-License-Identifier: Apache-2.0
/* virtio-vsock (src/devices/virtio-vsock/virtio_vsock*.c): fuzz bytes play
 * both of the device's ends. The guest's: chains on the RX, TX and event
 * queues (headers well-formed or not: unknown connections, wrong CIDs and
 * types, lying lengths and credit, payloads cut short, indirect tables,
 * floods of REQUESTs), kicks, resets, config reads. The host's: real Unix
 * sockets in a temporary directory (peers connecting to the device's
 * uds_path with CONNECT lines of any shape, listeners at uds_path_P for
 * the guest's connections, peers writing, reading, stopping, closing),
 * and the device's own host streams shrunk to a tiny send buffer so it
 * must buffer. A fresh device per input, without its thread: polls run
 * where the thread would wake. Guest RAM changes under the device
 * (fuzz_common.h).
 *
 * Checked after every step: the connection table adds up (count, scan
 * bound, free slots without fds), buffers within VSOCK_CONN_BUF, the
 * orphan RST queue bounded, a stream that sent the guest bytes in this
 * step within the guest's credit, never more bytes to the guest than the
 * host peers wrote; after each input, every fd the device opened closed. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "devices/virtio-vsock/virtio_vsock.h"
#include "devices/virtio-vsock/virtio_vsock_priv.h"
#include "fuzz_common.h"
#include "virtio/virtio_dev.h"

#define CID	   42
#define GPORT	   5000	 /* the guest's ports: GPORT..GPORT+7 */
#define LPORT_A	   1000	 /* uds_path_1000: a listener with a short backlog */
#define LPORT_B	   1001	 /* uds_path_1001: a long backlog, for floods */
#define LPORT_NONE 1002	 /* nobody listens */
#define NR_HOST	   16	 /* the harness's host sockets */
#define HOST_IO	   65536 /* per write or read */

static char dir[64], uds[96], lpath[2][112];
static int lfd[2] = {-1, -1}, hfd[NR_HOST];
static uint64_t host_sent; /* bytes the host peers wrote */
static uint32_t rx_seen[VSOCK_MAX_CONNS], gen_seen[VSOCK_MAX_CONNS];
static unsigned int snap_hw; /* slots snapshot() saw */
static uint8_t io_buf[HOST_IO];
static uint16_t next_desc[VSOCK_NR_QUEUES];

static void fake_notify_queue(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev, (void)q;
}

static void fake_notify_config(struct virtio_dev *vdev)
{
	(void)vdev;
}

/* The transport would run the queue again later: it is the next kick. */
static int fake_queue_resched(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev, (void)q;
	return 0;
}

static const struct virtio_transport_ops fake_transport = {
    .notify_queue = fake_notify_queue,
    .notify_config = fake_notify_config,
    .queue_resched = fake_queue_resched,
};

static void on_pop(const struct virtq *vq, const struct virtq_elem *e)
{
	(void)vq;
	for (unsigned int i = 0; i < e->out_num + e->in_num; i++)
		FZ_CHECK(fz_in_ram(e->iov[i].iov_base, e->iov[i].iov_len));
}

static void cleanup(void)
{
	unlink(uds);
	unlink(lpath[0]);
	unlink(lpath[1]);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	snprintf(dir, sizeof(dir), "/tmp/skiff-fz-vsock-XXXXXX");
	if (!mkdtemp(dir))
		abort();
	snprintf(uds, sizeof(uds), "%s/v", dir);
	snprintf(lpath[0], sizeof(lpath[0]), "%s_%d", uds, LPORT_A);
	snprintf(lpath[1], sizeof(lpath[1]), "%s_%d", uds, LPORT_B);
	atexit(cleanup);
	/* A flood may hold ~1000 streams, each with two ends in this process. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 4096 && rl.rlim_max >= 4096) {
		rl.rlim_cur = 4096;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (unsigned int i = 0; i < sizeof(io_buf); i++)
		io_buf[i] = (uint8_t)(i * 7 + 1);
	for (int i = 0; i < NR_HOST; i++)
		hfd[i] = -1;
	fz_on_pop = on_pop;
	return 0;
}

static int unix_listen(const char *path, int backlog)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	unlink(path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, backlog) < 0)
		abort();
	return fd;
}

/* Open fds, counted where the kernel lists them (libFuzzer closes and
 * reopens some of its own between inputs, so not a lowest-free-fd). */
static int fds_open(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		abort();
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static struct virtio_dev *dev_new(void)
{
	char err[200];
	struct vsock_spec s = {.cid = CID};
	snprintf(s.uds, sizeof(s.uds), "%s", uds);
	unlink(uds);
	struct virtio_dev *v = virtio_vsock_create("virtio-vsock0", &s, err, sizeof(err));
	if (!v) {
		fprintf(stderr, "fuzz_virtio_vsock: %s\n", err);
		abort();
	}
	v->transport = &fake_transport;
	v->gm = &fz_gm;
	return v;
}

/* ---- invariants ---- */

/* Slots from hw on must be free: counting only below it and comparing
 * with nr_conns finds one that is not (and keeps a step's check cheap). */
static void check_state(struct virtio_vsock *v)
{
	unsigned int used = 0;
	FZ_CHECK(v->hw <= VSOCK_MAX_CONNS && v->nr_orphans <= VSOCK_ORPHAN_MAX);
	FZ_CHECK(v->nr_dead <= VSOCK_MAX_CONNS);
	for (unsigned int i = 0; i < v->hw; i++) {
		const struct vsock_conn *c = &v->conns[i];
		if (c->state == VS_FREE) {
			FZ_CHECK(!c->buf);
			continue;
		}
		used++;
		FZ_CHECK(c->buf_len <= VSOCK_CONN_BUF && c->buf_head < VSOCK_CONN_BUF);
		FZ_CHECK(c->buf || !c->buf_len);
		FZ_CHECK(c->line_len < VSOCK_LINE_MAX);
		FZ_CHECK(c->state == VS_CLOSING ? c->fd < 0 : c->fd >= 0);
		/* Bytes to the guest in this step: within the credit it gave
		 * (the RX side runs after the TX side's last update). */
		if (i < snap_hw && c->gen == gen_seen[i] && c->rx_cnt != rx_seen[i])
			FZ_CHECK(c->rx_cnt - c->peer_fwd_cnt <= c->peer_buf_alloc);
	}
	FZ_CHECK(used == v->nr_conns);
	FZ_CHECK(counter_get(&v->stats.rx_bytes_count) <= host_sent);
}

/* What check_state compares with. Slots at hw and up are free: a
 * stream that appears there in the step is new, and checked from the
 * next step on. */
static void snapshot(struct virtio_vsock *v)
{
	snap_hw = v->hw;
	for (unsigned int i = 0; i < v->hw; i++) {
		rx_seen[i] = v->conns[i].rx_cnt;
		gen_seen[i] = v->conns[i].gen;
	}
}

/* ---- the guest ---- */

static uint16_t take_desc(const struct fz_q *g, unsigned int q)
{
	uint16_t sz = g->size ? g->size : 1, d = next_desc[q] % sz;
	next_desc[q] = (uint16_t)((d + 1) % sz);
	return d;
}

static uint32_t pick_len(void)
{
	uint8_t b = fz_u8();
	static const uint32_t edge[] = {VSOCK_PKT_MAX - 1, VSOCK_PKT_MAX, VSOCK_PKT_MAX + 1, 4096};
	switch (b % 4) {
	case 0:
		return b >> 2;
	case 1:
		return fz_u16();
	case 2:
		return b & 4 ? fz_u32() : edge[(b >> 3) % 4];
	default:
		return 1 + (b >> 2) * 64;
	}
}

static uint32_t pick_dst_port(void)
{
	uint8_t b = fz_u8();
	static const uint32_t ports[] = {LPORT_A, LPORT_B, LPORT_NONE};
	if (b % 8 < 3)
		return ports[b % 8];
	if (b % 8 == 7)
		return fz_u32();
	return VSOCK_LOCAL_PORT + (b >> 3) % 8; /* the device's host-initiated ports */
}

/* A header from the stream: mostly one the device accepts, so the
 * fuzzer reaches the streams; any field may be wrong. */
static void make_hdr(struct virtio_vsock *v, struct virtio_vsock_hdr *h, uint32_t *len)
{
	uint8_t sel = fz_u8();
	h->src_cid = sel & 1 ? fz_u64() : CID;
	h->dst_cid = sel & 2 ? fz_u8() : VSOCK_HOST_CID;
	h->type = sel & 4 ? fz_u16() : VIRTIO_VSOCK_TYPE_STREAM;
	h->op = fz_u8() % 8;
	uint8_t sp = fz_u8();
	h->src_port = sp & 0x80 ? fz_u32() : GPORT + sp % 8;
	h->dst_port = pick_dst_port();
	*len = pick_len();
	h->len = *len;
	h->flags = fz_u8() % 4;
	uint8_t ba = fz_u8();
	h->buf_alloc = ba % 4 == 0   ? 0
		       : ba % 4 == 1 ? 1u << (ba >> 2) % 21
		       : ba % 4 == 2 ? fz_u32()
				     : 256u << 10;
	uint8_t fw = fz_u8();
	const struct vsock_conn *c = vsock_conn_find(v, h->dst_port, h->src_port);
	/* Honest (what it has been sent, less what it still holds) or any. */
	h->fwd_cnt = fw & 1 ? fz_u32() : c ? c->rx_cnt - (fw >> 1) : 0;
}

/* One TX packet: header and payload in one descriptor, in two, in an
 * indirect table, or the header itself split; the payload's descriptor
 * may say another length than the header. */
static void tx_packet(struct virtio_vsock *v, struct fz_q *g)
{
	struct virtio_vsock_hdr h;
	uint32_t len;
	make_hdr(v, &h, &len);
	uint8_t lay = fz_u8();
	uint64_t at = FZ_BUF_BASE + fz_u16() % 0x6000;
	uint32_t plen = lay & 4 ? fz_u16() : len;
	memcpy(fz_at(at), &h, sizeof(h));
	if (lay & 8 && at + VSOCK_HDR_LEN + 64 <= FZ_LOW)
		fz_bytes(fz_at(at + VSOCK_HDR_LEN), plen < 64 ? plen : 64);
	uint64_t pay = at + VSOCK_HDR_LEN;
	uint16_t head = take_desc(g, VSOCK_TXQ);
	switch (lay % 4) {
	case 0:
		fzq_put_desc(g->desc, head, at, VSOCK_HDR_LEN + plen, 0, 0);
		break;
	case 1: {
		uint16_t d = take_desc(g, VSOCK_TXQ);
		fzq_put_desc(g->desc, head, at, VSOCK_HDR_LEN, VIRTQ_DESC_F_NEXT, d);
		fzq_put_desc(g->desc, d, pay, plen, 0, 0);
		break;
	}
	case 2:
		fzq_put_desc(g->ind, 0, at, VSOCK_HDR_LEN, VIRTQ_DESC_F_NEXT, 1);
		fzq_put_desc(g->ind, 1, pay, plen, 0, 0);
		fzq_put_desc(g->desc, head, g->ind, 32, VIRTQ_DESC_F_INDIRECT, 0);
		break;
	default: {
		uint16_t d1 = take_desc(g, VSOCK_TXQ), d2 = take_desc(g, VSOCK_TXQ);
		fzq_put_desc(g->desc, head, at, 20, VIRTQ_DESC_F_NEXT, d1);
		fzq_put_desc(g->desc, d1, at + 20, VSOCK_HDR_LEN - 20, VIRTQ_DESC_F_NEXT, d2);
		fzq_put_desc(g->desc, d2, pay, plen, 0, 0);
	}
	}
	fzq_publish(g, head);
}

/* n RX buffers of one size, one descriptor each or the header split. */
static void rx_buffers(struct fz_q *g)
{
	uint8_t m = fz_u8();
	unsigned int n = 1 + m % 16;
	uint8_t b = fz_u8();
	uint32_t len = b % 4 == 0   ? VSOCK_HDR_LEN - (b >> 2) % 2
		       : b % 4 == 1 ? VSOCK_HDR_LEN + (b >> 2) * 64 + 1
		       : b % 4 == 2 ? VSOCK_HDR_LEN + 4096
				    : fz_u16();
	for (unsigned int i = 0; i < n; i++) {
		uint64_t at = FZ_BUF_BASE + fz_u16() % 0x7000;
		uint16_t head = take_desc(g, VSOCK_RXQ);
		if (m & 0x80 && len > 20) {
			uint16_t d = take_desc(g, VSOCK_RXQ);
			fzq_put_desc(g->desc, head, at, 20, VIRTQ_DESC_F_WRITE | VIRTQ_DESC_F_NEXT,
				     d);
			fzq_put_desc(g->desc, d, at + 20, len - 20, VIRTQ_DESC_F_WRITE, 0);
		} else {
			fzq_put_desc(g->desc, head, at, len, VIRTQ_DESC_F_WRITE, 0);
		}
		fzq_publish(g, head);
	}
}

/* Up to 256 REQUESTs from consecutive guest ports, published at once. */
static void request_flood(struct fz_q *g)
{
	unsigned int n = 1 + fz_u8();
	uint32_t port = fz_u8() & 1 ? LPORT_NONE : LPORT_B, src = GPORT + fz_u16();
	for (unsigned int i = 0; i < n; i++) {
		struct virtio_vsock_hdr h = {.src_cid = CID,
					     .dst_cid = VSOCK_HOST_CID,
					     .src_port = src + i,
					     .dst_port = port,
					     .type = VIRTIO_VSOCK_TYPE_STREAM,
					     .op = VIRTIO_VSOCK_OP_REQUEST,
					     .buf_alloc = VSOCK_CONN_BUF};
		uint64_t at = FZ_BUF_BASE + (uint64_t)(i * 48) % 0x7000;
		memcpy(fz_at(at), &h, sizeof(h));
		uint16_t head = take_desc(g, VSOCK_TXQ);
		fzq_put_desc(g->desc, head, at, VSOCK_HDR_LEN, 0, 0);
		fzq_publish(g, head);
	}
}

/* ---- the host ---- */

static int *host_slot(void)
{
	return &hfd[fz_u8() % NR_HOST];
}

static void host_put(int fd)
{
	for (int i = 0; i < NR_HOST; i++)
		if (hfd[i] < 0) {
			hfd[i] = fd;
			return;
		}
	close(fd);
}

static void host_connect(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", uds);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
		host_put(fd);
	else if (fd >= 0)
		close(fd);
}

static void host_send(int fd, const void *p, size_t n)
{
	ssize_t w = fd >= 0 ? send(fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL) : -1;
	if (w > 0)
		host_sent += (uint64_t)w;
}

/* A first line of any shape: well-formed, any number, bytes from the
 * stream, or a line cut short (the rest may follow as bytes). */
static void host_line(void)
{
	int fd = *host_slot();
	char line[48];
	uint8_t k = fz_u8();
	int n;
	switch (k % 4) {
	case 0:
		n = snprintf(line, sizeof(line), "CONNECT %u\n", GPORT + (k >> 2) % 8);
		break;
	case 1:
		n = snprintf(line, sizeof(line), "CONNECT %u\n", fz_u32());
		break;
	case 2:
		n = (int)fz_bytes(line, fz_u8() % (sizeof(line) + 1));
		break;
	default:
		n = snprintf(line, sizeof(line), "CONNECT %u", GPORT + (k >> 2) % 8);
		n -= (k >> 5) % 3;
	}
	host_send(fd, line, (size_t)n);
}

static void host_op(uint8_t op)
{
	int *fd = host_slot();
	if (*fd < 0)
		return;
	switch (op % 5) {
	case 0:
		host_send(*fd, io_buf, fz_u16());
		break;
	case 1:
		(void)!recv(*fd, io_buf, fz_u16(), MSG_DONTWAIT); /* EAGAIN or not: as is */
		break;
	case 2:
		shutdown(*fd, SHUT_WR);
		break;
	case 3:
		shutdown(*fd, SHUT_RD);
		break;
	default:
		close(*fd);
		*fd = -1;
	}
}

static void host_accept(void)
{
	int fd = accept4(lfd[fz_u8() % 2], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd >= 0)
		host_put(fd);
}

/* One of the device's host streams gets the smallest send buffer: its
 * peer stops reading sooner, and the device must hold the rest. */
static void shrink_sndbuf(struct virtio_vsock *v)
{
	uint16_t i = fz_u16();
	if (!v->hw || v->conns[i % v->hw].fd < 0)
		return;
	int one = 1;
	setsockopt(v->conns[i % v->hw].fd, SOL_SOCKET, SO_SNDBUF, &one, sizeof(one));
}

/* ---- the input ---- */

static void activate(struct virtio_dev *dev, struct fz_q *g)
{
	for (unsigned int i = 0; i < VSOCK_NR_QUEUES; i++) {
		fzq_configure(&dev->vqs[i], &g[i], dev->driver_features);
		virtq_activate(&dev->vqs[i], &fz_gm);
	}
	dev->ops->activate(dev);
}

static void reset(struct virtio_dev *dev, struct fz_q *g)
{
	dev->ops->reset(dev);
	for (unsigned int i = 0; i < VSOCK_NR_QUEUES; i++) {
		virtq_reset(&dev->vqs[i]);
		g[i].avail_idx = 0;
		next_desc[i] = 0;
	}
}

static void step(struct virtio_dev *dev, struct fz_q *g, uint8_t op)
{
	struct virtio_vsock *v = dev->priv;
	unsigned int q = (op >> 4) % VSOCK_NR_QUEUES;
	uint8_t buf[8];
	switch (op % 16) {
	case 0: /* DRIVER_OK, as the transport does it */
		activate(dev, g);
		break;
	case 1:
		dev->ops->queue_notify(dev, q);
		break;
	case 2:
		virtio_vsock_poll(dev);
		break;
	case 3:
		reset(dev, g);
		break;
	case 4:
		dev->ops->config_read(dev, fz_u8() % 12, buf, 1 + fz_u8() % 8);
		break;
	case 5:
		tx_packet(v, &g[VSOCK_TXQ]);
		break;
	case 6:
		rx_buffers(&g[VSOCK_RXQ]);
		break;
	case 7:
		host_connect();
		break;
	case 8:
		host_line();
		break;
	case 9:
	case 10:
		host_op(op >> 4);
		break;
	case 11:
		host_accept();
		break;
	case 12:
		shrink_sndbuf(v);
		break;
	case 13:
		request_flood(&g[VSOCK_TXQ]);
		break;
	default:
		fzq_driver_op(&g[q], fz_u8());
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_q g[VSOCK_NR_QUEUES];

	fz_begin(data, size);
	int fds = fds_open();
	host_sent = 0;
	lfd[0] = unix_listen(lpath[0], 4);
	lfd[1] = unix_listen(lpath[1], 1024);
	struct virtio_dev *dev = dev_new();
	struct virtio_vsock *v = dev->priv;
	dev->driver_features = (1ULL << VIRTIO_F_VERSION_1 | 1ULL << VIRTQ_F_INDIRECT_DESC |
				1ULL << VIRTQ_F_EVENT_IDX) &
			       ~((uint64_t)fz_u8() << 28);
	if (virtio_dev_init_queues(dev) < 0)
		abort();
	for (unsigned int q = 0; q < VSOCK_NR_QUEUES; q++) {
		fzq_layout(&g[q], q, (uint16_t)(1u << (fz_u8() % 9))); /* 1..256 */
		next_desc[q] = 0;
	}
	for (unsigned int steps = 0; fz_more() && steps < 512; steps++) {
		snapshot(v);
		step(dev, g, fz_u8());
		check_state(v);
	}
	/* A device torn down with live streams leaves no fd behind. */
	virtio_vsock_destroy(dev);
	for (int i = 0; i < NR_HOST; i++)
		if (hfd[i] >= 0) {
			close(hfd[i]);
			hfd[i] = -1;
		}
	close(lfd[0]);
	close(lfd[1]);
	FZ_CHECK(fds_open() == fds);
	return 0;
}
