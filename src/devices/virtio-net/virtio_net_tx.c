// SPDX-License-Identifier: Apache-2.0
/* virtio-net transmit: chains from the guest's tx queue to the tap.
 *
 * A chain is a 12-byte virtio_net_hdr and the frame, in any split across
 * descriptors (VERSION_1 implies ANY_LAYOUT). The header is copied to host
 * memory and checked against the negotiated offloads, then it and the
 * rest of the chain go to the tap in one writev(), which reads the header
 * as its vnet header. Guest memory is read by the kernel, never parsed
 * here beyond the header (core/dma.h: the rule for both).
 *
 * EAGAIN from the tap: the chain is given back (unpopped) and TX waits for
 * EPOLLOUT; nothing is lost and nothing spins.
 *
 * A guest's TCP sender waits on two things the I/O thread gives it: the
 * completion of what it sent (TCP Small Queues) and the peer's ACKs. The
 * host's stack answers a frame inside its writev, so receive runs after
 * each GSO frame, not after the run (docs/bench/2026-12-03-gso-rx:
 * guest-to-host streams). A completion's interrupt stays once per run:
 * offering each at once cost small packets 13% more exits, for no gain. */
#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include "devices/virtio-net/virtio_net_priv.h"
#include "core/dma.h"

enum tx_result {
	TX_DONE,  /* sent, or dropped and counted: complete the chain */
	TX_GSO,	  /* sent a GSO frame: complete it, then receive */
	TX_AGAIN, /* the tap is full: give the chain back */
};

/* Pair i's tx queue is virtqueue 2i + 1. */
static unsigned int tx_qi(const struct virtio_net_pair *p)
{
	return 2 * p->index + VIRTIO_NET_TXQ;
}

static struct virtq *tx_vq(struct virtio_net_pair *p)
{
	return &p->n->vdev.vqs[tx_qi(p)];
}

/* Offloads the driver may ask for are those it negotiated (5.1.6.2.1).
 * The offsets reach the host kernel, whose own checks have had holes
 * (CVE-2024-43897): they must lie inside the frame of len bytes. */
static bool tx_hdr_ok(const struct virtio_net *n, struct virtio_net_hdr_v1 *h, uint32_t len)
{
	const struct virtio_dev *v = &n->vdev;
	bool csum = h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM;

	if (csum && !virtio_has_feature(v, VIRTIO_NET_F_CSUM))
		return false;
	h->flags &= VIRTIO_NET_HDR_F_NEEDS_CSUM; /* the only flag a driver sets */
	if (!virtio_net_gso_ok(v, h->gso_type, VIRTIO_NET_F_HOST_TSO4, VIRTIO_NET_F_HOST_TSO6))
		return false;
	/* The 16-bit checksum field is written at csum_start + csum_offset. */
	if (csum && (uint32_t)h->csum_start + h->csum_offset + 2 > len)
		return false;
	if (h->hdr_len > len)
		return false;
	if (h->gso_type != VIRTIO_NET_HDR_GSO_NONE) {
		/* TCP segmentation: a partial TCP checksum (the spec requires
		 * NEEDS_CSUM with any GSO type), and a segment size the host
		 * can cut into a bounded number of segments. */
		if (!csum || h->csum_offset != VIRTIO_NET_TCP_CSUM_OFF ||
		    h->gso_size < NET_GSO_MIN_MSS)
			return false;
	}
	h->num_buffers = 0;
	return true;
}

static enum tx_result tx_one(struct virtio_net_pair *p, const struct virtq_elem *e)
{
	struct virtio_net *n = p->n;
	struct iovec *iov = p->tx_iov;
	ssize_t r;

	/* Readable part only: a writable tail is ignored (completed with 0). */
	if (e->out_len < VIRTIO_NET_HDR_LEN ||
	    e->out_len - VIRTIO_NET_HDR_LEN > VIRTIO_NET_MAX_FRAME)
		goto drop;
	/* Relaxed: ordered by virtq_pop's acquire fence after the avail index. */
	dma_sg_read_relaxed(e->iov, e->out_num, 0, &p->tx_hdr, VIRTIO_NET_HDR_LEN);
	if (!tx_hdr_ok(n, &p->tx_hdr, (uint32_t)(e->out_len - VIRTIO_NET_HDR_LEN)))
		goto drop;
	iov[0] = (struct iovec){&p->tx_hdr, VIRTIO_NET_HDR_LEN};
	/* writev reads the chain after virtq_pop's acquire fence. */
	int k =
	    dma_sg_slice(e->iov, e->out_num, VIRTIO_NET_HDR_LEN, SIZE_MAX, iov + 1, IOV_MAX - 1);
	if (k < 0)
		goto drop; /* more pieces than one writev takes */
	for (int tries = 0;; tries++) {
		r = writev(p->tap.fd, iov, k + 1);
		if (r >= 0 || errno != EINTR || tries == 3)
			break;
	}
	if (r < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return TX_AGAIN;
		/* EIO (link down), EINVAL (header the kernel rejects)...: the
		 * packet is lost, as on a wire. */
		counter_add(&n->stats.tx_errors, 1);
		return TX_DONE;
	}
	counter_add(&n->stats.tx_packets, 1);
	counter_add(&n->stats.tx_bytes, e->out_len - VIRTIO_NET_HDR_LEN);
	return p->tx_hdr.gso_type != VIRTIO_NET_HDR_GSO_NONE ? TX_GSO : TX_DONE;
drop:
	counter_add(&n->stats.tx_dropped, 1);
	return TX_DONE;
}

/* After EAGAIN: EPOLLOUT (edge-triggered) comes when the tap drains. tun
 * only signals write space to a poller that saw it full, so poll once
 * here; if it is writable already, retry from the I/O thread. */
static void tx_wait_writable(struct virtio_net_pair *p)
{
	struct pollfd pfd = {.fd = p->tap.fd, .events = POLLOUT};

	atomic_store(&p->tx_blocked, true);
	counter_add(&p->n->stats.tx_blocked, 1);
	if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLOUT)) {
		atomic_store(&p->tx_blocked, false);
		virtio_net_schedule(p, VIRTIO_NET_SCHED_TX);
	}
}

/* Caller holds tx_lock. */
static void tx_run_locked(struct virtio_net_pair *p)
{
	struct virtio_net *n = p->n;
	struct virtq *vq = tx_vq(p);
	const struct guest_mem *gm = n->vdev.gm;
	unsigned int budget = VIRTIO_NET_BUDGET;

	if (!virtio_net_pair_live(p) || !vq->enabled || vq->broken || atomic_load(&p->tx_blocked))
		return;
	virtq_disable_notify(vq, gm);
	uint32_t held = p->tx_coal.pending; /* from earlier runs */
	for (;;) {
		if (throttle_waiting(&n->tx_throttle))
			break; /* kicks stay off: the limiter's timer comes back */
		if (!budget) {
			/* Kicks stay off: the I/O thread comes back. */
			virtio_net_schedule(p, VIRTIO_NET_SCHED_TX);
			break;
		}
		int r = virtq_pop(vq, gm, &p->tx_elem);
		if (r < 0)
			break;
		budget--; /* also per empty-ring retry: the guest controls those */
		if (r == 0) {
			/* Re-arm kicks; chains added meanwhile: go on. */
			if (!virtq_enable_notify(vq, gm))
				break;
			virtq_disable_notify(vq, gm);
			continue;
		}
		uint64_t len = p->tx_elem.out_len;
		if (!throttle_admit(&n->tx_throttle, 1,
				    len > VIRTIO_NET_HDR_LEN ? len - VIRTIO_NET_HDR_LEN : 0)) {
			virtq_unpop(vq); /* left in the ring until the timer */
			break;
		}
		enum tx_result res = tx_one(p, &p->tx_elem);
		if (res == TX_AGAIN) {
			virtq_unpop(vq);
			tx_wait_writable(p);
			break;
		}
		if (virtq_push(vq, gm, p->tx_elem.head, 0) < 0)
			break;
		p->tx_coal.pending++;
		/* A GSO frame's writev ran the host's stack, which answered
		 * (ACKs the guest's sender waits for): receive now, from this
		 * run's budget, rather than after the run. */
		if (res == TX_GSO)
			budget -= virtio_net_rx_run_budget(p, budget);
	}
	if (p->tx_coal.pending != held)
		virtio_net_coal_pushed(&p->tx_coal, false);
}

void virtio_net_tx_run(struct virtio_net_pair *p)
{
	pthread_mutex_lock(&p->tx_lock);
	tx_run_locked(p);
	pthread_mutex_unlock(&p->tx_lock);
}

void virtio_net_tx_writable(struct virtio_net_pair *p)
{
	if (!atomic_load(&p->tx_blocked))
		return;
	pthread_mutex_lock(&p->tx_lock);
	if (atomic_load(&p->tx_blocked)) {
		atomic_store(&p->tx_blocked, false);
		tx_run_locked(p);
	}
	pthread_mutex_unlock(&p->tx_lock);
}
