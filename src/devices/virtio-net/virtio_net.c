// SPDX-License-Identifier: Apache-2.0
/* virtio-net over a tap: `--net tap=NAME[,mac=MAC][,queues=N]`. Setup,
 * the virtio device ops and the I/O thread handlers; the packet paths are
 * in virtio_net_rx.c and virtio_net_tx.c, the control queue in
 * virtio_net_ctrl.c, the device kind the device manager sees in
 * virtio_net_dev.c. */
#include "devices/virtio-net/virtio_net.h"

#include <errno.h>
#include <stddef.h>
#include <linux/if_tun.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/log.h"
#include "devices/virtio-net/virtio_net_priv.h"
#include "iothread/iothread.h"

static struct virtio_net *net_of(struct virtio_dev *vdev)
{
	return vdev->priv;
}

void virtio_net_schedule(struct virtio_net_pair *p, unsigned int what)
{
	struct virtio_net *n = p->n;
	uint64_t one = 1;
	atomic_fetch_or(&n->sched, what << (2 * p->index));
	/* Fails only if the counter would overflow: a wakeup is pending. */
	if (write(n->sched_fd, &one, sizeof(one)) < 0) {
	}
}

void virtio_net_sched_event(void *opaque, uint32_t events)
{
	struct virtio_net *n = opaque;
	uint64_t cnt;
	(void)events;
	if (read(n->sched_fd, &cnt, sizeof(cnt)) < 0) {
		/* EAGAIN: another handler run consumed it; sched says what to do */
	}
	unsigned int what = atomic_exchange(&n->sched, 0);
	for (unsigned int i = 0; i < n->npairs && what; i++, what >>= 2) {
		if (what & VIRTIO_NET_SCHED_RX)
			virtio_net_rx_run(&n->pairs[i]);
		if (what & VIRTIO_NET_SCHED_TX)
			virtio_net_tx_run(&n->pairs[i]);
	}
}

bool virtio_net_pair_live(const struct virtio_net_pair *p)
{
	return atomic_load(&p->n->active) && p->index < atomic_load(&p->n->curr_pairs);
}

/* The tap fd is registered edge-triggered for both directions: EPOLLIN
 * needs no disarming when the guest has no buffers (the refill kick
 * resumes RX), EPOLLOUT none while TX is not blocked. */
void virtio_net_tap_event(void *opaque, uint32_t events)
{
	struct virtio_net_pair *p = opaque;
	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
		virtio_net_rx_run(p);
	if (events & EPOLLOUT)
		virtio_net_tx_writable(p);
}

static void net_config_read(struct virtio_dev *vdev, uint32_t offset, void *buf, uint32_t len)
{
	struct virtio_net *n = net_of(vdev);
	memset(buf, 0, len);
	if (offset < VIRTIO_NET_CONFIG_LEN && len <= VIRTIO_NET_CONFIG_LEN - offset)
		memcpy(buf, n->config + offset, len);
}

static void net_config_write(struct virtio_dev *vdev, uint32_t offset, const void *buf,
			     uint32_t len)
{
	/* Read-only with VERSION_1 (the MAC changes through the control
	 * queue, with VIRTIO_NET_F_CTRL_MAC_ADDR, which is not offered). */
	(void)vdev;
	(void)offset;
	(void)buf;
	(void)len;
}

/* The tap may hand the guest only the offloads it accepted; the kernel
 * refuses TSO without checksum offload, as the spec ties them. */
static unsigned int net_tap_offloads(const struct virtio_dev *v)
{
	unsigned int f = 0;
	if (!virtio_has_feature(v, VIRTIO_NET_F_GUEST_CSUM))
		return 0;
	f |= TUN_F_CSUM;
	if (virtio_has_feature(v, VIRTIO_NET_F_GUEST_TSO4))
		f |= TUN_F_TSO4;
	if (virtio_has_feature(v, VIRTIO_NET_F_GUEST_TSO6))
		f |= TUN_F_TSO6;
	return f;
}

/* The control queue's index for the negotiated features (5.1.2). */
static unsigned int net_ctrlq(const struct virtio_net *n)
{
	const struct virtio_dev *v = &n->vdev;
	if (!virtio_has_feature(v, VIRTIO_NET_F_CTRL_VQ))
		return UINT_MAX;
	return virtio_has_feature(v, VIRTIO_NET_F_MQ) ? 2 * n->npairs : 2;
}

static int net_activate(struct virtio_dev *vdev)
{
	struct virtio_net *n = net_of(vdev);
	/* Before vhost too: vhost reads the tap as it is, and a tap without
	 * offloads makes the host segment and checksum every frame it hands
	 * the guest (vhost receive ran at 0.4x kvmtool's for that). The
	 * offloads are the tap's, not a queue's: pair 0's fd, which is
	 * never detached, sets them for all. */
	struct tap *tap = &n->pairs[0].tap;
	unsigned int off = net_tap_offloads(vdev);
	int r = tap_set_offload(tap, off);
	if (r < 0 && off) {
		/* Fewer offloads are safe: the guest then gets plain frames. */
		log_ratelimited(LOG_WARN, "%s: tap offloads 0x%x refused (%s); using none", n->name,
				off, strerror(-r));
		tap_set_offload(tap, 0);
	}
	virtio_net_ctrl_clamp(n);
	atomic_store(&n->ctrlq, net_ctrlq(n));
	if (n->vhost_on && virtio_net_vhost_start(n) == 0)
		return 0; /* n->active stays false: the built-in path is idle */
	atomic_store(&n->active, true);
	/* Packets may wait in the tap since before: their edge is gone. */
	virtio_net_schedule(&n->pairs[0], VIRTIO_NET_SCHED_RX | VIRTIO_NET_SCHED_TX);
	return 0;
}

/* Returns only when no RX or TX work runs: each run holds its lock and
 * checks active first, so after both locks were taken once, none will
 * touch the queues until the next activate. */
static void net_reset(struct virtio_dev *vdev)
{
	struct virtio_net *n = net_of(vdev);
	virtio_net_vhost_stop(n);
	atomic_store(&n->active, false);
	for (unsigned int i = 0; i < n->npairs; i++) {
		struct virtio_net_pair *p = &n->pairs[i];
		pthread_mutex_lock(&p->rx_lock);
		virtio_net_rx_discard(p);
		virtio_net_coal_reset(&p->rx_coal);
		pthread_mutex_unlock(&p->rx_lock);
		pthread_mutex_lock(&p->tx_lock);
		atomic_store(&p->tx_blocked, false);
		virtio_net_coal_reset(&p->tx_coal);
		pthread_mutex_unlock(&p->tx_lock);
	}
	/* The next driver starts with one pair again (5.1.6.5.5), and the
	 * card's own coalescing, as after power-on. */
	pthread_mutex_lock(&n->ctrl_lock);
	virtio_net_coal_defaults(n);
	virtio_net_set_pairs(n, 1);
	atomic_store(&n->ctrlq, UINT_MAX);
	pthread_mutex_unlock(&n->ctrl_lock);
	tap_set_offload(&n->pairs[0].tap, 0);
}

static void net_queue_notify(struct virtio_dev *vdev, unsigned int q)
{
	struct virtio_net *n = net_of(vdev);
	if (q == atomic_load(&n->ctrlq)) {
		virtio_net_ctrl_run(n);
		return;
	}
	if (q / 2 >= n->npairs)
		return;
	struct virtio_net_pair *p = &n->pairs[q / 2];
	if (q % 2 == VIRTIO_NET_RXQ)
		virtio_net_rx_run(p); /* buffers posted after RX starved */
	else
		virtio_net_tx_run(p);
}

/* Only TX queues are polled; RX waits on the tap, not on a poller. One
 * limiter per direction holds every pair's queue. A pair the driver has
 * not enabled leaves its chains in the ring too (enabling schedules it):
 * a poller counting them as work would never stop, whatever its cap,
 * since stopping finds the ring still full and resumes. */
static bool net_queue_throttled(struct virtio_dev *vdev, unsigned int q)
{
	struct virtio_net *n = net_of(vdev);
	if (q % 2 != VIRTIO_NET_TXQ || q / 2 >= n->npairs)
		return false;
	return throttle_waiting(&n->tx_throttle) || !virtio_net_pair_live(&n->pairs[q / 2]);
}

static const struct virtio_dev_ops net_ops = {
    .config_read = net_config_read,
    .config_write = net_config_write,
    .activate = net_activate,
    .reset = net_reset,
    .queue_notify = net_queue_notify,
    .queue_throttled = net_queue_throttled,
};

/* The limiters' timers (I/O thread): the side that waited runs again, on
 * every pair the driver enabled (one limiter per direction, shared). */
static void net_rx_resume(void *opaque)
{
	struct virtio_net *n = opaque;
	for (unsigned int i = 0; i < atomic_load(&n->curr_pairs); i++)
		virtio_net_rx_run(&n->pairs[i]);
}

static void net_tx_resume(void *opaque)
{
	struct virtio_net *n = opaque;
	for (unsigned int i = 0; i < atomic_load(&n->curr_pairs); i++)
		virtio_net_tx_run(&n->pairs[i]);
}

static void net_config_init(struct virtio_net *n)
{
	uint16_t status = VIRTIO_NET_S_LINK_UP, pairs = (uint16_t)n->npairs, mtu = VIRTIO_NET_MTU;
	memcpy(n->config, n->mac, NET_MAC_LEN);
	memcpy(n->config + 6, &status, 2); /* little-endian host: as-is */
	memcpy(n->config + 8, &pairs, 2);
	memcpy(n->config + 10, &mtu, 2);
}

static void net_pair_init(struct virtio_net *n, unsigned int i, struct tap *tap)
{
	struct virtio_net_pair *p = &n->pairs[i];
	p->n = n;
	p->index = i;
	p->tap = *tap;
	p->tap_attached = true;
	p->vhost.fd = -1;
	p->rx_coal.tfd = p->tx_coal.tfd = -1; /* for destroy, whatever fails */
	pthread_mutex_init(&p->rx_lock, NULL);
	pthread_mutex_init(&p->tx_lock, NULL);
}

static uint64_t net_features(unsigned int npairs)
{
	uint64_t f = 1ULL << VIRTIO_F_VERSION_1 | 1ULL << VIRTQ_F_EVENT_IDX |
		     1ULL << VIRTQ_F_INDIRECT_DESC | 1ULL << VIRTIO_NET_F_CSUM |
		     1ULL << VIRTIO_NET_F_GUEST_CSUM | 1ULL << VIRTIO_NET_F_MAC |
		     1ULL << VIRTIO_NET_F_GUEST_TSO4 | 1ULL << VIRTIO_NET_F_GUEST_TSO6 |
		     1ULL << VIRTIO_NET_F_HOST_TSO4 | 1ULL << VIRTIO_NET_F_HOST_TSO6 |
		     1ULL << VIRTIO_NET_F_MRG_RXBUF | 1ULL << VIRTIO_NET_F_STATUS;
	/* The control queue carries the coalescing parameters, and with more
	 * than one pair the driver enables pairs there. */
	f |= 1ULL << VIRTIO_NET_F_CTRL_VQ | 1ULL << VIRTIO_NET_F_NOTF_COAL;
	if (npairs > 1)
		f |= 1ULL << VIRTIO_NET_F_MQ;
	return f;
}

static void net_vdev_init(struct virtio_net *n)
{
	struct virtio_dev *v = &n->vdev;
	v->name = n->name;
	v->device_id = VIRTIO_ID_NET;
	v->host_features = net_features(n->npairs);
	v->config_len = VIRTIO_NET_CONFIG_LEN;
	v->num_queues = 2 * n->npairs + 1;
	/* One pair: config and one vector its three queues share. A turn of
	 * the I/O thread completes a TX chain and fills an RX buffer ~0.1 ms
	 * apart; on two vectors the guest takes the second through an
	 * interrupt-window exit and a real EOI write, on one both are a
	 * single injection (docs/bench/2026-12-06-irqdiag, as the vsock
	 * devices). With several pairs each keeps its own (one per queue). */
	if (n->npairs == 1)
		v->msix_vectors = VIRTIO_NET_MSIX_ONE_PAIR;
	v->queue_max_size = VIRTIO_NET_QUEUE_SIZE;
	/* TX queues: RX kicks only mean "refilled", the control queue's are rare. */
	for (unsigned int i = 0; i < n->npairs; i++)
		v->poll_queues |= 1u << (2 * i + VIRTIO_NET_TXQ);
	v->ops = &net_ops;
	v->priv = n;
}

struct virtio_net *virtio_net_create(const char *name, struct tap *taps, unsigned int npairs,
				     const uint8_t mac[NET_MAC_LEN], char *err, size_t errlen)
{
	struct virtio_net *n = NULL;
	if (npairs < 1 || npairs > VIRTIO_NET_PAIRS_MAX) {
		snprintf(err, errlen, "%u queue pairs (1..%d)", npairs, VIRTIO_NET_PAIRS_MAX);
		goto fail;
	}
	n = calloc(1, sizeof(*n));
	if (n)
		n->pairs = calloc(npairs, sizeof(*n->pairs));
	if (!n || !n->pairs) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	n->rx_throttle.tfd = n->tx_throttle.tfd = -1; /* for destroy, whatever fails */
	n->npairs = npairs;
	for (unsigned int i = 0; i < npairs; i++)
		net_pair_init(n, i, &taps[i]);
	n->sched_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	int cr = 0;
	for (unsigned int i = 0; i < npairs && cr == 0; i++)
		cr = virtio_net_coal_init(&n->pairs[i]);
	if (n->sched_fd < 0 || cr < 0 ||
	    throttle_init(&n->rx_throttle, NULL, net_rx_resume, n, &n->stats.rx_throttled, err,
			  errlen) < 0 ||
	    throttle_init(&n->tx_throttle, NULL, net_tx_resume, n, &n->stats.tx_throttled, err,
			  errlen) < 0) {
		snprintf(err, errlen, "cannot set up the device: %s", strerror(errno));
		virtio_net_destroy(n);
		return NULL;
	}
	memcpy(n->mac, mac, NET_MAC_LEN);
	net_config_init(n);
	pthread_mutex_init(&n->ctrl_lock, NULL);
	pthread_mutex_init(&n->vhost_lock, NULL);
	atomic_store(&n->ctrlq, UINT_MAX);
	atomic_store(&n->curr_pairs, 1);
	/* Until the driver enables them, no packet may wait on the other
	 * pairs' tap queues. */
	pthread_mutex_lock(&n->ctrl_lock);
	int r = virtio_net_set_pairs(n, 1);
	pthread_mutex_unlock(&n->ctrl_lock);
	if (r < 0) {
		snprintf(err, errlen, "tap '%s': cannot detach a queue: %s", taps[0].name,
			 strerror(-r));
		virtio_net_destroy(n);
		return NULL;
	}
	snprintf(n->name, sizeof(n->name), "%s", name);
	net_vdev_init(n);
	return n; /* coalescing: none (calloc) until virtio_net_coal_defaults */
fail:
	for (unsigned int i = 0; i < npairs; i++)
		tap_close(&taps[i]);
	if (n)
		free(n->pairs);
	free(n);
	return NULL;
}

void virtio_net_destroy(struct virtio_net *n)
{
	if (!n)
		return;
	for (unsigned int i = 0; i < n->npairs; i++) {
		struct virtio_net_pair *p = &n->pairs[i];
		vhost_close(&p->vhost);
		virtio_net_coal_fini(p);
		tap_close(&p->tap);
		pthread_mutex_destroy(&p->rx_lock);
		pthread_mutex_destroy(&p->tx_lock);
	}
	throttle_fini(&n->rx_throttle);
	throttle_fini(&n->tx_throttle);
	if (n->sched_fd >= 0)
		close(n->sched_fd);
	free(n->pairs);
	free(n);
}
