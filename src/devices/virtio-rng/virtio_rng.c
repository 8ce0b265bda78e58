// SPDX-License-Identifier: Apache-2.0
#include "devices/virtio-rng/virtio_rng.h"

#include <errno.h>
#include <linux/virtio_ids.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "core/clock.h"
#include "core/dma.h"
#include "core/snap.h"
#include "devices/virtio-rng/virtio_rng_priv.h"

/* A read above 256 bytes may be cut short or interrupted by a signal (a
 * vCPU's kick): it goes on, this many times, then gives what it has. */
#define RNG_TRIES 8
#define RNG_QSIZE 256

static struct virtio_rng *rng_of(struct virtio_dev *vdev)
{
	return vdev->priv;
}

/* ---- the option table ---- */

static const struct opt rng_opts[] = {
    RATELIMIT_OPT("bw", offsetof(struct rng_spec, rl.b[RL_BYTES]),
		  "limit bytes: a bucket of SIZE refilled every MS ms, BURST extra once"),
    RATELIMIT_OPT("ops", offsetof(struct rng_spec, rl.b[RL_OPS]), "limit requests, likewise"),
    /* bw= by the name the issue gave it; hidden from --help. */
    {.name = "rate",
     .type = OPT_CUSTOM,
     .off = offsetof(struct rng_spec, rl.b[RL_BYTES]),
     .flags = OPT_ONCE,
     .parse = ratelimit_opt_parse},
};
const struct opt_table rng_spec_table = OPT_TABLE(rng_opts, "rng option", NULL);

void rng_spec_init(void *spec)
{
	memset(spec, 0, sizeof(struct rng_spec));
}

/* ---- the queue ---- */

/* Up to len bytes from the host into buf; how many (0: none). */
static size_t rng_fill(struct virtio_rng *r, size_t len)
{
	size_t done = 0;
	for (int tries = 0; done < len && tries < RNG_TRIES; tries++) {
		ssize_t n = r->source(r->buf + done, len - done, GRND_NONBLOCK);
		if (n > 0)
			done += (size_t)n < len - done ? (size_t)n : len - done;
		else if (n < 0 && errno != EINTR)
			break; /* EAGAIN: the host's pool is not ready; never wait */
	}
	return done;
}

/* The bytes a chain asks for: 0 for a chain the device refuses. */
static size_t rng_want(const struct virtq_elem *e)
{
	if (e->out_num)
		return 0;
	return e->in_len < RNG_REQ_MAX ? e->in_len : RNG_REQ_MAX;
}

/* Answers one chain: the bytes written into it. */
static uint32_t rng_serve(struct virtio_rng *r, const struct virtq_elem *e, size_t want)
{
	if (e->out_num) {
		counter_add(&r->stats.bad, 1);
		return 0;
	}
	if (!want)
		return 0;
	size_t got = rng_fill(r, want);
	if (!got) {
		counter_add(&r->stats.host_fails, 1);
		return 0;
	}
	/* Relaxed: virtq_push's release fence orders it before the used
	 * index the guest reads. */
	size_t n = dma_sg_write_relaxed(e->iov, e->in_num, 0, r->buf, got);
	counter_add(&r->stats.bytes, n);
	return (uint32_t)n;
}

/* Runs the queue to empty, to the limiter, or to the run's budget (then
 * the transport calls again; a trapped kick's vCPU goes on). On the I/O
 * thread (the limiter's timer: on_vcpu false) a run never goes on past
 * its budget: without a kick eventfd to come back by (--no-ioeventfd) it
 * comes back through the timer instead, or a guest that keeps re-posting
 * chains would hold the thread the VM's other devices share for ever.
 * mu held. */
static void rng_run(struct virtio_rng *r, bool on_vcpu)
{
	struct virtq *vq = &r->vdev.vqs[0];
	const struct guest_mem *gm = r->vdev.gm;
	const struct virtio_transport_ops *t = r->vdev.transport;
	unsigned int budget = RNG_POP_BUDGET;
	size_t bytes = RNG_RUN_BYTES;
	bool pushed = false;
	while (r->active && !throttle_waiting(&r->throttle)) {
		if (!budget || !bytes) {
			if (t->queue_resched && t->queue_resched(&r->vdev, 0) == 0)
				break;
			if (!on_vcpu) {
				/* 1 ns: the next turn of the I/O thread's loop. */
				r->deferred = clock_timerfd_set(r->throttle.tfd, 0, 1) == 0;
				break;
			}
			budget = RNG_POP_BUDGET;
			bytes = RNG_RUN_BYTES;
		}
		if (virtq_pop(vq, gm, &r->elem) <= 0)
			break;
		budget--;
		size_t want = rng_want(&r->elem);
		want = want < bytes ? want : bytes;
		/* Over the limit: back to the ring until the timer. A refused
		 * chain takes no tokens. */
		if (!r->elem.out_num && !throttle_admit(&r->throttle, 1, want)) {
			virtq_unpop(vq);
			break;
		}
		uint32_t len = rng_serve(r, &r->elem, want);
		bytes -= len;
		if (virtq_push(vq, gm, r->elem.head, len) < 0)
			break;
		counter_add(&r->stats.requests, 1);
		pushed = true;
	}
	if (pushed)
		virtio_notify_if_needed(&r->vdev, 0);
}

/* ---- virtio_dev_ops ---- */

static void rng_config_read(struct virtio_dev *vdev, uint32_t offset, void *buf, uint32_t len)
{
	(void)vdev, (void)offset;
	memset(buf, 0, len); /* no configuration space */
}

static void rng_config_write(struct virtio_dev *vdev, uint32_t offset, const void *buf,
			     uint32_t len)
{
	(void)vdev, (void)offset, (void)buf, (void)len;
}

static int rng_activate(struct virtio_dev *vdev)
{
	struct virtio_rng *r = rng_of(vdev);
	pthread_mutex_lock(&r->mu);
	r->active = true;
	rng_run(r, true); /* buffers posted before DRIVER_OK got no kick we took */
	pthread_mutex_unlock(&r->mu);
	return 0;
}

/* Nothing is in flight outside mu: once it is held, the rings may go. */
static void rng_reset(struct virtio_dev *vdev)
{
	struct virtio_rng *r = rng_of(vdev);
	pthread_mutex_lock(&r->mu);
	r->active = false;
	pthread_mutex_unlock(&r->mu);
}

static void rng_queue_notify(struct virtio_dev *vdev, unsigned int q)
{
	struct virtio_rng *r = rng_of(vdev);
	if (q != 0)
		return;
	counter_add(&r->stats.kicks, 1);
	pthread_mutex_lock(&r->mu);
	rng_run(r, true);
	pthread_mutex_unlock(&r->mu);
}

static bool rng_queue_throttled(struct virtio_dev *vdev, unsigned int q)
{
	(void)q;
	return throttle_waiting(&rng_of(vdev)->throttle);
}

static const struct virtio_dev_ops rng_ops = {
    .config_read = rng_config_read,
    .config_write = rng_config_write,
    .activate = rng_activate,
    .reset = rng_reset,
    .queue_notify = rng_queue_notify,
    .queue_throttled = rng_queue_throttled,
};

/* The limiter's timer (I/O thread): run what waited, or the rest of a
 * run that stopped at its budget. */
static void rng_throttle_resume(void *opaque)
{
	struct virtio_rng *r = opaque;
	pthread_mutex_lock(&r->mu);
	if (!r->deferred)
		counter_add(&r->stats.rl_events, 1);
	r->deferred = false;
	rng_run(r, false);
	pthread_mutex_unlock(&r->mu);
}

/* ---- creation and the device kind ---- */

struct virtio_dev *virtio_rng_create(const char *name, const struct rng_spec *s, char *err,
				     size_t errlen)
{
	struct virtio_rng *r = calloc(1, sizeof(*r));
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->source = getrandom;
	struct virtio_dev *vdev = &r->vdev;
	vdev->name = r->name;
	vdev->device_id = VIRTIO_ID_RNG;
	vdev->host_features = 0; /* none of its own; VERSION_1 is the transport's */
	vdev->config_len = 0;
	vdev->num_queues = 1;
	vdev->queue_max_size = RNG_QSIZE;
	vdev->ops = &rng_ops;
	vdev->priv = r;
	vdev->queue_lock[0] = &r->mu;
	poll_policy_default(&vdev->poll); /* POLL_OFF: a kick per request is cheap enough */
	pthread_mutex_init(&vdev->lock, NULL);
	pthread_mutex_init(&r->mu, NULL);
	if (throttle_init(&r->throttle, &s->rl, rng_throttle_resume, r, &r->stats.throttled, err,
			  errlen) < 0) {
		virtio_rng_destroy(vdev);
		return NULL;
	}
	return vdev;
}

void virtio_rng_destroy(struct virtio_dev *vdev)
{
	struct virtio_rng *r = rng_of(vdev);
	throttle_fini(&r->throttle);
	pthread_mutex_destroy(&r->mu);
	pthread_mutex_destroy(&vdev->lock);
	free(r);
}

void virtio_rng_counters(struct virtio_dev *vdev, counter_emit_fn emit, void *ctx)
{
	static const struct counter_field c[] = {
	    {"kicks", offsetof(struct virtio_rng_stats, kicks)},
	    {"requests", offsetof(struct virtio_rng_stats, requests)},
	    {"bytes", offsetof(struct virtio_rng_stats, bytes)},
	    {"bad requests", offsetof(struct virtio_rng_stats, bad)},
	    {"host rng fails", offsetof(struct virtio_rng_stats, host_fails)},
	    {"rate limiter throttled", offsetof(struct virtio_rng_stats, throttled)},
	    {"rate limiter events", offsetof(struct virtio_rng_stats, rl_events)},
	};
	const struct virtio_rng *r = rng_of(vdev);
	counter_emit_fields(emit, ctx, r->name, &r->stats, c, sizeof(c) / sizeof(c[0]));
}

static int rng_dev_start(void *dev, char *err, size_t errlen)
{
	struct virtio_rng *r = rng_of(dev);
	int e = throttle_start(&r->throttle, r->io);
	if (e < 0)
		snprintf(err, errlen, "cannot watch the rate limiter's timer: %s", strerror(-e));
	return e < 0 ? -1 : 0;
}

/* The I/O thread and the vCPUs have stopped: nothing runs the queue. */
static void rng_dev_stop(void *dev)
{
	throttle_stop(&rng_of(dev)->throttle);
}

static void rng_dev_destroy(void *dev)
{
	virtio_rng_destroy(dev);
}

static void rng_dev_counters(void *dev, counter_emit_fn emit, void *ctx)
{
	virtio_rng_counters(dev, emit, ctx);
}

/* Its queue is all its state (the transport saves it): the section says
 * only which layout this is, so a later one can be told apart. */
static const uint32_t rng_snap_version = 1;

static int rng_dev_save(void *dev, struct snap_writer *w, uint32_t id, uint32_t instance, char *err,
			size_t errlen)
{
	(void)dev;
	if (snap_put(w, id, instance, &rng_snap_version, sizeof(rng_snap_version)) == 0)
		return 0;
	snprintf(err, errlen, "out of memory");
	return -1;
}

static int rng_dev_restore(void *dev, const void *data, size_t len, char *err, size_t errlen)
{
	(void)dev;
	if (len == sizeof(rng_snap_version) && !memcmp(data, &rng_snap_version, len))
		return 0;
	snprintf(err, errlen, "saved virtio-rng state refused: not layout %u", rng_snap_version);
	return -1;
}

static const struct dev_ops rng_dev_ops = {
    .start = rng_dev_start,
    .stop = rng_dev_stop,
    .destroy = rng_dev_destroy,
    .counters = rng_dev_counters,
    .save = rng_dev_save,
    .restore = rng_dev_restore,
};

int virtio_rng_new_device(const struct dev_ctx *ctx, const void *spec, struct device *out,
			  char *err, size_t errlen)
{
	if (ctx->index > 0) {
		snprintf(err, errlen, "a VM has one entropy device");
		return -1;
	}
	struct virtio_dev *vdev = virtio_rng_create(ctx->name, spec, err, errlen);
	if (!vdev)
		return -1;
	rng_of(vdev)->io = ctx->io;
	*out = (struct device){.dev = vdev, .ops = &rng_dev_ops, .vdev = vdev};
	return 0;
}
