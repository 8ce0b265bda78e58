// SPDX-License-Identifier: Apache-2.0
/* virtio-vsock's TX queue: the guest's packets (virtio 1.2 §5.10.6). Every
 * header is checked before anything acts on it: length within the chain
 * and VSOCK_PKT_MAX, STREAM type, the guest's own CID as source, the host
 * as destination, a known op. A packet for no connection is answered
 * with a RST from a bounded queue (full: dropped and counted). mu held. */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/dma.h"
#include "devices/virtio-vsock/virtio_vsock_priv.h"

/* A header in host order. */
struct pkt {
	uint64_t src_cid, dst_cid;
	uint32_t src_port, dst_port, len;
	uint16_t type, op;
	uint32_t flags, buf_alloc, fwd_cnt;
};

static void pkt_from(struct pkt *p, const struct virtio_vsock_hdr *h)
{
	*p = (struct pkt){.src_cid = le64toh(h->src_cid),
			  .dst_cid = le64toh(h->dst_cid),
			  .src_port = le32toh(h->src_port),
			  .dst_port = le32toh(h->dst_port),
			  .len = le32toh(h->len),
			  .type = le16toh(h->type),
			  .op = le16toh(h->op),
			  .flags = le32toh(h->flags),
			  .buf_alloc = le32toh(h->buf_alloc),
			  .fwd_cnt = le32toh(h->fwd_cnt)};
}

void vsock_orphan_rst(struct virtio_vsock *v, uint32_t src_port, uint32_t dst_port)
{
	if (v->nr_orphans == VSOCK_ORPHAN_MAX) {
		counter_add(&v->stats.killq_resync, 1);
		return;
	}
	v->orphans[v->nr_orphans++] = (struct vsock_orphan){src_port, dst_port};
}

/* ---- RW: bytes for the host peer ---- */

/* Copies len bytes at off of the chain into the ring behind what waits. */
static void buf_append(struct vsock_conn *c, const struct virtq_elem *e, size_t off, uint32_t len)
{
	while (len) {
		uint32_t tail = (c->buf_head + c->buf_len) % VSOCK_CONN_BUF;
		uint32_t run = VSOCK_CONN_BUF - tail;
		run = run < len ? run : len;
		/* Relaxed: virtq_pop's acquire fence ordered the chain. */
		dma_sg_read_relaxed(e->iov, e->out_num, off, c->buf + tail, run);
		c->buf_len += run;
		off += run;
		len -= run;
	}
}

/* Straight from the chain to the host socket while nothing waits before
 * it: the bytes sent (0 if the socket is full), or -1 if the peer is gone. */
static ssize_t send_direct(struct virtio_vsock *v, struct vsock_conn *c, const struct virtq_elem *e,
			   uint32_t len)
{
	if (c->buf_len || c->line_len || c->fd < 0)
		return 0;
	int n = dma_sg_slice(e->iov, e->out_num, VSOCK_HDR_LEN, len, v->iov, VIRTQ_MAX_SEGS);
	if (n <= 0)
		return 0;
	struct msghdr m = {.msg_iov = v->iov, .msg_iovlen = (size_t)n};
	ssize_t w = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return 0;
	return w;
}

static void tx_rw(struct virtio_vsock *v, struct vsock_conn *c, const struct virtq_elem *e,
		  uint32_t len)
{
	if (c->state != VS_ESTAB || c->guest_shut_send) {
		vsock_conn_close(v, c, true);
		return;
	}
	/* The guest may have in flight what we advertised; more is a lie
	 * about credit, and the stream ends rather than the buffer growing. */
	if (c->buf_len + len > VSOCK_CONN_BUF) {
		counter_add(&v->stats.credit_lies, 1);
		vsock_conn_close(v, c, true);
		return;
	}
	ssize_t sent = send_direct(v, c, e, len);
	if (sent < 0) {
		vsock_conn_close(v, c, true);
		return;
	}
	c->tx_cnt += len;
	c->fwd_cnt += (uint32_t)sent;
	counter_add(&v->stats.tx_bytes_count, len);
	if ((uint32_t)sent < len) {
		if (!c->buf && !(c->buf = malloc(VSOCK_CONN_BUF))) {
			vsock_conn_close(v, c, true);
			return;
		}
		buf_append(c, e, VSOCK_HDR_LEN + (size_t)sent, len - (uint32_t)sent);
	}
	if (c->fwd_cnt - c->fwd_told >= VSOCK_CREDIT_STEP)
		c->owe |= VS_OWE_CREDIT;
}

/* ---- the ops ---- */

static void tx_request(struct virtio_vsock *v, const struct pkt *p)
{
	/* The slot first, so a flood of REQUESTs costs no connect(2) each. */
	int fd = v->nr_conns < VSOCK_MAX_CONNS ? vsock_host_connect(v, p->dst_port) : -1;
	struct vsock_conn *c =
	    fd >= 0 ? vsock_conn_new(v, fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP) : NULL;
	if (!c) {
		if (fd >= 0)
			close(fd);
		counter_add(&v->stats.refused, 1);
		vsock_orphan_rst(v, p->dst_port, p->src_port);
		return;
	}
	c->local_port = p->dst_port;
	c->peer_port = p->src_port;
	c->peer_buf_alloc = p->buf_alloc;
	c->peer_fwd_cnt = p->fwd_cnt;
	c->owe = VS_OWE_RESPONSE;
}

static void tx_response(struct virtio_vsock *v, struct vsock_conn *c)
{
	if (c->state != VS_REQ_SENT) {
		vsock_conn_close(v, c, true);
		return;
	}
	c->state = VS_ESTAB;
	c->line_len =
	    (uint32_t)snprintf(c->line, sizeof(c->line), "OK %" PRIu32 "\n", c->local_port);
	if (vsock_host_flush(v, c) < 0)
		vsock_conn_close(v, c, true);
}

static void tx_shutdown(struct virtio_vsock *v, struct vsock_conn *c, uint32_t flags)
{
	if (flags & VIRTIO_VSOCK_SHUTDOWN_RCV)
		c->guest_shut_rcv = true;
	if (flags & VIRTIO_VSOCK_SHUTDOWN_SEND)
		c->guest_shut_send = true;
	/* Both ways, or the host already gone: what waits goes out first,
	 * then the RST the guest's close waits for (vsock_host_flush). */
	if (c->guest_shut_send && vsock_host_flush(v, c) < 0)
		vsock_conn_close(v, c, true);
}

/* Checks a header: 0, or -1 (the packet is dropped and counted). A wrong
 * type or op gets a RST: the guest learns the stream cannot be. */
static int tx_check(struct virtio_vsock *v, const struct pkt *p, const struct virtq_elem *e)
{
	bool ok = e->out_len >= VSOCK_HDR_LEN && p->len <= VSOCK_PKT_MAX &&
		  p->len <= e->out_len - VSOCK_HDR_LEN && p->src_cid == v->cid &&
		  p->dst_cid == VSOCK_HOST_CID;
	if (ok && p->type == VIRTIO_VSOCK_TYPE_STREAM && p->op >= VIRTIO_VSOCK_OP_REQUEST &&
	    p->op <= VIRTIO_VSOCK_OP_CREDIT_REQUEST)
		return 0;
	counter_add(&v->stats.bad_packets, 1);
	if (ok && p->op != VIRTIO_VSOCK_OP_RST)
		vsock_orphan_rst(v, p->dst_port, p->src_port);
	return -1;
}

static void tx_packet(struct virtio_vsock *v, const struct virtq_elem *e)
{
	struct virtio_vsock_hdr h;
	struct pkt p;
	/* Relaxed: virtq_pop's acquire fence ordered the chain. */
	if (dma_sg_read_relaxed(e->iov, e->out_num, 0, &h, sizeof(h)) != sizeof(h)) {
		counter_add(&v->stats.bad_packets, 1);
		return;
	}
	pkt_from(&p, &h);
	if (tx_check(v, &p, e) < 0)
		return;
	counter_add(&v->stats.tx_packets_count, 1);
	struct vsock_conn *c = vsock_conn_find(v, p.dst_port, p.src_port);
	if (p.op == VIRTIO_VSOCK_OP_REQUEST) {
		if (c && c->state != VS_CLOSING) /* open: reset, as Linux does */
			vsock_conn_close(v, c, true);
		else if (!c)
			tx_request(v, &p);
		return;
	}
	if (!c) {
		if (p.op != VIRTIO_VSOCK_OP_RST)
			vsock_orphan_rst(v, p.dst_port, p.src_port);
		return;
	}
	if (c->state == VS_CLOSING)
		return; /* our RST is on its way */
	/* Every header carries the guest's credit. */
	c->peer_buf_alloc = p.buf_alloc;
	c->peer_fwd_cnt = p.fwd_cnt;
	c->credit_asked = false;
	switch (p.op) {
	case VIRTIO_VSOCK_OP_RESPONSE:
		tx_response(v, c);
		break;
	case VIRTIO_VSOCK_OP_RST:
		vsock_conn_close(v, c, false);
		break;
	case VIRTIO_VSOCK_OP_SHUTDOWN:
		tx_shutdown(v, c, p.flags);
		break;
	case VIRTIO_VSOCK_OP_RW:
		tx_rw(v, c, e, p.len);
		break;
	case VIRTIO_VSOCK_OP_CREDIT_REQUEST:
		c->owe |= VS_OWE_CREDIT;
		break;
	default: /* CREDIT_UPDATE: taken above */
		break;
	}
}

void vsock_tx_run(struct virtio_vsock *v)
{
	struct virtq *vq = &v->vdev.vqs[VSOCK_TXQ];
	const struct guest_mem *gm = v->vdev.gm;
	const struct virtio_transport_ops *t = v->vdev.transport;
	bool pushed = false;
	for (unsigned int budget = VSOCK_TX_BUDGET; v->active; budget--) {
		if (!budget) {
			/* The rest comes back through the transport, or
			 * through our own wake-up. */
			uint64_t one = 1;
			if ((!t->queue_resched || t->queue_resched(&v->vdev, VSOCK_TXQ) < 0) &&
			    write(v->wake_fd, &one, sizeof(one)) < 0)
				counter_add(&v->stats.conn_event_fails, 1);
			break;
		}
		if (virtq_pop(vq, gm, &v->elem) <= 0)
			break;
		tx_packet(v, &v->elem);
		if (virtq_push(vq, gm, v->elem.head, 0) < 0)
			break;
		pushed = true;
	}
	if (pushed)
		virtio_notify_if_needed(&v->vdev, VSOCK_TXQ);
}
