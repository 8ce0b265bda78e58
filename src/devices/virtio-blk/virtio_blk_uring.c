// SPDX-License-Identifier: Apache-2.0
/* virtio-blk with aio=io_uring, a ring per queue: the I/O thread (or a
 * vCPU on a trapped kick) puts each checked request into its queue's ring
 * and submits once per run of the available ring; the queue's disk thread
 * sleeps in that ring, and answers
 * every completion it finds in one go, with one interrupt for the batch
 * (virtio_notify_if_needed honours the guest's event index). DISCARD and
 * WRITE_ZEROES are not ring operations: a draining nop holds their place,
 * and the disk thread does them itself once everything before them is
 * done. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "devices/virtio-blk/virtio_blk_priv.h"

bool blk_uring_queue(struct blk_queue *q, struct blk_req *req)
{
	/* Chosen per submission: a short transfer put back may have left
	 * the rest unaligned for O_DIRECT. */
	const struct blk_backend *b = &q->blk->backend;
	int fd = req->buffered ? b->fd : blk_backend_fd_for(b, req->iov, req->niov, req->off);
	uint64_t tag = (uint64_t)(req - q->reqs);
	if (!blk_uring_prep(&q->uring, req, fd, tag)) {
		/* Full (it holds every slot, so only unsubmitted entries can
		 * fill it): submit, then there is room, unless the kernel
		 * refused the submission. */
		blk_uring_kick(q);
		if (!blk_uring_prep(&q->uring, req, fd, tag))
			return false;
	}
	q->inflight++;
	return true;
}

void blk_uring_kick(struct blk_queue *q)
{
	int r = blk_uring_submit(&q->uring);
	if (r < 0 && !q->submit_failed_logged) {
		q->submit_failed_logged = true;
		log_err("%s: q%u: io_uring submit failed: %s", q->blk->name, q->index,
			strerror(-r));
	}
}

/* One completion, with q->mu held. Returns false if the request goes on
 * (a short transfer resubmitted), true once it has its result. */
static bool blk_uring_done(struct blk_queue *q, struct blk_req *req, int res)
{
	switch (req->type) {
	case VIRTIO_BLK_T_IN:
	case VIRTIO_BLK_T_OUT: {
		bool again = false; /* resubmitted: the same request, still one */
		if (res == -EINVAL && !req->buffered && q->blk->backend.dfd >= 0) {
			/* The direct file wants more alignment: redone buffered
			 * (once), where everything goes from now on. */
			blk_backend_refuse_direct(&q->blk->backend);
			req->buffered = again = true;
		} else if (res > 0 && blk_req_advance(req, (uint64_t)res) > 0) {
			again = true; /* a short transfer: the rest */
		}
		if (again) {
			if (blk_uring_queue(q, req)) {
				q->inflight--;
				return false;
			}
			res = -EIO;
		}
		blk_req_set_result(req, res < 0 ? res : res == 0 && blk_req_left(req) ? -EIO : 0);
		return true;
	}
	case VIRTIO_BLK_T_FLUSH:
		blk_req_set_result(req, res);
		return true;
	default: /* everything before it is done: now its own I/O */
		q->busy = true;
		pthread_mutex_unlock(&q->mu);
		blk_req_execute(req, &q->blk->backend);
		pthread_mutex_lock(&q->mu);
		q->busy = false;
		return true;
	}
}

/* The thread is named and sandboxed by its caller (virtio_blk_queue.c).
 * It answers on its own queue only, under that queue's lock. */
void *blk_uring_worker(void *arg)
{
	struct blk_queue *q = arg;
	struct blk_dev *blk = q->blk;
	struct blk_uring_done done[64];
	for (;;) {
		int n = blk_uring_reap(&q->uring, done, sizeof(done) / sizeof(done[0]));
		pthread_mutex_lock(&q->mu);
		if (n < 0) {
			/* Cannot happen with a ring that was set up; if it does,
			 * stop rather than spin. Requests in flight stay
			 * unanswered: the guest sees a hung disk, not a crash. */
			log_err("%s: q%u: io_uring wait failed: %s", blk->name, q->index,
				strerror(-n));
			pthread_mutex_unlock(&q->mu);
			break;
		}
		bool pushed = false;
		for (int i = 0; i < n; i++) {
			if (done[i].tag >= BLK_QUEUE_SIZE)
				continue; /* the wake-up nop */
			struct blk_req *req = &q->reqs[done[i].tag];
			if (!blk_uring_done(q, req, done[i].res))
				continue;
			q->inflight--;
			/* After a reset the buffers belong to nobody: do not answer. */
			if (req->gen == q->gen) {
				blk_req_finish(req);
				blk_stats_count(blk, req, BLK_REQ_QUEUE);
				pushed |= virtq_push(&blk->vdev.vqs[q->index], blk->vdev.gm,
						     req->head, req->used_len) == 0;
			}
			blk_slot_free(q, req);
		}
		blk_uring_kick(q); /* short transfers put back */
		if (pushed)
			virtio_notify_if_needed(&blk->vdev, q->index);
		if (!q->inflight)
			pthread_cond_broadcast(&q->idle_cv);
		bool stop = q->stop && !q->inflight;
		pthread_mutex_unlock(&q->mu);
		if (stop)
			break;
	}
	return NULL;
}
