// SPDX-License-Identifier: Apache-2.0
/* virtio-net receive: frames from the tap into the guest's rx queue.
 *
 * One frame: pop a chain, readv() the tap straight into it (the 12-byte
 * header lands in host memory first, to be checked), with the bounce
 * buffer rx_buf after the chain for what does not fit. With MRG_RXBUF,
 * chains enough for a frame as long as the one before are popped ahead
 * and read into as well (those left empty go back); what still overflows
 * is copied into further chains, and num_buffers says how many. All of a
 * frame's chains are published in one batch.
 *
 * No buffers: the tap is left unread (its queue holds packets, and drops
 * and counts them when full), guest kicks are re-enabled and the guest's
 * refill kick resumes RX. Buffers running out in the middle of a frame:
 * the chains filled so far stay popped and the rest stays in rx_buf; the
 * refill kick continues the frame. Keeping them popped (not unpopping)
 * matters: the kick is armed at the avail index we have consumed, so
 * chains given back would make every re-check find "work" and spin. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "devices/virtio-net/virtio_net_priv.h"
#include "core/dirty.h"
#include "core/dma.h"

enum rx_result {
	RX_DONE,       /* a frame delivered or dropped: go on */
	RX_TAP_EMPTY,  /* the tap said EAGAIN (or failed): wait for EPOLLIN */
	RX_NO_BUFFERS, /* the guest has no (or too few) buffers posted */
	RX_BROKEN,     /* the queue is broken: stop */
};

/* Pair i's rx queue is virtqueue 2i. */
static unsigned int rx_qi(const struct virtio_net_pair *p)
{
	return 2 * p->index + VIRTIO_NET_RXQ;
}

static struct virtq *rx_vq(struct virtio_net_pair *p)
{
	return &p->n->vdev.vqs[rx_qi(p)];
}

static struct iovec *rx_in(struct virtq_elem *e)
{
	return e->iov + e->out_num;
}

/* The header the guest gets, from the one the tap wrote. Returns false if
 * the frame uses an offload the driver did not accept: the tap is told
 * only what was negotiated (activate), so that is a leftover from before
 * a reset, and is dropped. */
static bool rx_hdr_fix(const struct virtio_net *n, struct virtio_net_hdr_v1 *h)
{
	const struct virtio_dev *v = &n->vdev;

	if (!virtio_has_feature(v, VIRTIO_NET_F_GUEST_CSUM)) {
		/* Spec 5.1.6.4.1: flags zero, checksums complete. */
		if (h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM)
			return false;
		h->flags = 0;
	}
	h->flags &= VIRTIO_NET_HDR_F_NEEDS_CSUM | VIRTIO_NET_HDR_F_DATA_VALID;
	if (!virtio_net_gso_ok(v, h->gso_type, VIRTIO_NET_F_GUEST_TSO4, VIRTIO_NET_F_GUEST_TSO6))
		return false;
	h->num_buffers = 0;
	return true;
}

/* Pops further chains after the first, while their room is short of
 * `want` (the size of the frame before), appending their buffers to
 * iov[*cnt...] (one slot kept for rx_buf) and their heads to rx_used, with
 * their sizes as the length until rx_read knows what went in. Without it
 * every byte past the first chain went through rx_buf: a second copy.
 * Returns false if the queue broke (then nothing may touch the chains). */
static bool rx_pop_ahead(struct virtio_net_pair *p, size_t want, unsigned int *cnt, size_t *room)
{
	struct virtq *vq = rx_vq(p);
	struct virtq_elem *e = &p->rx_elem;

	while (*room < want && p->rx_nused <= VIRTIO_NET_RX_AHEAD && p->rx_nused < vq->size) {
		int r = virtq_pop(vq, p->n->vdev.gm, e);
		if (r < 0)
			return false;
		if (r == 0)
			break; /* none left: what does not fit goes through rx_buf */
		int k = dma_sg_slice(rx_in(e), e->in_num, 0, SIZE_MAX, p->rx_iov + *cnt,
				     IOV_MAX - 1 - *cnt);
		if (k <= 0) {
			virtq_unpop(vq); /* too fragmented (or empty): gather takes it */
			break;
		}
		*cnt += (unsigned int)k;
		*room += e->in_len;
		p->rx_used[p->rx_nused++] =
		    (struct virtq_used_elem){.id = e->head, .len = e->in_len};
	}
	return true;
}

/* Reads one frame: header to rx_hdr, then the first chain after its
 * header room and (MRG_RXBUF) the chains popped ahead, then rx_buf. Sets
 * each chain's used length and gives back the chains left empty; *direct
 * gets the frame bytes that went into chains. Returns the frame length
 * without header, -1 (errno) if nothing was read, -2 if a frame too short
 * for a header was, -3 if the queue broke (nothing was read). */
static ssize_t rx_read(struct virtio_net_pair *p, size_t *direct)
{
	struct virtq_elem *a = &p->rx_first;
	struct iovec *iov = p->rx_iov;
	unsigned int cnt = 0;
	size_t first = 0, room; /* the first chain's room after the header; all chains' */
	ssize_t got;

	iov[cnt++] = (struct iovec){&p->rx_hdr, VIRTIO_NET_HDR_LEN};
	/* readv writes the chains before virtq_push_batch's release fence. */
	int k =
	    dma_sg_slice(rx_in(a), a->in_num, VIRTIO_NET_HDR_LEN, SIZE_MAX, iov + 1, IOV_MAX - 2);
	/* A chain of more than IOV_MAX pieces goes through rx_buf only. */
	if (k > 0) {
		cnt += (unsigned int)k;
		first = a->in_len - VIRTIO_NET_HDR_LEN;
	}
	room = first;
	if (k > 0 && virtio_has_feature(&p->n->vdev, VIRTIO_NET_F_MRG_RXBUF) &&
	    !rx_pop_ahead(p, p->rx_ahead, &cnt, &room))
		return -3;
	iov[cnt++] = (struct iovec){p->rx_buf, sizeof(p->rx_buf)};
	for (int tries = 0;; tries++) {
		got = readv(p->tap.fd, iov, (int)cnt);
		if (got >= 0 || errno != EINTR || tries == 3)
			break;
	}
	if (got == 0) {
		errno = EAGAIN; /* end of file: only a socket in tests does that */
		return -1;
	}
	if (got < 0)
		return -1;
	dirty_mark_iov(iov, cnt, (size_t)got); /* readv wrote the chains: core/dirty.h */
	/* Trust the length no further than the buffers given: everything
	 * below indexes rx_buf and the chains with it. */
	size_t cap = VIRTIO_NET_HDR_LEN + sizeof(p->rx_buf) + room;
	if ((size_t)got > cap)
		got = (ssize_t)cap;
	if (got < VIRTIO_NET_HDR_LEN)
		return -2;
	got -= VIRTIO_NET_HDR_LEN;
	*direct = (size_t)got < room ? (size_t)got : room;
	/* Each chain's share, in order; the chains past the frame go back. */
	size_t left = *direct;
	for (unsigned int i = 0; i < p->rx_nused; i++) {
		size_t size = i ? p->rx_used[i].len : first;
		size_t c = left < size ? left : size;
		p->rx_used[i].len = (uint32_t)(i ? c : VIRTIO_NET_HDR_LEN + c);
		left -= c;
	}
	while (p->rx_nused > 1 && !p->rx_used[p->rx_nused - 1].len) {
		virtq_unpop(rx_vq(p));
		p->rx_nused--;
	}
	return got;
}

/* Gives back the chains of the frame in progress and forgets the frame. */
static enum rx_result rx_drop(struct virtio_net_pair *p)
{
	struct virtio_net *n = p->n;
	while (p->rx_nused) {
		virtq_unpop(rx_vq(p));
		p->rx_nused--;
	}
	p->rx_left = 0;
	counter_add(&n->stats.rx_dropped, 1);
	return RX_DONE;
}

/* Starts a frame: pops its first chain and reads the tap. */
static enum rx_result rx_start(struct virtio_net_pair *p)
{
	struct virtio_net *n = p->n;
	struct virtq *vq = rx_vq(p);
	struct virtq_elem *a = &p->rx_first;
	size_t direct = 0;

	int r = virtq_pop(vq, n->vdev.gm, a);
	if (r <= 0)
		return r < 0 ? RX_BROKEN : RX_NO_BUFFERS;
	if (a->in_len < VIRTIO_NET_HDR_LEN) {
		/* Spec 5.1.6.3.1: every rx buffer holds at least a header. */
		virtq_mark_broken(vq, VIRTQ_ERR_DEVICE);
		return RX_BROKEN;
	}
	p->rx_used[0] = (struct virtq_used_elem){.id = a->head};
	p->rx_nused = 1;
	ssize_t got = rx_read(p, &direct);
	if (got == -3) {
		p->rx_nused = 0; /* the chains went with the queue; no frame was read */
		return RX_BROKEN;
	}
	if (got == -2 || (got >= 0 && !rx_hdr_fix(n, &p->rx_hdr)))
		return rx_drop(p);
	if (got < 0) {
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			counter_add(&n->stats.rx_errors, 1);
		for (; p->rx_nused; p->rx_nused--)
			virtq_unpop(vq);
		return RX_TAP_EMPTY;
	}
	/* rx_buf holds frame[direct, got). Only a first chain too fragmented
	 * to read into has room left: it is filled from rx_buf first. Chains
	 * popped ahead mean the first one is full. */
	size_t buffered = (size_t)got - direct, c = 0;
	if (p->rx_nused == 1) {
		size_t room = a->in_len - VIRTIO_NET_HDR_LEN - direct;
		c = buffered < room ? buffered : room;
		/* Relaxed: ordered by virtq_push_batch's release fence (rx_one). */
		dma_sg_write_relaxed(rx_in(a), a->in_num, VIRTIO_NET_HDR_LEN + direct, p->rx_buf,
				     c);
		p->rx_used[0].len = (uint32_t)(VIRTIO_NET_HDR_LEN + direct + c);
	}
	p->rx_frame = (size_t)got;
	p->rx_ahead = p->rx_frame; /* the next frame is likely as long */
	p->rx_off = c;
	p->rx_left = buffered - c;
	if (p->rx_left && !virtio_has_feature(&n->vdev, VIRTIO_NET_F_MRG_RXBUF))
		return rx_drop(p); /* the driver must post chains big enough */
	return RX_DONE;
}

/* Places the rest of the frame into further chains. Returns RX_DONE when
 * all of it is placed (or the frame was dropped), RX_NO_BUFFERS if the ring
 * ran out (the chains stay popped), RX_BROKEN. */
static enum rx_result rx_gather(struct virtio_net_pair *p)
{
	struct virtio_net *n = p->n;
	struct virtq *vq = rx_vq(p);
	struct virtq_elem *e = &p->rx_elem;

	while (p->rx_left) {
		/* All chains popped and still not enough: waiting for a
		 * refill would wait forever. */
		if (p->rx_nused >= vq->size || p->rx_nused >= VIRTIO_NET_QUEUE_SIZE)
			return rx_drop(p);
		int r = virtq_pop(vq, n->vdev.gm, e);
		if (r <= 0)
			return r < 0 ? RX_BROKEN : RX_NO_BUFFERS;
		size_t c = p->rx_left < e->in_len ? p->rx_left : e->in_len;
		/* Relaxed: ordered by virtq_push_batch's release fence (rx_one). */
		dma_sg_write_relaxed(rx_in(e), e->in_num, 0, p->rx_buf + p->rx_off, c);
		p->rx_used[p->rx_nused++] =
		    (struct virtq_used_elem){.id = e->head, .len = (uint32_t)c};
		p->rx_off += c;
		p->rx_left -= c;
	}
	return RX_DONE;
}

static enum rx_result rx_one(struct virtio_net_pair *p)
{
	struct virtio_net *n = p->n;
	struct virtq_elem *a = &p->rx_first;
	enum rx_result res;

	if (!p->rx_nused) {
		res = rx_start(p);
		if (res != RX_DONE || !p->rx_nused)
			return res; /* nothing started, or dropped */
	}
	res = rx_gather(p);
	if (res != RX_DONE || !p->rx_nused)
		return res;
	p->rx_hdr.num_buffers = (uint16_t)p->rx_nused;
	/* Relaxed: ordered by virtq_push_batch's release fence below. */
	dma_sg_write_relaxed(rx_in(a), a->in_num, 0, &p->rx_hdr, VIRTIO_NET_HDR_LEN);
	/* One batch: the driver reads num_buffers and expects all of them. */
	if (virtq_push_batch(rx_vq(p), n->vdev.gm, p->rx_used, p->rx_nused) < 0)
		return RX_BROKEN;
	p->rx_nused = 0;
	p->rx_coal.pending++;
	counter_add(&n->stats.rx_packets, 1);
	counter_add(&n->stats.rx_bytes, p->rx_frame);
	throttle_charge(&n->rx_throttle, 1, p->rx_frame);
	return RX_DONE;
}

void virtio_net_rx_discard(struct virtio_net_pair *p)
{
	struct virtio_net *n = p->n;
	if (p->rx_nused)
		counter_add(&n->stats.rx_dropped, 1);
	p->rx_nused = 0;
	p->rx_left = 0;
	p->rx_ahead = 0; /* a new driver's frames owe nothing to the old one's */
}

unsigned int virtio_net_rx_run_budget(struct virtio_net_pair *p, const unsigned int max)
{
	struct virtio_net *n = p->n;
	struct virtq *vq = rx_vq(p);
	const struct guest_mem *gm = n->vdev.gm;
	unsigned int budget = max;
	uint32_t held;
	bool starved = false;

	pthread_mutex_lock(&p->rx_lock);
	if (!virtio_net_pair_live(p) || !vq->enabled || vq->broken)
		goto out;
	held = p->rx_coal.pending; /* from earlier runs */
	/* While buffers last, kicks are useless: tap readiness drives RX. */
	virtq_disable_notify(vq, gm);
	for (; budget; budget--) {
		/* Over the limit (a packet and a byte at least): the tap
		 * keeps the packets until the timer. */
		if (!p->rx_nused && !throttle_ready(&n->rx_throttle, 1, 1))
			break;
		enum rx_result res = rx_one(p);
		if (res == RX_DONE)
			continue;
		if (res != RX_NO_BUFFERS)
			break;
		counter_add(&n->stats.rx_starved, 1);
		starved = true;
		/* Re-arm the refill kick; buffers posted meanwhile: go on. */
		if (!virtq_enable_notify(vq, gm))
			break;
		virtq_disable_notify(vq, gm);
	}
	if (!budget)
		virtio_net_schedule(p, VIRTIO_NET_SCHED_RX);
	/* Out of buffers: a held notification goes now, or the guest
	 * would not refill until the timer. */
	if (p->rx_coal.pending != held || (starved && p->rx_coal.pending))
		virtio_net_coal_pushed(&p->rx_coal, starved);
out:
	pthread_mutex_unlock(&p->rx_lock);
	return max - budget;
}

void virtio_net_rx_run(struct virtio_net_pair *p)
{
	virtio_net_rx_run_budget(p, VIRTIO_NET_BUDGET);
}
