// SPDX-License-Identifier: Apache-2.0
/* virtio-net notification coalescing (VIRTIO_NET_F_NOTF_COAL, virtio 1.3
 * 5.1.6.5.6): the driver sets, per direction, max_packets and usecs
 * through the control queue (Linux: ethtool -C rx-frames/rx-usecs,
 * tx-frames/tx-usecs). With both non-zero, a queue's used buffer
 * notification waits until max_packets packets were pushed or usecs
 * passed since the first of them; with either zero, every run notifies
 * at once, as without the feature. Event-idx still decides at the end:
 * a held notification the driver no longer wants (it polled the ring
 * meanwhile) is not sent.
 *
 * Why: an idle guest re-arms its interrupt after every packet, so a
 * steady stream of small packets costs an interrupt (and its exits) per
 * packet; a NIC's interrupt moderation trades a bounded delay for that.
 * The delay is the driver's choice, capped at VIRTIO_NET_COAL_USECS_MAX.
 *
 * Not with vhost=on: the kernel signals the guest itself. */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "core/clock.h"
#include "devices/virtio-net/virtio_net_priv.h"
#include "iothread/iothread.h"

static pthread_mutex_t *coal_lock(struct virtio_net_coal *c)
{
	return c->dir == VIRTIO_NET_RXQ ? &c->p->rx_lock : &c->p->tx_lock;
}

static unsigned int coal_q(const struct virtio_net_coal *c)
{
	return 2 * c->p->index + c->dir;
}

static void coal_disarm(struct virtio_net_coal *c)
{
	if (c->armed)
		clock_timerfd_set(c->tfd, 0, 0);
	c->armed = false;
}

int virtio_net_coal_init(struct virtio_net_pair *p)
{
	struct virtio_net_coal *cs[2] = {&p->rx_coal, &p->tx_coal};
	for (unsigned int i = 0; i < 2; i++) {
		*cs[i] = (struct virtio_net_coal){.p = p, .dir = i, .tfd = -1};
		cs[i]->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (cs[i]->tfd < 0)
			return -errno;
	}
	return 0;
}

void virtio_net_coal_fini(struct virtio_net_pair *p)
{
	struct virtio_net_coal *cs[2] = {&p->rx_coal, &p->tx_coal};
	for (unsigned int i = 0; i < 2; i++) {
		if (cs[i]->tfd >= 0)
			close(cs[i]->tfd);
		cs[i]->tfd = -1;
	}
}

int virtio_net_coal_start(struct virtio_net *n)
{
	for (unsigned int i = 0; i < n->npairs; i++) {
		struct virtio_net_pair *p = &n->pairs[i];
		int r = iothread_add_fd(n->io, p->rx_coal.tfd, EPOLLIN, virtio_net_coal_event,
					&p->rx_coal);
		if (r == 0)
			r = iothread_add_fd(n->io, p->tx_coal.tfd, EPOLLIN, virtio_net_coal_event,
					    &p->tx_coal);
		if (r < 0)
			return r;
	}
	atomic_store(&n->coal_watched, true);
	return 0;
}

void virtio_net_coal_stop(struct virtio_net *n)
{
	atomic_store(&n->coal_watched, false);
	for (unsigned int i = 0; i < n->npairs; i++) {
		iothread_del_fd(n->io, n->pairs[i].rx_coal.tfd);
		iothread_del_fd(n->io, n->pairs[i].tx_coal.tfd);
	}
}

/* The card's own TX hold (virtio_net_coal_tx_own) waits for RX's
 * interrupt to carry the completion; a driver that put TX on a vector of
 * its own would only wait (review7's note). A hold the driver set is the
 * driver's, kept wherever its vectors are. */
static bool coal_own_tx_alone(struct virtio_net_coal *c)
{
	struct virtio_net *n = c->p->n;
	return c->dir == VIRTIO_NET_TXQ && n->coal_tx_own &&
	       virtio_queues_apart(&n->vdev, coal_q(c), 2 * c->p->index + VIRTIO_NET_RXQ);
}

void virtio_net_coal_pushed(struct virtio_net_coal *c, bool now)
{
	struct virtio_net *n = c->p->n;
	/* Relaxed: a run that misses a new setting applies it next time. */
	uint32_t us = atomic_load_explicit(&n->coal_usecs[c->dir], memory_order_relaxed);
	uint32_t max = atomic_load_explicit(&n->coal_max[c->dir], memory_order_relaxed);

	if (!now && us && max && c->pending < max && atomic_load(&n->coal_watched) &&
	    !coal_own_tx_alone(c)) {
		counter_add(c->dir == VIRTIO_NET_RXQ ? &n->stats.rx_held : &n->stats.tx_held, 1);
		/* After this push's used-index store (virtq_push). */
		c->cover_ok = virtio_queue_irq_seq(&n->vdev, coal_q(c), &c->cover_seq) == 0;
		if (c->armed)
			return;
		c->armed = true;
		if (clock_timerfd_set(c->tfd, 0, (uint64_t)us * 1000) == 0)
			return;
		c->armed = false; /* no timer: nothing may wait for it */
	}
	coal_disarm(c);
	c->pending = 0;
	virtio_notify_if_needed(&n->vdev, coal_q(c));
}

/* The held notification is redundant: the same message (an MSI-X
 * vector carries no queue) reached the guest after the held pushes. Its
 * event-idx bookkeeping stays behind, so the queue's next notification is
 * decided as if this one had not been sent: at worst one extra. */
static bool coal_covered(struct virtio_net_coal *c)
{
	uint64_t seq;
	if (!c->cover_ok || virtio_queue_irq_seq(&c->p->n->vdev, coal_q(c), &seq) < 0 ||
	    !virtio_irq_seq_sent(c->cover_seq, seq))
		return false;
	counter_add(&c->p->n->stats.coal_covered, 1);
	return true;
}

void virtio_net_coal_event(void *opaque, uint32_t events)
{
	struct virtio_net_coal *c = opaque;
	struct virtio_net_pair *p = c->p;
	uint64_t ticks;
	(void)events;
	/* Level-triggered: read first, or the loop spins on it. */
	if (read(c->tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		return;
	pthread_mutex_lock(coal_lock(c));
	/* Not armed: the held notification went out with a full batch (or
	 * a reset dropped it) after this expiry was queued. */
	if (c->armed) {
		c->armed = false;
		c->pending = 0;
		struct virtq *vq = &p->n->vdev.vqs[coal_q(c)];
		/* Not virtio_net_pair_live: a pair disabled since still owes
		 * the driver the notification for what it pushed before. */
		if (atomic_load(&p->n->active) && vq->enabled && !vq->broken && !coal_covered(c))
			virtio_notify_if_needed(&p->n->vdev, coal_q(c));
	}
	pthread_mutex_unlock(coal_lock(c));
}

void virtio_net_coal_reset(struct virtio_net_coal *c)
{
	coal_disarm(c);
	c->pending = 0;
}

void virtio_net_coal_restore_held(struct virtio_net_coal *c)
{
	/* 1 us: at the I/O thread's first turn. If even that fails the
	 * queue's next notification carries it (event-idx counts from the
	 * last one sent). */
	c->pending = 0;
	c->armed = clock_timerfd_set(c->tfd, 0, 1000) == 0;
}

void virtio_net_coal_tx_own(struct virtio_net *n)
{
	bool hold =
	    n->tx_hold && n->npairs == 1 && n->vdev.host_features >> VIRTIO_NET_F_NOTF_COAL & 1;
	atomic_store(&n->coal_usecs[VIRTIO_NET_TXQ], hold ? VIRTIO_NET_TX_HOLD_USECS : 0);
	atomic_store(&n->coal_max[VIRTIO_NET_TXQ], hold ? VIRTIO_NET_TX_HOLD_PACKETS : 0);
	n->coal_tx_own = true;
}

void virtio_net_coal_defaults(struct virtio_net *n)
{
	atomic_store(&n->coal_usecs[VIRTIO_NET_RXQ], 0);
	atomic_store(&n->coal_max[VIRTIO_NET_RXQ], 0);
	virtio_net_coal_tx_own(n);
}

static uint32_t coal_le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

uint8_t virtio_net_coal_set(struct virtio_net *n, unsigned int dir, const uint8_t *data)
{
	/* Not offered with vhost=on (virtio_net_new_device). */
	if (!virtio_has_feature(&n->vdev, VIRTIO_NET_F_NOTF_COAL))
		return VIRTIO_NET_ERR;
	uint32_t max = coal_le32(data), us = coal_le32(data + 4);
	if (us > VIRTIO_NET_COAL_USECS_MAX)
		return VIRTIO_NET_ERR;
	atomic_store(&n->coal_max[dir], max);
	atomic_store(&n->coal_usecs[dir], us);
	if (dir == VIRTIO_NET_TXQ)
		n->coal_tx_own = false;
	return VIRTIO_NET_OK;
}
