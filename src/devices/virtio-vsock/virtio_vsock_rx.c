// SPDX-License-Identifier: Apache-2.0
/* virtio-vsock's RX queue: packets to the guest (virtio 1.2 §5.10.6).
 * RSTs for unknown connections go first, then the streams round robin:
 * each gives its owed control packet, or bytes read from its host socket
 * straight into the guest's buffer, never more than the guest's credit.
 * Nothing is buffered on this side: a guest that does not read leaves
 * the bytes in the host socket, whose writer then blocks. mu held. */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/dirty.h"
#include "core/dma.h"
#include "devices/virtio-vsock/virtio_vsock_priv.h"

#define RX_BUDGET 256 /* packets per run; then the I/O thread comes back */

static uint32_t peer_credit(const struct vsock_conn *c)
{
	uint32_t inflight = c->rx_cnt - c->peer_fwd_cnt;
	return inflight >= c->peer_buf_alloc ? 0 : c->peer_buf_alloc - inflight;
}

struct out {
	uint32_t src_port, dst_port, len, flags;
	uint16_t op;
};

/* Writes the header of o into the chain; a stream's header carries our
 * credit, which the guest then knows. */
static void hdr_put(struct virtio_vsock *v, const struct virtq_elem *e, const struct out *o,
		    struct vsock_conn *c)
{
	struct virtio_vsock_hdr h = {
	    .src_cid = htole64(VSOCK_HOST_CID),
	    .dst_cid = htole64(v->cid),
	    .src_port = htole32(o->src_port),
	    .dst_port = htole32(o->dst_port),
	    .len = htole32(o->len),
	    .type = htole16(VIRTIO_VSOCK_TYPE_STREAM),
	    .op = htole16(o->op),
	    .flags = htole32(o->flags),
	    .buf_alloc = htole32(VSOCK_CONN_BUF),
	    .fwd_cnt = htole32(c ? c->fwd_cnt : 0),
	};
	if (c) {
		c->fwd_told = c->fwd_cnt;
		c->owe &= ~VS_OWE_CREDIT;
	}
	/* Relaxed: virtq_push's release fence orders it before the used
	 * index the guest reads. */
	dma_sg_write_relaxed(e->iov + e->out_num, e->in_num, 0, &h, sizeof(h));
}

/* Bytes from the host peer into the chain: the payload length, 0 if none
 * now, or -1 if the peer is gone (EOF: host_eof set). */
static int64_t rx_read(struct virtio_vsock *v, struct vsock_conn *c, const struct virtq_elem *e)
{
	uint32_t want = peer_credit(c);
	uint32_t room = e->in_len - VSOCK_HDR_LEN;
	want = want < room ? want : room;
	want = want < VSOCK_PKT_MAX ? want : VSOCK_PKT_MAX;
	if (!want) {
		if (!c->credit_asked) { /* the guest's update may be lost to us */
			c->credit_asked = true;
			c->owe |= VS_OWE_CREDIT_REQ;
		}
		return 0;
	}
	int n = dma_sg_slice(e->iov + e->out_num, e->in_num, VSOCK_HDR_LEN, want, v->iov,
			     VIRTQ_MAX_SEGS);
	ssize_t r = n > 0 ? readv(c->fd, v->iov, n) : 0;
	if (r > 0) {
		dirty_mark_iov(v->iov, (unsigned int)n, (size_t)r); /* core/dirty.h */
		return r;
	}
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
		c->readable = false; /* the next edge sets it */
		return 0;
	}
	if (r < 0)
		counter_add(&v->stats.rx_read_fails, 1);
	c->readable = false;
	c->host_eof = true;
	return -1;
}

/* One packet of c's into the chain: its control packet or its bytes, in
 * o. False if c has nothing to send now. */
static bool rx_conn(struct virtio_vsock *v, struct vsock_conn *c, const struct virtq_elem *e,
		    struct out *o)
{
	*o = (struct out){.src_port = c->local_port, .dst_port = c->peer_port};
	if (c->owe & VS_OWE_RST) {
		o->op = VIRTIO_VSOCK_OP_RST;
		return true;
	}
	if (c->owe & (VS_OWE_REQUEST | VS_OWE_RESPONSE)) {
		o->op =
		    c->owe & VS_OWE_REQUEST ? VIRTIO_VSOCK_OP_REQUEST : VIRTIO_VSOCK_OP_RESPONSE;
		c->owe &= ~(VS_OWE_REQUEST | VS_OWE_RESPONSE);
		return true;
	}
	if (c->state == VS_ESTAB && c->readable && !c->host_eof && !c->guest_shut_rcv) {
		int64_t r = rx_read(v, c, e);
		if (r > 0) {
			o->op = VIRTIO_VSOCK_OP_RW;
			o->len = (uint32_t)r;
			c->rx_cnt += (uint32_t)r;
			counter_add(&v->stats.rx_bytes_count, (uint64_t)r);
			return true;
		}
		if (r < 0) { /* the host sends no more; it may still read */
			o->op = VIRTIO_VSOCK_OP_SHUTDOWN;
			o->flags = VIRTIO_VSOCK_SHUTDOWN_SEND;
			return true;
		}
	}
	if (c->owe & VS_OWE_CREDIT_REQ) {
		c->owe &= ~VS_OWE_CREDIT_REQ;
		o->op = VIRTIO_VSOCK_OP_CREDIT_REQUEST;
		return true;
	}
	if (c->owe & VS_OWE_CREDIT) {
		o->op = VIRTIO_VSOCK_OP_CREDIT_UPDATE;
		return true;
	}
	return false;
}

/* Fills the chain with the next packet: its length, or 0 if nothing is
 * owed to the guest now. */
static uint32_t rx_one(struct virtio_vsock *v, const struct virtq_elem *e)
{
	struct out o;
	if (v->nr_orphans) {
		const struct vsock_orphan *r = &v->orphans[--v->nr_orphans];
		o = (struct out){
		    .src_port = r->src_port, .dst_port = r->dst_port, .op = VIRTIO_VSOCK_OP_RST};
		hdr_put(v, e, &o, NULL);
		return VSOCK_HDR_LEN;
	}
	for (unsigned int k = 0; k < v->hw; k++) {
		unsigned int i = (v->rr + k) % v->hw;
		struct vsock_conn *c = &v->conns[i];
		if (c->state == VS_FREE || c->state == VS_HOST_LINE || !rx_conn(v, c, e, &o))
			continue;
		hdr_put(v, e, &o, c);
		v->rr = i + 1;
		if (o.op == VIRTIO_VSOCK_OP_RST) /* the guest knows: the slot is free */
			vsock_conn_close(v, c, false);
		return VSOCK_HDR_LEN + o.len;
	}
	return 0;
}

void vsock_rx_run(struct virtio_vsock *v)
{
	struct virtq *vq = &v->vdev.vqs[VSOCK_RXQ];
	const struct guest_mem *gm = v->vdev.gm;
	bool pushed = false;
	for (unsigned int budget = RX_BUDGET; v->active; budget--) {
		if (!budget) {
			/* More may wait: a turn of the I/O thread's loop later. */
			uint64_t one = 1;
			if (write(v->wake_fd, &one, sizeof(one)) < 0)
				counter_add(&v->stats.conn_event_fails, 1);
			break;
		}
		if (virtq_pop(vq, gm, &v->elem) <= 0)
			break;
		uint32_t len = 0;
		if (v->elem.out_num || v->elem.in_len <= VSOCK_HDR_LEN)
			counter_add(&v->stats.bad_packets, 1); /* no room: back empty */
		else if (!(len = rx_one(v, &v->elem))) {
			virtq_unpop(vq);
			break;
		}
		if (virtq_push(vq, gm, v->elem.head, len) < 0)
			break;
		if (len)
			counter_add(&v->stats.rx_packets_count, 1);
		pushed = true;
	}
	if (pushed)
		virtio_notify_if_needed(&v->vdev, VSOCK_RXQ);
}
