#include "devices/virtio_blk.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sandbox.h"
#include "core/thread.h"
#include "devices/virtio_blk_priv.h"
#include "devices/virtio_blk_spec.h"

/* Feature bits (virtio 1.2 §5.2.3) */
#define VIRTIO_BLK_F_SEG_MAX	  2
#define VIRTIO_BLK_F_RO		  5
#define VIRTIO_BLK_F_BLK_SIZE	  6
#define VIRTIO_BLK_F_FLUSH	  9
#define VIRTIO_BLK_F_DISCARD	  13
#define VIRTIO_BLK_F_WRITE_ZEROES 14

static struct blk_dev *blk_of(struct virtio_dev *vdev)
{
	return vdev->priv;
}

/* ---- completion and the worker (all with mu held) ---- */

/* how: what blk_req_parse said; BLK_REQ_QUEUE once carried out. */
static void blk_complete(struct blk_dev *blk, struct blk_req *req, enum blk_req_next how)
{
	bool has_status = how != BLK_REQ_DROP;
	if (has_status)
		blk_req_finish(req);
	blk_stats_count(blk, req, how);
	virtio_complete(&blk->vdev, 0, req->head, has_status ? req->used_len : 0);
}

void blk_slot_free(struct blk_dev *blk, struct blk_req *req)
{
	blk->free[blk->nfree++] = (unsigned int)(req - blk->reqs);
}

/* Pops available chains: checks each, answers it if that is all it needs,
 * else queues it for the worker. Runs to an empty ring (with EVENT_IDX
 * the guest does not kick again until then), or to the budget: the
 * transport then calls again later, or if it cannot, the run goes on. */
static void blk_pop_all(struct blk_dev *blk)
{
	struct virtq *vq = &blk->vdev.vqs[0];
	const struct virtio_transport_ops *t = blk->vdev.transport;
	unsigned int budget = BLK_POP_BUDGET;
	/* nfree is never 0 here: a slot is freed in the same critical
	 * section as its chain is pushed (or the ring reset), and the ring
	 * refuses more chains in flight than its size <= BLK_QUEUE_SIZE. */
	while (blk->active && !blk->hold && blk->nfree) {
		if (!budget--) {
			if (t->queue_resched && t->queue_resched(&blk->vdev, 0) == 0)
				break;
			budget = BLK_POP_BUDGET - 1; /* trapped kick: its vCPU pays */
		}
		if (virtq_pop(vq, blk->vdev.gm, &blk->elem) <= 0)
			break;
		struct blk_req *req = &blk->reqs[blk->free[--blk->nfree]];
		enum blk_req_next next = blk_req_parse(req, &blk->elem, &blk->backend);
		if (next != BLK_REQ_QUEUE) {
			blk_complete(blk, req, next);
			blk_slot_free(blk, req);
			continue;
		}
		req->gen = blk->gen;
		if (blk->aio_uring) {
			if (!blk_uring_queue(blk, req)) {
				blk_req_set_result(req, -EAGAIN);
				blk_complete(blk, req, BLK_REQ_QUEUE);
				blk_slot_free(blk, req);
			}
			continue;
		}
		blk->fifo[(blk->qhead + blk->qlen++) % BLK_QUEUE_SIZE] =
		    (unsigned int)(req - blk->reqs);
		pthread_cond_signal(&blk->work_cv);
	}
	if (blk->aio_uring)
		blk_uring_kick(blk); /* one submission for the whole run */
}

static void *blk_worker(void *arg)
{
	struct blk_dev *blk = arg;
	thread_name_self("blk%u", blk->index);
	sandbox_enter_or_die(SANDBOX_BLK);
	pthread_mutex_lock(&blk->mu);
	for (;;) {
		while (!blk->stop && !blk->qlen)
			pthread_cond_wait(&blk->work_cv, &blk->mu);
		if (blk->stop)
			break;
		struct blk_req *req = &blk->reqs[blk->fifo[blk->qhead]];
		blk->qhead = (blk->qhead + 1) % BLK_QUEUE_SIZE;
		blk->qlen--;
		blk->busy = true;
		pthread_mutex_unlock(&blk->mu);
		/* The slow part, without the lock: kicks keep queueing. */
		blk_req_execute(req, &blk->backend);
		pthread_mutex_lock(&blk->mu);
		blk->busy = false;
		/* After a reset the buffers belong to nobody: do not answer. */
		if (req->gen == blk->gen)
			blk_complete(blk, req, BLK_REQ_QUEUE);
		blk_slot_free(blk, req);
		pthread_cond_broadcast(&blk->idle_cv);
	}
	pthread_mutex_unlock(&blk->mu);
	return NULL;
}

/* ---- virtio_dev_ops ---- */

static void blk_config_read(struct virtio_dev *vdev, uint32_t offset, void *buf, uint32_t len)
{
	struct blk_dev *blk = blk_of(vdev);
	memset(buf, 0, len);
	/* The transport checks bounds; this keeps a slip of its from leaking
	 * host memory. Under mu: a medium change rewrites the capacity. */
	pthread_mutex_lock(&blk->mu);
	if (offset <= BLK_CONFIG_LEN && len <= BLK_CONFIG_LEN - offset)
		memcpy(buf, (const uint8_t *)&blk->config + offset, len);
	else
		counter_add(&blk->stats.config_fails, 1);
	pthread_mutex_unlock(&blk->mu);
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
	pthread_mutex_lock(&blk->mu);
	blk->active = true;
	/* Requests made available before DRIVER_OK got no kick we acted on. */
	blk_pop_all(blk);
	pthread_mutex_unlock(&blk->mu);
	return 0;
}

static void blk_reset(struct virtio_dev *vdev)
{
	struct blk_dev *blk = blk_of(vdev);
	pthread_mutex_lock(&blk->mu);
	blk->active = false;
	blk->gen++;
	while (blk->qlen) {
		blk_slot_free(blk, &blk->reqs[blk->fifo[blk->qhead]]);
		blk->qhead = (blk->qhead + 1) % BLK_QUEUE_SIZE;
		blk->qlen--;
	}
	/* The transport resets the rings next: no I/O into guest buffers may
	 * still be running then. */
	while (blk->busy || blk->inflight)
		pthread_cond_wait(&blk->idle_cv, &blk->mu);
	pthread_mutex_unlock(&blk->mu);
}

static void blk_queue_notify(struct virtio_dev *vdev, unsigned int q)
{
	struct blk_dev *blk = blk_of(vdev);
	if (q != 0)
		return;
	counter_add(&blk->stats.kicks, 1);
	pthread_mutex_lock(&blk->mu);
	blk_pop_all(blk);
	pthread_mutex_unlock(&blk->mu);
}

static const struct virtio_dev_ops blk_ops = {
    .config_read = blk_config_read,
    .config_write = blk_config_write,
    .activate = blk_activate,
    .reset = blk_reset,
    .queue_notify = blk_queue_notify,
};

/* ---- creation ---- */

static void blk_config_init(struct blk_dev *blk)
{
	struct blk_config *c = &blk->config;
	c->capacity = blk->backend.capacity;
	c->seg_max = BLK_SEG_MAX;
	c->blk_size = BLK_SECTOR_SIZE;
	c->num_queues = 1;
	c->max_discard_sectors = BLK_DISCARD_SECTORS_MAX;
	c->max_discard_seg = BLK_DISCARD_SEG_MAX;
	c->discard_sector_alignment = 4096 / BLK_SECTOR_SIZE; /* host page */
	c->max_write_zeroes_sectors = BLK_WRITE_ZEROES_SECTORS_MAX;
	c->max_write_zeroes_seg = BLK_DISCARD_SEG_MAX;
	c->write_zeroes_may_unmap = 1;
}

/* VERSION_1 and the ring features are the transport's to offer. */
static uint64_t blk_features(bool ro)
{
	uint64_t f = 1ULL << VIRTIO_BLK_F_SEG_MAX | 1ULL << VIRTIO_BLK_F_BLK_SIZE |
		     1ULL << VIRTIO_BLK_F_FLUSH;
	if (ro)
		return f | 1ULL << VIRTIO_BLK_F_RO;
	return f | 1ULL << VIRTIO_BLK_F_DISCARD | 1ULL << VIRTIO_BLK_F_WRITE_ZEROES;
}

static struct virtio_dev *blk_new(const struct blk_spec *s, unsigned int index, char *err,
				  size_t errlen)
{
	struct blk_dev *blk = calloc(1, sizeof(*blk));
	if (blk)
		blk->reqs = calloc(BLK_QUEUE_SIZE, sizeof(*blk->reqs));
	if (!blk || !blk->reqs) {
		snprintf(err, errlen, "out of memory");
		goto fail_mem;
	}
	if (blk_backend_open(&blk->backend, s->path, s->ro, err, errlen) < 0)
		goto fail_mem;
	snprintf(blk->name, sizeof(blk->name), "virtio-blk%u", index);
	blk->index = index;
	blk_config_init(blk);
	for (unsigned int i = 0; i < BLK_QUEUE_SIZE; i++)
		blk->free[blk->nfree++] = BLK_QUEUE_SIZE - 1 - i;
	pthread_mutex_init(&blk->mu, NULL);
	pthread_cond_init(&blk->work_cv, NULL);
	pthread_cond_init(&blk->idle_cv, NULL);

	struct virtio_dev *vdev = &blk->vdev;
	vdev->name = blk->name;
	vdev->device_id = VIRTIO_ID_BLOCK;
	vdev->host_features = blk_features(s->ro);
	vdev->config_len = BLK_CONFIG_LEN;
	vdev->num_queues = 1;
	vdev->queue_max_size = BLK_QUEUE_SIZE;
	vdev->ops = &blk_ops;
	vdev->priv = blk;
	vdev->poll = s->poll;
	vdev->poll_queues = 1u << 0;
	/* The worker pushes completions and reads the guest's interrupt
	 * suppression under mu, while a poller on the I/O thread checks the
	 * ring and turns guest kicks off and on. Those happen to touch
	 * different virtq fields, but rather than depend on that, the poller
	 * takes mu as well (the transport honours queue_lock): every access
	 * to this queue, from any thread, is under mu. Moving pushes to the
	 * I/O thread would need a completion queue and a wakeup per request;
	 * the lock costs the poller one uncontended mutex per check. */
	vdev->queue_lock = &blk->mu;
	pthread_mutex_init(&vdev->lock, NULL);
	if (s->aio == BLK_AIO_IO_URING) {
		int u = blk_uring_init(&blk->uring, BLK_URING_ENTRIES);
		if (u < 0)
			fprintf(stderr, "skiff: %s: io_uring unavailable (%s); using threads\n",
				blk->name, strerror(-u));
		blk->aio_uring = u == 0;
	}
	int r =
	    pthread_create(&blk->worker, NULL, blk->aio_uring ? blk_uring_worker : blk_worker, blk);
	if (r) {
		snprintf(err, errlen, "cannot start the disk thread: %s", strerror(r));
		blk_uring_exit(&blk->uring);
		blk_backend_close(&blk->backend);
		goto fail_mem;
	}
	return vdev;
fail_mem:
	if (blk)
		free(blk->reqs);
	free(blk);
	return NULL;
}

struct virtio_dev *virtio_blk_create(const char *spec, unsigned int index, char *err, size_t errlen)
{
	struct blk_spec *s = malloc(sizeof(*s)); /* PATH_MAX: off the stack */
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	struct virtio_dev *vdev =
	    blk_spec_parse(spec, s, err, errlen) < 0 ? NULL : blk_new(s, index, err, errlen);
	free(s);
	return vdev;
}

void virtio_blk_drain(struct virtio_dev *vdev)
{
	struct blk_dev *blk = blk_of(vdev);
	pthread_mutex_lock(&blk->mu);
	while (blk->qlen || blk->busy || blk->inflight)
		pthread_cond_wait(&blk->idle_cv, &blk->mu);
	pthread_mutex_unlock(&blk->mu);
}

/* Stops the worker once its queued requests are done: their completions
 * still reach the guest's ring, which is mapped until the VM is destroyed. */
void virtio_blk_stop(struct virtio_dev *vdev)
{
	struct blk_dev *blk = blk_of(vdev);
	pthread_mutex_lock(&blk->mu);
	if (blk->stop) {
		pthread_mutex_unlock(&blk->mu);
		return;
	}
	while (blk->qlen || blk->busy || blk->inflight)
		pthread_cond_wait(&blk->idle_cv, &blk->mu);
	blk->active = false;
	blk->stop = true;
	pthread_cond_signal(&blk->work_cv);
	if (blk->aio_uring) {
		/* The disk thread sleeps in the ring: a nop wakes it. */
		blk_uring_prep_nop(&blk->uring, BLK_URING_TAG_WAKE);
		blk_uring_kick(blk);
	}
	pthread_mutex_unlock(&blk->mu);
	pthread_join(blk->worker, NULL);
}

void virtio_blk_destroy(struct virtio_dev *vdev)
{
	struct blk_dev *blk = blk_of(vdev);
	if (!blk->stop)
		blk_reset(vdev);
	virtio_blk_stop(vdev);
	blk_uring_exit(&blk->uring);
	blk_backend_close(&blk->backend);
	pthread_cond_destroy(&blk->work_cv);
	pthread_cond_destroy(&blk->idle_cv);
	pthread_mutex_destroy(&blk->mu);
	free(blk->reqs);
	free(blk);
}

/* Firecracker's PATCH /drives path_on_host: the new image is opened (same
 * access, same lock rules) before anything changes, so a bad path leaves
 * the disk as it was. Requests already taken finish on the old image; new
 * ones wait in the ring (hold) until the swap is done, then run on the new
 * one. The capacity changes with the config generation and a
 * configuration interrupt, on which Linux re-reads it (virtio 1.2
 * §5.2.6). The serial is the device's, not the image's: it stays. */
int virtio_blk_replace(struct virtio_dev *vdev, const char *path, char *err, size_t errlen)
{
	struct blk_dev *blk = blk_of(vdev);
	struct blk_backend nb, old;
	if (blk_backend_open(&nb, path, blk->backend.ro, err, errlen) < 0) {
		counter_add(&blk->stats.update_fails, 1);
		return -1;
	}
	pthread_mutex_lock(&blk->mu);
	if (blk->stop) {
		counter_add(&blk->stats.update_fails, 1);
		pthread_mutex_unlock(&blk->mu);
		blk_backend_close(&nb);
		snprintf(err, errlen, "the disk is stopped");
		return -1;
	}
	blk->hold = true;
	while (blk->qlen || blk->busy || blk->inflight)
		pthread_cond_wait(&blk->idle_cv, &blk->mu);
	memcpy(nb.serial, blk->backend.serial, sizeof(nb.serial));
	old = blk->backend;
	blk->backend = nb;
	blk->config.capacity = nb.capacity;
	atomic_fetch_add(&vdev->config_generation, 1);
	blk->hold = false;
	counter_add(&blk->stats.updates, 1);
	blk_pop_all(blk); /* what was kicked meanwhile */
	pthread_mutex_unlock(&blk->mu);
	blk_backend_close(&old);
	if (atomic_load(&vdev->status) & VIRTIO_STATUS_DRIVER_OK)
		vdev->transport->notify_config(vdev);
	return 0;
}

static int blk_dev_replace(void *dev, const char *path, char *err, size_t errlen)
{
	return virtio_blk_replace(dev, path, err, errlen);
}

static void blk_dev_stop(void *dev)
{
	virtio_blk_stop(dev);
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
    .stop = blk_dev_stop,
    .destroy = blk_dev_destroy,
    .counters = blk_dev_counters,
    .replace = blk_dev_replace,
};

int virtio_blk_new_device(const struct dev_ctx *ctx, const void *spec, struct device *out,
			  char *err, size_t errlen)
{
	const struct blk_spec *s = spec;
	struct virtio_dev *vdev = blk_new(s, ctx->index, err, errlen);
	if (!vdev)
		return -1;
	*out = (struct device){.dev = vdev, .ops = &blk_dev_ops, .vdev = vdev};
	return 0;
}

const char *virtio_blk_needs_ioeventfd(const void *spec)
{
	return ((const struct blk_spec *)spec)->poll.mode != POLL_OFF ? "poll=" : NULL;
}
