// SPDX-License-Identifier: Apache-2.0
/* virtio-net as a device kind: what the device manager calls (build from a
 * `--net` spec, start and stop on the I/O thread, rate limits, counters).
 * The virtio device itself is in virtio_net.c. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <sys/epoll.h>

#include "devices/virtio-net/virtio_net.h"
#include "devices/virtio-net/virtio_net_priv.h"
#include "iothread/iothread.h"

static int net_dev_start(void *dev, char *err, size_t errlen)
{
	struct virtio_net *n = dev;
	if (!n->io)
		return 0;
	int r = iothread_add_fd(n->io, n->sched_fd, EPOLLIN, virtio_net_sched_event, n);
	for (unsigned int i = 0; i < n->npairs && r == 0; i++)
		r = iothread_add_fd(n->io, n->pairs[i].tap.fd, EPOLLIN | EPOLLOUT | EPOLLET,
				    virtio_net_tap_event, &n->pairs[i]);
	if (r == 0)
		r = throttle_start(&n->rx_throttle, n->io);
	if (r == 0)
		r = throttle_start(&n->tx_throttle, n->io);
	if (r == 0)
		r = virtio_net_coal_start(n);
	if (r < 0)
		snprintf(err, errlen, "tap '%s': cannot watch its queues or timers: %s",
			 n->pairs[0].tap.name, strerror(-r));
	return r < 0 ? -1 : 0;
}

/* The I/O thread has stopped; vhost's kernel worker has not: closing the
 * vhost fd stops it touching guest memory (the kernel flushes first). */
static void net_dev_stop(void *dev)
{
	struct virtio_net *n = dev;
	throttle_stop(&n->rx_throttle);
	throttle_stop(&n->tx_throttle);
	if (n->io)
		virtio_net_coal_stop(n);
	if (n->vhost_on) {
		for (unsigned int i = 0; i < n->npairs; i++)
			vhost_close(&n->pairs[i].vhost);
		n->vhost_on = false;
	}
}

int virtio_net_limit(struct virtio_net *n, unsigned int dir, const struct ratelimit_cfg *cfg,
		     unsigned int mask, char *err, size_t errlen)
{
	if (n->vhost_on) {
		snprintf(err, errlen, "vhost=on moves the packets in the kernel: no rate limiter");
		return -1;
	}
	throttle_update(dir == DEV_RL_TX ? &n->tx_throttle : &n->rx_throttle, cfg, mask);
	return 0;
}

static int net_dev_limit(void *dev, unsigned int dir, const struct ratelimit_cfg *cfg,
			 unsigned int mask, char *err, size_t errlen)
{
	return virtio_net_limit(dev, dir, cfg, mask, err, errlen);
}

static void net_dev_destroy(void *dev)
{
	virtio_net_destroy(dev);
}

static void net_dev_counters(void *dev, counter_emit_fn emit, void *ctx)
{
	static const struct counter_field c[] = {
	    {"rx packets", offsetof(struct virtio_net_stats, rx_packets)},
	    {"rx bytes", offsetof(struct virtio_net_stats, rx_bytes)},
	    {"rx dropped", offsetof(struct virtio_net_stats, rx_dropped)},
	    {"rx starved", offsetof(struct virtio_net_stats, rx_starved)},
	    {"rx errors", offsetof(struct virtio_net_stats, rx_errors)},
	    {"tx packets", offsetof(struct virtio_net_stats, tx_packets)},
	    {"tx bytes", offsetof(struct virtio_net_stats, tx_bytes)},
	    {"tx dropped", offsetof(struct virtio_net_stats, tx_dropped)},
	    {"tx errors", offsetof(struct virtio_net_stats, tx_errors)},
	    {"tx blocked", offsetof(struct virtio_net_stats, tx_blocked)},
	    {"rx rate limiter throttled", offsetof(struct virtio_net_stats, rx_throttled)},
	    {"tx rate limiter throttled", offsetof(struct virtio_net_stats, tx_throttled)},
	    {"rx notifications held", offsetof(struct virtio_net_stats, rx_held)},
	    {"tx notifications held", offsetof(struct virtio_net_stats, tx_held)},
	    {"held notifications carried", offsetof(struct virtio_net_stats, coal_covered)},
	    {"ctrl ok", offsetof(struct virtio_net_stats, ctrl_ok)},
	    {"ctrl errors", offsetof(struct virtio_net_stats, ctrl_err)},
	};
	const struct virtio_net *n = dev;
	counter_emit_fields(emit, ctx, n->name, &n->stats, c, sizeof(c) / sizeof(c[0]));
}

static const struct dev_ops net_dev_ops = {
    .save = virtio_net_save,
    .restore = virtio_net_restore,
    .handover = virtio_net_handover,
    .dirty_blind = virtio_net_dirty_blind,
    .dirty_log = virtio_net_vhost_log,
    .start = net_dev_start,
    .stop = net_dev_stop,
    .destroy = net_dev_destroy,
    .counters = net_dev_counters,
    .limit = net_dev_limit,
};

unsigned int virtio_net_pairs(unsigned int queues, unsigned int nr_vcpus, int tap_mq)
{
	if (queues)
		return queues;
	unsigned int np = nr_vcpus < 1 ? 1 : nr_vcpus;
	np = np > VIRTIO_NET_PAIRS_MAX ? VIRTIO_NET_PAIRS_MAX : np;
	return tap_mq == 1 ? np : 1;
}

int virtio_net_new_device(const struct dev_ctx *ctx, const void *spec, struct device *out,
			  char *err, size_t errlen)
{
	const struct net_spec *s = spec;
	struct tap taps[VIRTIO_NET_PAIRS_MAX];
	unsigned int np =
	    virtio_net_pairs(s->queues, ctx->nr_vcpus, s->queues ? 1 : tap_is_multi_queue(s->tap));
	if (tap_open_queues(taps, np, s->tap, err, errlen) < 0)
		return -1;
	struct virtio_net *n = virtio_net_create(ctx->name, taps, np, s->mac, err, errlen);
	if (!n)
		return -1;
	throttle_update(&n->rx_throttle, &s->rx_rl, (1u << RL_NR) - 1);
	throttle_update(&n->tx_throttle, &s->tx_rl, (1u << RL_NR) - 1);
	n->vdev.poll = s->poll;
	if (s->vhost) {
		for (unsigned int i = 0; i < np; i++) {
			if (vhost_net_open(&n->pairs[i].vhost, err, errlen) < 0) {
				virtio_net_destroy(n);
				return -1;
			}
		}
		n->vhost_on = true;
		n->vhost_busyloop_us = s->vhost_busyloop_us;
		/* vhost signals the guest itself: nothing here could hold it. */
		n->vdev.host_features &= ~(1ULL << VIRTIO_NET_F_NOTF_COAL);
	}
	/* Only where the vCPU halts in the guest: there a TX completion's
	 * interrupt is an exit and an injection of its own. Where it halts in
	 * the host, that interrupt wakes it before the reply comes, and
	 * holding it cost request/response latency (+14% UDP p50 in
	 * docs/bench/2026-12-06-txhold). */
	n->tx_hold = ctx->halt_in_guest;
	virtio_net_coal_defaults(n);
	/* Kicks, pollers, the tap queues and the scheduler eventfd all on one
	 * I/O thread: the tap handlers run both the RX and the TX path. */
	n->io = ctx->io;
	*out = (struct device){.dev = n, .ops = &net_dev_ops, .vdev = &n->vdev};
	return 0;
}

int virtio_net_spec_check(const void *spec, char *err, size_t errlen)
{
	const struct net_spec *s = spec;
	if (s->coalesce >= 0) {
		snprintf(err, errlen, "coalesce= is for model=e1000");
		return -1;
	}
	if (s->vhost && net_spec_limited(s)) {
		snprintf(err, errlen,
			 "rate limiters need vhost=off (vhost moves the packets in the kernel)");
		return -1;
	}
	return 0;
}

const char *virtio_net_needs_ioeventfd(const void *spec)
{
	const struct net_spec *s = spec;
	return s->vhost ? "vhost=on" : s->poll.mode != POLL_OFF ? "poll=" : NULL;
}
