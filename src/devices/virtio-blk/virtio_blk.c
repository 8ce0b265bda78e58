// SPDX-License-Identifier: Apache-2.0
#include "devices/virtio-blk/virtio_blk.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "devices/virtio-blk/virtio_blk_priv.h"
#include "devices/virtio-blk/virtio_blk_spec.h"

/* Feature bits (virtio 1.2 §5.2.3) */
#define VIRTIO_BLK_F_SEG_MAX	  2
#define VIRTIO_BLK_F_RO		  5
#define VIRTIO_BLK_F_BLK_SIZE	  6
#define VIRTIO_BLK_F_FLUSH	  9
#define VIRTIO_BLK_F_MQ		  12
#define VIRTIO_BLK_F_DISCARD	  13
#define VIRTIO_BLK_F_WRITE_ZEROES 14

static struct blk_dev *blk_of(struct virtio_dev *vdev)
{
	return vdev->priv;
}

/* ---- virtio_dev_ops ---- */

static void blk_config_read(struct virtio_dev *vdev, uint32_t offset, void *buf, uint32_t len)
{
	struct blk_dev *blk = blk_of(vdev);
	memset(buf, 0, len);
	/* The transport checks bounds; this keeps a slip of its from leaking
	 * host memory. Under config_mu: a medium change rewrites the
	 * capacity. */
	pthread_mutex_lock(&blk->config_mu);
	if (offset <= BLK_CONFIG_LEN && len <= BLK_CONFIG_LEN - offset)
		memcpy(buf, (const uint8_t *)&blk->config + offset, len);
	else
		counter_add(&blk->stats.config_fails, 1);
	pthread_mutex_unlock(&blk->config_mu);
}

static void blk_config_write(struct virtio_dev *vdev, uint32_t offset, const void *buf,
			     uint32_t len)
{
	/* Nothing is writable: writeback needs CONFIG_WCE, not offered. */
	(void)vdev, (void)offset, (void)buf, (void)len;
}

static int blk_activate(struct virtio_dev *vdev)
{
	struct blk_dev *blk = blk_of(vdev);
	for (unsigned int i = 0; i < blk->nq; i++) {
		struct blk_queue *q = &blk->q[i];
		pthread_mutex_lock(&q->mu);
		q->active = true;
		/* Requests made available before DRIVER_OK got no kick we
		 * acted on. */
		blk_queue_pop_all(q);
		pthread_mutex_unlock(&q->mu);
	}
	return 0;
}

/* In two passes, each queue under its own lock: first every queue stops
 * (nothing new starts on it, nothing older is answered), then each is
 * waited for. Stopping them all first makes the reset take effect on
 * every queue at once, not one after the other behind a slow request. */
static void blk_reset(struct virtio_dev *vdev)
{
	struct blk_dev *blk = blk_of(vdev);
	for (unsigned int i = 0; i < blk->nq; i++) {
		struct blk_queue *q = &blk->q[i];
		pthread_mutex_lock(&q->mu);
		q->active = false;
		q->gen++;
		while (q->qlen) {
			blk_slot_free(q, &q->reqs[q->fifo[q->qhead]]);
			q->qhead = (q->qhead + 1) % BLK_QUEUE_SIZE;
			q->qlen--;
		}
		pthread_mutex_unlock(&q->mu);
	}
	/* The transport resets the rings next: no I/O into guest buffers may
	 * still be running then. */
	for (unsigned int i = 0; i < blk->nq; i++) {
		pthread_mutex_lock(&blk->q[i].mu);
		blk_queue_wait_idle(&blk->q[i]);
		pthread_mutex_unlock(&blk->q[i].mu);
	}
}

static void blk_queue_notify(struct virtio_dev *vdev, unsigned int qi)
{
	struct blk_dev *blk = blk_of(vdev);
	if (qi >= blk->nq)
		return;
	struct blk_queue *q = &blk->q[qi];
	counter_add(&blk->stats.kicks, 1);
	pthread_mutex_lock(&q->mu);
	blk_queue_pop_all(q);
	pthread_mutex_unlock(&q->mu);
}

/* The limiter's timer (I/O thread): every queue pops what waited. */
static void blk_throttle_resume(void *opaque)
{
	struct blk_dev *blk = opaque;
	for (unsigned int i = 0; i < blk->nq; i++) {
		pthread_mutex_lock(&blk->q[i].mu);
		blk_queue_pop_all(&blk->q[i]);
		pthread_mutex_unlock(&blk->q[i].mu);
	}
}

static bool blk_queue_throttled(struct virtio_dev *vdev, unsigned int qi)
{
	(void)qi;
	return throttle_waiting(&blk_of(vdev)->throttle);
}

static const struct virtio_dev_ops blk_ops = {
    .config_read = blk_config_read,
    .config_write = blk_config_write,
    .activate = blk_activate,
    .reset = blk_reset,
    .queue_notify = blk_queue_notify,
    .queue_throttled = blk_queue_throttled,
};

/* ---- creation ---- */

static void blk_config_init(struct blk_dev *blk)
{
	struct blk_config *c = &blk->config;
	c->capacity = blk->backend.capacity;
	c->seg_max = BLK_SEG_MAX;
	c->blk_size = BLK_SECTOR_SIZE;
	c->num_queues = (uint16_t)blk->nq;
	c->max_discard_sectors = BLK_DISCARD_SECTORS_MAX;
	c->max_discard_seg = BLK_DISCARD_SEG_MAX;
	c->discard_sector_alignment = 4096 / BLK_SECTOR_SIZE; /* host page */
	c->max_write_zeroes_sectors = BLK_WRITE_ZEROES_SECTORS_MAX;
	c->max_write_zeroes_seg = BLK_DISCARD_SEG_MAX;
	c->write_zeroes_may_unmap = 1;
}

/* VERSION_1 and the ring features are the transport's to offer. MQ only
 * with more than one queue: one queue is the device as it was before. */
static uint64_t blk_features(bool ro, unsigned int nq)
{
	uint64_t f = 1ULL << VIRTIO_BLK_F_SEG_MAX | 1ULL << VIRTIO_BLK_F_BLK_SIZE |
		     1ULL << VIRTIO_BLK_F_FLUSH;
	if (nq > 1)
		f |= 1ULL << VIRTIO_BLK_F_MQ;
	if (ro)
		return f | 1ULL << VIRTIO_BLK_F_RO;
	return f | 1ULL << VIRTIO_BLK_F_DISCARD | 1ULL << VIRTIO_BLK_F_WRITE_ZEROES;
}

/* A ring per queue, or none: where the host has no io_uring (or too
 * little locked memory for every ring), the disk says so and uses
 * threads. */
static bool blk_rings_init(struct blk_dev *blk)
{
	for (unsigned int i = 0; i < blk->nq; i++) {
		int u = blk_uring_init(&blk->q[i].uring, BLK_URING_ENTRIES);
		if (u == 0)
			continue;
		log_warn("%s: io_uring unavailable (%s); using threads", blk->name, strerror(-u));
		while (i--)
			blk_uring_exit(&blk->q[i].uring);
		return false;
	}
	return true;
}

static void blk_free(struct blk_dev *blk)
{
	for (unsigned int i = 0; i < blk->nq; i++)
		blk_queue_stop(&blk->q[i]);
	for (unsigned int i = 0; i < blk->nq; i++)
		blk_queue_fini(&blk->q[i]);
	throttle_fini(&blk->throttle);
	pthread_mutex_destroy(&blk->config_mu);
	pthread_mutex_destroy(&blk->vdev.lock);
	free(blk);
}

/* nq: the queues, 1..BLK_QUEUES_MAX (the spec's, or the default). */
static struct virtio_dev *blk_new(const struct blk_spec *s, unsigned int index, unsigned int nq,
				  char *err, size_t errlen)
{
	struct blk_dev *blk = calloc(1, sizeof(*blk));
	if (!blk) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (blk_backend_open(&blk->backend, s->path, s->ro, s->direct, err, errlen) < 0) {
		free(blk);
		return NULL;
	}
	snprintf(blk->name, sizeof(blk->name), "virtio-blk%u", index);
	blk->index = index;
	blk->nq = nq;
	blk_config_init(blk);
	pthread_mutex_init(&blk->config_mu, NULL);

	struct virtio_dev *vdev = &blk->vdev;
	vdev->name = blk->name;
	vdev->device_id = VIRTIO_ID_BLOCK;
	vdev->host_features = blk_features(s->ro, nq);
	vdev->config_len = BLK_CONFIG_LEN;
	vdev->num_queues = nq;
	vdev->queue_max_size = BLK_QUEUE_SIZE;
	vdev->ops = &blk_ops;
	vdev->priv = blk;
	vdev->poll = s->poll;
	vdev->poll_queues = (1u << nq) - 1;
	pthread_mutex_init(&vdev->lock, NULL);
	if (throttle_init(&blk->throttle, &s->rl, blk_throttle_resume, blk, &blk->stats.throttled,
			  err, errlen) < 0) {
		blk_backend_close(&blk->backend);
		blk_free(blk);
		return NULL;
	}
	blk->aio_uring = s->aio == BLK_AIO_IO_URING && blk_rings_init(blk);
	for (unsigned int i = 0; i < nq; i++) {
		/* A queue's worker pushes completions and reads the guest's
		 * interrupt suppression under the queue's mu, while a poller
		 * on the I/O thread checks the ring and turns guest kicks off
		 * and on. Those happen to touch different virtq fields, but
		 * rather than depend on that, the poller takes the same mu
		 * (the transport honours queue_lock[i]): every access to a
		 * queue, from any thread, is under its lock. */
		vdev->queue_lock[i] = &blk->q[i].mu;
		if (blk_queue_init(&blk->q[i], blk, i, err, errlen) < 0) {
			blk_backend_close(&blk->backend);
			blk_free(blk);
			return NULL;
		}
	}
	return vdev;
}

struct virtio_dev *virtio_blk_create(const char *spec, unsigned int index, char *err, size_t errlen)
{
	struct blk_spec *s = malloc(sizeof(*s)); /* PATH_MAX: off the stack */
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	struct virtio_dev *vdev = blk_spec_parse(spec, s, err, errlen) < 0
				      ? NULL
				      : blk_new(s, index, s->queues ? s->queues : 1, err, errlen);
	free(s);
	return vdev;
}

void virtio_blk_drain(struct virtio_dev *vdev)
{
	struct blk_dev *blk = blk_of(vdev);
	for (unsigned int i = 0; i < blk->nq; i++) {
		pthread_mutex_lock(&blk->q[i].mu);
		blk_queue_wait_idle(&blk->q[i]);
		pthread_mutex_unlock(&blk->q[i].mu);
	}
}

/* Stops every queue's worker once its queued requests are done. */
void virtio_blk_stop(struct virtio_dev *vdev)
{
	struct blk_dev *blk = blk_of(vdev);
	if (blk->stopped)
		return;
	blk->stopped = true;
	for (unsigned int i = 0; i < blk->nq; i++)
		blk_queue_stop(&blk->q[i]);
}

void virtio_blk_destroy(struct virtio_dev *vdev)
{
	struct blk_dev *blk = blk_of(vdev);
	if (!blk->stopped)
		blk_reset(vdev);
	virtio_blk_stop(vdev);
	blk_backend_close(&blk->backend);
	blk_free(blk);
}

/* Firecracker's PATCH /drives path_on_host: the new image is opened (same
 * access, same lock rules) before anything changes, so a bad path leaves
 * the disk as it was. Every queue is held (it pops nothing more; new
 * requests wait in its ring), then all are waited for until idle:
 * requests already taken finish on the old image. Then nothing reads the backend, and it is
 * swapped without a lock; the queues let go and run what was kicked
 * meanwhile on the new one. The capacity changes with the config
 * generation and a configuration interrupt, on which Linux re-reads it
 * (virtio 1.2 §5.2.6). The serial is the device's, not the image's: it
 * stays. Runs on the main thread, as virtio_blk_stop does. */
int virtio_blk_replace(struct virtio_dev *vdev, const char *path, char *err, size_t errlen)
{
	struct blk_dev *blk = blk_of(vdev);
	struct blk_backend nb, old;
	if (blk_backend_open_for(&nb, &blk->backend, path, blk->backend.ro, blk->backend.dfd >= 0,
				 err, errlen) < 0) {
		counter_add(&blk->stats.update_fails, 1);
		return -1;
	}
	if (blk->stopped) {
		counter_add(&blk->stats.update_fails, 1);
		if (nb.fd != blk->backend.fd)
			blk_backend_close(&nb);
		snprintf(err, errlen, "the disk is stopped");
		return -1;
	}
	/* Every queue held first, then each waited for: a queue waited for
	 * before the others are held could start requests on the old image
	 * meanwhile. */
	for (unsigned int i = 0; i < blk->nq; i++) {
		pthread_mutex_lock(&blk->q[i].mu);
		blk->q[i].hold = true;
		pthread_mutex_unlock(&blk->q[i].mu);
	}
	virtio_blk_drain(vdev);
	memcpy(nb.serial, blk->backend.serial, sizeof(nb.serial));
	old = blk->backend;
	blk->backend = nb;
	pthread_mutex_lock(&blk->config_mu);
	blk->config.capacity = nb.capacity;
	atomic_fetch_add(&vdev->config_generation, 1);
	pthread_mutex_unlock(&blk->config_mu);
	counter_add(&blk->stats.updates, 1);
	for (unsigned int i = 0; i < blk->nq; i++) {
		pthread_mutex_lock(&blk->q[i].mu);
		blk->q[i].hold = false;
		blk_queue_pop_all(&blk->q[i]); /* what was kicked meanwhile */
		pthread_mutex_unlock(&blk->q[i].mu);
	}
	if (old.fd != nb.fd) /* else the same image, resized: still in use */
		blk_backend_close(&old);
	if (atomic_load(&vdev->status) & VIRTIO_STATUS_DRIVER_OK)
		vdev->transport->notify_config(vdev);
	return 0;
}

static int blk_dev_replace(void *dev, const char *path, char *err, size_t errlen)
{
	return virtio_blk_replace(dev, path, err, errlen);
}

int virtio_blk_limit(struct virtio_dev *vdev, const struct ratelimit_cfg *cfg, unsigned int mask)
{
	throttle_update(&blk_of(vdev)->throttle, cfg, mask);
	return 0;
}

static int blk_dev_limit(void *dev, unsigned int dir, const struct ratelimit_cfg *cfg,
			 unsigned int mask, char *err, size_t errlen)
{
	if (dir != DEV_RL_RX) {
		snprintf(err, errlen, "a disk has one rate limiter");
		return -1;
	}
	return virtio_blk_limit(dev, cfg, mask);
}

static int blk_dev_start(void *dev, char *err, size_t errlen)
{
	struct blk_dev *blk = blk_of(dev);
	int r = throttle_start(&blk->throttle, blk->io);
	if (r < 0)
		snprintf(err, errlen, "cannot watch the rate limiter's timer: %s", strerror(-r));
	return r < 0 ? -1 : 0;
}

static void blk_dev_stop(void *dev)
{
	virtio_blk_stop(dev);
	throttle_stop(&blk_of(dev)->throttle);
}

static void blk_dev_destroy(void *dev)
{
	virtio_blk_destroy(dev);
}

static void blk_dev_counters(void *dev, counter_emit_fn emit, void *ctx)
{
	virtio_blk_counters(dev, emit, ctx);
}

static const struct dev_ops blk_dev_ops = {
    .start = blk_dev_start,
    .stop = blk_dev_stop,
    .destroy = blk_dev_destroy,
    .counters = blk_dev_counters,
    .replace = blk_dev_replace,
    .limit = blk_dev_limit,
    .save = virtio_blk_save,
    .restore = virtio_blk_restore,
    .handover = virtio_blk_handover,
};

int virtio_blk_new_device(const struct dev_ctx *ctx, const void *spec, struct device *out,
			  char *err, size_t errlen)
{
	const struct blk_spec *s = spec;
	/* Default: a queue per vCPU, as many as the device may have. */
	unsigned int nq = s->queues ? s->queues : ctx->nr_vcpus;
	nq = nq < 1 ? 1 : nq > BLK_QUEUES_MAX ? BLK_QUEUES_MAX : nq;
	struct virtio_dev *vdev = blk_new(s, ctx->index, nq, err, errlen);
	if (!vdev)
		return -1;
	blk_of(vdev)->io = ctx->io;
	*out = (struct device){.dev = vdev, .ops = &blk_dev_ops, .vdev = vdev};
	return 0;
}

const char *virtio_blk_needs_ioeventfd(const void *spec)
{
	return ((const struct blk_spec *)spec)->poll.mode != POLL_OFF ? "poll=" : NULL;
}
