// SPDX-License-Identifier: Apache-2.0
/* One virtio-blk request queue: popping and checking requests, its disk
 * thread, completions. Everything here runs under the queue's own lock
 * (q->mu): kicks on different queues never contend.
 *
 * One disk thread per queue, not per disk: the thread path's worker
 * sleeps on its queue's condition variable under that queue's lock, and a
 * thread serving every queue would need one lock over all of them, the
 * very lock multiqueue removes. With aio=io_uring each queue has its own
 * ring for the same reason (a ring's submission side takes one producer
 * at a time), and its own completion thread answers on that queue only.
 *
 * FLUSH across queues: a flush must cover every write the guest saw
 * completed, on whichever queue. A write is pushed to its used ring only
 * after its pwritev (or its ring write) returned, and the guest sends the
 * flush after it saw that; the flush is an fdatasync of the shared image
 * fd, which covers every write to the file that returned before it began,
 * from any thread or ring. So no ordering between queues is needed. Within
 * a queue the order stays as it was: the thread path runs requests in
 * order, and the ring drains before a flush (IOSQE_IO_DRAIN). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sandbox.h"
#include "core/thread.h"
#include "devices/virtio-blk/virtio_blk.h"
#include "devices/virtio-blk/virtio_blk_priv.h"

/* how: what blk_req_parse said; BLK_REQ_QUEUE once carried out. The
 * answer goes to the queue the request came from, with its vector. */
static void blk_complete(struct blk_queue *q, struct blk_req *req, enum blk_req_next how)
{
	bool has_status = how != BLK_REQ_DROP;
	if (has_status)
		blk_req_finish(req);
	blk_stats_count(q->blk, req, how);
	virtio_complete(&q->blk->vdev, q->index, req->head, has_status ? req->used_len : 0);
}

/* What a request costs the byte bucket: the data it reads or writes.
 * WRITE_ZEROES writes too (zero bytes for real where the host file system
 * cannot allocate zeroes), so its ranges count; FLUSH and DISCARD move no
 * data and cost an op only. */
static uint64_t blk_req_bytes(const struct blk_req *req)
{
	uint64_t bytes = 0;
	if (req->type == VIRTIO_BLK_T_IN || req->type == VIRTIO_BLK_T_OUT)
		return req->len;
	if (req->type == VIRTIO_BLK_T_WRITE_ZEROES)
		for (unsigned int i = 0; i < req->nranges; i++)
			bytes += req->ranges[i].len; /* at most 16 x 32 MiB */
	return bytes;
}

void blk_slot_free(struct blk_queue *q, struct blk_req *req)
{
	q->free[q->nfree++] = (unsigned int)(req - q->reqs);
}

/* Pops available chains: checks each, answers it if that is all it needs,
 * else queues it for the worker. Runs to an empty ring (with EVENT_IDX
 * the guest does not kick again until then), or to the budget: the
 * transport then calls again later, or if it cannot, the run goes on. */
void blk_queue_pop_all(struct blk_queue *q)
{
	struct blk_dev *blk = q->blk;
	struct virtq *vq = &blk->vdev.vqs[q->index];
	const struct virtio_transport_ops *t = blk->vdev.transport;
	unsigned int budget = BLK_POP_BUDGET;
	/* nfree is never 0 here: a slot is freed in the same critical
	 * section as its chain is pushed (or the ring reset), and the ring
	 * refuses more chains in flight than its size <= BLK_QUEUE_SIZE. */
	while (q->active && !q->hold && q->nfree && !throttle_waiting(&blk->throttle)) {
		if (!budget--) {
			if (t->queue_resched && t->queue_resched(&blk->vdev, q->index) == 0)
				break;
			budget = BLK_POP_BUDGET - 1; /* trapped kick: its vCPU pays */
		}
		if (virtq_pop(vq, blk->vdev.gm, &q->elem) <= 0)
			break;
		struct blk_req *req = &q->reqs[q->free[--q->nfree]];
		enum blk_req_next next = blk_req_parse(req, &q->elem, &blk->backend);
		if (next != BLK_REQ_QUEUE) {
			blk_complete(q, req, next);
			blk_slot_free(q, req);
			continue;
		}
		/* Over the limit: the chain goes back to the ring, the queue
		 * waits for the limiter's timer (blk_throttle_resume). */
		if (!throttle_admit(&blk->throttle, 1, blk_req_bytes(req))) {
			virtq_unpop(vq);
			blk_slot_free(q, req);
			break;
		}
		req->gen = q->gen;
		if (blk->aio_uring) {
			if (!blk_uring_queue(q, req)) {
				blk_req_set_result(req, -EAGAIN);
				blk_complete(q, req, BLK_REQ_QUEUE);
				blk_slot_free(q, req);
			}
			continue;
		}
		q->fifo[(q->qhead + q->qlen++) % BLK_QUEUE_SIZE] = (unsigned int)(req - q->reqs);
		pthread_cond_signal(&q->work_cv);
	}
	if (blk->aio_uring)
		blk_uring_kick(q); /* one submission for the whole run */
}

static void *blk_worker(void *arg)
{
	struct blk_queue *q = arg;
	struct blk_dev *blk = q->blk;
	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (!q->stop && !q->qlen)
			pthread_cond_wait(&q->work_cv, &q->mu);
		if (q->stop)
			break;
		struct blk_req *req = &q->reqs[q->fifo[q->qhead]];
		q->qhead = (q->qhead + 1) % BLK_QUEUE_SIZE;
		q->qlen--;
		q->busy = true;
		pthread_mutex_unlock(&q->mu);
		/* The slow part, without the lock: kicks keep queueing. */
		blk_req_execute(req, &blk->backend);
		pthread_mutex_lock(&q->mu);
		q->busy = false;
		/* After a reset the buffers belong to nobody: do not answer. */
		if (req->gen == q->gen)
			blk_complete(q, req, BLK_REQ_QUEUE);
		blk_slot_free(q, req);
		pthread_cond_broadcast(&q->idle_cv);
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

/* Queue 0's thread keeps the name it had before multiqueue ("blkN"). */
static void *blk_thread(void *arg)
{
	struct blk_queue *q = arg;
	if (q->index)
		thread_name_self("blk%u.%u", q->blk->index, q->index);
	else
		thread_name_self("blk%u", q->blk->index);
	sandbox_enter_or_die(SANDBOX_BLK);
	return q->blk->aio_uring ? blk_uring_worker(q) : blk_worker(q);
}

int blk_queue_init(struct blk_queue *q, struct blk_dev *blk, unsigned int index, char *err,
		   size_t errlen)
{
	q->blk = blk;
	q->index = index;
	q->reqs = calloc(BLK_QUEUE_SIZE, sizeof(*q->reqs));
	if (!q->reqs) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (unsigned int i = 0; i < BLK_QUEUE_SIZE; i++)
		q->free[q->nfree++] = BLK_QUEUE_SIZE - 1 - i;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->work_cv, NULL);
	pthread_cond_init(&q->idle_cv, NULL);
	int r = pthread_create(&q->worker, NULL, blk_thread, q);
	if (r) {
		snprintf(err, errlen, "cannot start the disk thread: %s", strerror(r));
		return -1;
	}
	q->started = true;
	return 0;
}

void blk_queue_fini(struct blk_queue *q)
{
	blk_uring_exit(&q->uring);
	if (!q->reqs)
		return;
	pthread_cond_destroy(&q->work_cv);
	pthread_cond_destroy(&q->idle_cv);
	pthread_mutex_destroy(&q->mu);
	free(q->reqs);
	q->reqs = NULL;
}

void blk_queue_wait_idle(struct blk_queue *q)
{
	while (q->qlen || q->busy || q->inflight)
		pthread_cond_wait(&q->idle_cv, &q->mu);
}

/* Stops the worker once its queued requests are done: their completions
 * still reach the guest's ring, which is mapped until the VM is destroyed. */
void blk_queue_stop(struct blk_queue *q)
{
	if (!q->started)
		return;
	pthread_mutex_lock(&q->mu);
	blk_queue_wait_idle(q);
	q->active = false;
	q->stop = true;
	pthread_cond_signal(&q->work_cv);
	if (q->blk->aio_uring) {
		/* The disk thread sleeps in the ring: a nop wakes it. */
		blk_uring_prep_nop(&q->uring, BLK_URING_TAG_WAKE);
		blk_uring_kick(q);
	}
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->worker, NULL);
	q->started = false;
}
