// SPDX-License-Identifier: Apache-2.0
/* virtio-net TX and RX (src/devices/virtio-net/virtio_net*.c) with a SOCK_SEQPACKET
 * socketpair as the tap (tap_from_fd, one packet per message, 12-byte vnet
 * header in front): fuzz bytes pick the negotiated features (offloads,
 * MRG_RXBUF, NOTF_COAL), build chains on all three queues (rx, tx and
 * the control queue, where coalescing is set), send frames of any length
 * and header from the "host" side, kick, fire the coalescing timers, fill
 * the wire until TX blocks, and reset. Guest RAM changes under the device
 * (fuzz_common.h).
 *
 * Checked beyond ASan/UBSan: every packet the device writes to the tap has
 * a whole header, a frame no longer than VIRTIO_NET_MAX_FRAME, and only the
 * header flags and GSO types the driver negotiated. Every frame the device
 * publishes on the rx queue (one virtq_push_batch, seen through
 * fz_on_push) takes the chains popped for it in order, each used length
 * within its chain's writable size and none empty that had room; its
 * header says num_buffers = the used entries it occupies (more than one
 * only with MRG_RXBUF); the lengths add up to the header and the frame
 * the host sent (cut only past what any read has room for). */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "devices/virtio-net/virtio_net_priv.h"
#include "fuzz_common.h"

static struct virtio_net *net;
static int wire = -1; /* the host's end of the "tap" */
static uint8_t frame[VIRTIO_NET_HDR_LEN + VIRTIO_NET_MAX_FRAME + 64];

#define MAX_STEPS 512 /* ops per input */

/* What the checks of rx_pushed know. The rx chains popped, by avail
 * position (an unpop only moves the position back). */
static struct {
	uint16_t head;
	uint32_t in_len; /* writable bytes */
} rx_pop[VIRTIO_NET_QUEUE_SIZE];
/* The frames sent (header included) and not yet delivered or dropped, in
 * tap order, at most one a step. Not those of length 0: a read of one
 * returns 0, which the device takes for an empty tap, counting nothing. */
static uint32_t rx_sent[MAX_STEPS];
static unsigned int rx_sent_head, rx_sent_tail;
static uint64_t rx_dropped_seen; /* stats.rx_dropped already matched to frames */

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

static bool is_rxq(const struct virtq *vq)
{
	return vq == &net->vdev.vqs[VIRTIO_NET_RXQ];
}

static void rx_popped(const struct virtq *vq, const struct virtq_elem *e)
{
	if (!is_rxq(vq))
		return;
	unsigned int pos = (uint16_t)(vq->last_avail_idx - 1) % VIRTIO_NET_QUEUE_SIZE;
	rx_pop[pos].head = e->head;
	rx_pop[pos].in_len = e->in_len;
}

/* The header the device wrote at the start of chain e. False if part of it
 * lies in vq's used ring, which the push wrote after it (a guest may put
 * its buffers anywhere). */
static bool rx_peek_hdr(const struct virtq *vq, const struct virtq_elem *e,
			struct virtio_net_hdr_v1 *h)
{
	const uintptr_t ring = (uintptr_t)vq->used, ring_end = ring + 6 + 8 * (size_t)vq->size;
	uint8_t *out = (uint8_t *)h;
	size_t len = sizeof(*h);

	for (unsigned int i = e->out_num; i < e->out_num + e->in_num && len; i++) {
		uintptr_t b = (uintptr_t)e->iov[i].iov_base;
		size_t c = e->iov[i].iov_len < len ? e->iov[i].iov_len : len;
		if (c && b < ring_end && b + c > ring)
			return false;
		memcpy(out, e->iov[i].iov_base, c);
		out += c;
		len -= c;
	}
	FZ_CHECK(len == 0); /* rx_start: every first chain holds a header */
	return true;
}

/* A frame the device just published on the rx queue: entries
 * [used_idx - n, used_idx) of the used ring, read back from guest RAM
 * (nothing can have changed them since the push). */
static void rx_pushed(const struct virtq *vq, const struct virtq_used_elem *e, unsigned int n)
{
	const struct virtio_net_pair *p = &net->pairs[0];
	const uint16_t old = (uint16_t)(vq->used_idx - n);
	struct virtio_net_hdr_v1 h;
	uint64_t sum = 0;

	(void)e;
	if (!is_rxq(vq))
		return;
	/* The frame takes every chain popped for it, in order; one without
	 * MRG_RXBUF. */
	FZ_CHECK(n >= 1 && vq->last_avail_idx == vq->used_idx);
	FZ_CHECK(n == 1 || virtio_has_feature(&net->vdev, VIRTIO_NET_F_MRG_RXBUF));
	for (unsigned int i = 0; i < n; i++) {
		const uint16_t pos = (uint16_t)(old + i);
		const uint32_t room = rx_pop[pos % VIRTIO_NET_QUEUE_SIZE].in_len;
		struct virtq_used_elem u;
		memcpy(&u, vq->used + 4 + 8 * (pos & (vq->size - 1)), sizeof(u));
		FZ_CHECK(u.id == rx_pop[pos % VIRTIO_NET_QUEUE_SIZE].head);
		FZ_CHECK(u.len <= room);
		/* Chains left empty are given back (rx_read): only one without
		 * room (rx_gather takes any) is published empty. */
		FZ_CHECK(i ? u.len || !room : u.len >= VIRTIO_NET_HDR_LEN);
		sum += u.len;
	}
	/* Invariant 1: num_buffers in the frame's first chain. */
	FZ_CHECK(p->rx_first.head == rx_pop[old % VIRTIO_NET_QUEUE_SIZE].head);
	if (rx_peek_hdr(vq, &p->rx_first, &h))
		FZ_CHECK(h.num_buffers == n);
	/* Invariant 2: the frames dropped since the last one delivered came
	 * first; this one is the next the host sent. Its bytes add up to what
	 * was sent; only a frame longer than the header and rx_buf can have
	 * been cut, where the read ran out of room. */
	const uint64_t dropped = counter_get(&net->stats.rx_dropped);
	FZ_CHECK(rx_sent_tail - rx_sent_head > dropped - rx_dropped_seen);
	rx_sent_head += (unsigned int)(dropped - rx_dropped_seen);
	rx_dropped_seen = dropped;
	const size_t sent = rx_sent[rx_sent_head++];
	const size_t least = VIRTIO_NET_HDR_LEN + sizeof(p->rx_buf); /* any read has room for it */
	FZ_CHECK(sent <= least ? sum == sent : sum >= least && sum <= sent);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x42};
	char err[200];
	struct tap tap;
	int sv[2];

	(void)argc, (void)argv;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv) < 0)
		abort();
	tap_from_fd(&tap, sv[0]);
	wire = sv[1];
	net = virtio_net_create("virtio-net0", &tap, 1, mac, err, sizeof(err));
	if (!net)
		abort();
	net->vdev.gm = &fz_gm;
	net->vdev.transport = &fake_transport;
	fz_on_pop = rx_popped;
	fz_on_push = rx_pushed;
	/* The fuzzer plays the I/O thread: it fires the timers (case 9). */
	atomic_store(&net->coal_watched, true);
	pthread_mutex_init(&net->vdev.lock, NULL);
	return 0;
}

/* Reads what the device sent and checks it. */
static void wire_drain(void)
{
	const struct virtio_dev *v = &net->vdev;
	ssize_t r;

	while ((r = recv(wire, frame, sizeof(frame), MSG_TRUNC)) >= 0) {
		struct virtio_net_hdr_v1 h;
		FZ_CHECK(r >= VIRTIO_NET_HDR_LEN);
		FZ_CHECK(r - VIRTIO_NET_HDR_LEN <= VIRTIO_NET_MAX_FRAME);
		memcpy(&h, frame, sizeof(h));
		FZ_CHECK((h.flags & ~VIRTIO_NET_HDR_F_NEEDS_CSUM) == 0);
		FZ_CHECK(!h.flags || virtio_has_feature(v, VIRTIO_NET_F_CSUM));
		FZ_CHECK(virtio_net_gso_ok(v, h.gso_type, VIRTIO_NET_F_HOST_TSO4,
					   VIRTIO_NET_F_HOST_TSO6));
		FZ_CHECK(h.num_buffers == 0);
	}
}

/* Empties both ends and the scheduler's eventfd: a clean start. */
static void flush_all(void)
{
	uint64_t cnt;
	while (recv(wire, frame, sizeof(frame), MSG_TRUNC) >= 0) {
	}
	while (recv(net->pairs[0].tap.fd, frame, sizeof(frame), MSG_TRUNC) >= 0) {
	}
	while (read(net->sched_fd, &cnt, sizeof(cnt)) > 0) {
	}
	atomic_store(&net->sched, 0);
}

/* A frame from the host: a header from the stream, a length, a pattern. */
static void wire_send(void)
{
	uint8_t sel = fz_u8();
	size_t len = sel & 1 ? fz_u16() % (VIRTIO_NET_MAX_FRAME + 64) : fz_u8();
	size_t head = len < 64 ? len : 64;

	if (sel & 2) {
		memset(frame, 0, VIRTIO_NET_HDR_LEN);
		frame[0] = fz_u8() & 3;
		frame[1] = fz_u8();
	} else {
		fz_bytes(frame, VIRTIO_NET_HDR_LEN);
	}
	if (sel & 4) /* shorter than a header */
		len = fz_u8() % VIRTIO_NET_HDR_LEN, head = 0;
	else
		len += VIRTIO_NET_HDR_LEN;
	fz_bytes(frame + (len > head ? len - head : 0), head);
	if (send(wire, frame, len, 0) < 0) {
		if (errno != EAGAIN)
			abort();
	} else if (len) {
		rx_sent[rx_sent_tail++] = (uint32_t)len;
	}
}

/* The host stops reading: fill the wire until sends fail. */
static void wire_fill(void)
{
	static const uint8_t junk[2048];
	while (send(net->pairs[0].tap.fd, junk, sizeof(junk), 0) >= 0) {
	}
}

/* rx, tx, control. The control queue's rings (fzq_layout: 0x8000) lie
 * among the chains' buffers: a guest may overlap them too. */
#define NQ 3

static void dev_reset(struct virtio_dev *v)
{
	v->ops->reset(v);
	for (unsigned int q = 0; q < NQ; q++)
		virtq_reset(&v->vqs[q]);
}

/* A well-formed coalescing command on the control queue, laid out as
 * Linux does (header, data, ack), so that runs reach the parameters
 * soon; its direction and values come from the stream. */
static void ctrl_coal(struct fz_q *g)
{
	uint16_t sz = g->size ? g->size : 1, i = fz_u8() % sz;
	uint64_t buf = 0xf000;
	uint8_t cmd[10] = {VIRTIO_NET_CTRL_NOTF_COAL, fz_u8() & 1, fz_u8()};
	uint16_t us = fz_u16(); /* up to 65 ms: mostly accepted */
	memcpy(cmd + 6, &us, 2);
	memcpy(fz_at(buf), cmd, sizeof(cmd));
	fzq_put_desc(g->desc, i, buf, 2, VIRTQ_DESC_F_NEXT, (uint16_t)((i + 1) % sz));
	fzq_put_desc(g->desc, (i + 1) % sz, buf + 2, 8, VIRTQ_DESC_F_NEXT,
		     (uint16_t)((i + 2) % sz));
	fzq_put_desc(g->desc, (i + 2) % sz, buf + 16, 1, VIRTQ_DESC_F_WRITE, 0);
	fzq_publish(g, i);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct virtio_dev *v = &net->vdev;
	struct fz_q g[NQ];
	bool active = false;

	fz_begin(data, size);
	flush_all();
	rx_sent_head = rx_sent_tail = 0;
	rx_dropped_seen = counter_get(&net->stats.rx_dropped);
	v->driver_features = v->host_features & ~fz_u64();
	if (virtio_dev_init_queues(v) < 0)
		abort();
	for (unsigned int q = 0; q < NQ; q++)
		fzq_layout(&g[q], q, (uint16_t)(1u << (fz_u8() % 9))); /* 1..256 */
	for (unsigned int steps = 0; fz_more() && steps < MAX_STEPS; steps++) {
		uint8_t op = fz_u8();
		switch (op % 12) {
		case 0: /* DRIVER_OK */
			if (active)
				break;
			for (unsigned int q = 0; q < NQ; q++) {
				fzq_configure(&v->vqs[q], &g[q], v->driver_features);
				virtq_activate(&v->vqs[q], &fz_gm);
			}
			active = v->ops->activate(v) == 0;
			break;
		case 1:
			v->ops->queue_notify(v, (op >> 6) % NQ); /* refill, TX or control kick */
			break;
		case 2:
			wire_send();
			break;
		case 3:
			virtio_net_tap_event(&net->pairs[0], EPOLLIN);
			break;
		case 4:
			wire_drain();
			virtio_net_tap_event(&net->pairs[0], EPOLLOUT);
			break;
		case 5:
			virtio_net_sched_event(net, EPOLLIN);
			break;
		case 6:
			if (op & 0x80)
				wire_fill();
			else
				wire_drain();
			break;
		case 7:
			dev_reset(v);
			for (unsigned int q = 0; q < NQ; q++)
				g[q].avail_idx = 0;
			active = false;
			break;
		case 9:
			ctrl_coal(&g[2]);
			v->ops->queue_notify(v, 2);
			break;
		case 8: /* a coalescing timer expires */
			virtio_net_coal_event(
			    op & 0x80 ? &net->pairs[0].tx_coal : &net->pairs[0].rx_coal, EPOLLIN);
			break;
		default:
			fzq_driver_op(&g[(op >> 6) % NQ], fz_u8());
		}
	}
	wire_drain();
	dev_reset(v);
	return 0;
}
