/* virtio-blk with aio=io_uring: the I/O thread (or a vCPU on a trapped
 * kick) puts each checked request into the ring and submits once per run
 * of the available ring; the disk thread sleeps in the ring, and answers
 * every completion it finds in one go, with one interrupt for the batch
 * (virtio_notify_if_needed honours the guest's event index). DISCARD and
 * WRITE_ZEROES are not ring operations: a draining nop holds their place,
 * and the disk thread does them itself once everything before them is
 * done. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/sandbox.h"
#include "core/thread.h"
#include "devices/virtio_blk_priv.h"

bool blk_uring_queue(struct blk_dev *blk, struct blk_req *req)
{
	uint64_t tag = (uint64_t)(req - blk->reqs);
	if (!blk_uring_prep(&blk->uring, req, blk->backend.fd, tag)) {
		/* Full (it holds every slot, so only unsubmitted entries can
		 * fill it): submit, then there is room, unless the kernel
		 * refused the submission. */
		blk_uring_kick(blk);
		if (!blk_uring_prep(&blk->uring, req, blk->backend.fd, tag))
			return false;
	}
	blk->inflight++;
	return true;
}

void blk_uring_kick(struct blk_dev *blk)
{
	int r = blk_uring_submit(&blk->uring);
	if (r < 0 && !blk->submit_failed_logged) {
		blk->submit_failed_logged = true;
		fprintf(stderr, "skiff: %s: io_uring submit failed: %s\n", blk->name, strerror(-r));
	}
}

/* One completion, with mu held. Returns false if the request goes on (a
 * short transfer resubmitted), true once it has its result. */
static bool blk_uring_done(struct blk_dev *blk, struct blk_req *req, int res)
{
	switch (req->type) {
	case VIRTIO_BLK_T_IN:
	case VIRTIO_BLK_T_OUT:
		if (res > 0 && blk_req_advance(req, (uint64_t)res) > 0) {
			if (blk_uring_queue(blk, req)) {
				blk->inflight--; /* the same request, still one */
				return false;
			}
			res = -EIO;
		}
		blk_req_set_result(req, res < 0 ? res : res == 0 && blk_req_left(req) ? -EIO : 0);
		return true;
	case VIRTIO_BLK_T_FLUSH:
		blk_req_set_result(req, res);
		return true;
	default: /* everything before it is done: now its own I/O */
		blk->busy = true;
		pthread_mutex_unlock(&blk->mu);
		blk_req_execute(req, &blk->backend);
		pthread_mutex_lock(&blk->mu);
		blk->busy = false;
		return true;
	}
}

void *blk_uring_worker(void *arg)
{
	struct blk_dev *blk = arg;
	struct blk_uring_done done[64];
	thread_name_self("blk%u", blk->index);
	sandbox_enter_or_die(SANDBOX_BLK);
	for (;;) {
		int n = blk_uring_reap(&blk->uring, done, sizeof(done) / sizeof(done[0]));
		pthread_mutex_lock(&blk->mu);
		if (n < 0) {
			/* Cannot happen with a ring that was set up; if it does,
			 * stop rather than spin. Requests in flight stay
			 * unanswered: the guest sees a hung disk, not a crash. */
			fprintf(stderr, "skiff: %s: io_uring wait failed: %s\n", blk->name,
				strerror(-n));
			pthread_mutex_unlock(&blk->mu);
			break;
		}
		bool pushed = false;
		for (int i = 0; i < n; i++) {
			if (done[i].tag >= BLK_QUEUE_SIZE)
				continue; /* the wake-up nop */
			struct blk_req *req = &blk->reqs[done[i].tag];
			if (!blk_uring_done(blk, req, done[i].res))
				continue;
			blk->inflight--;
			/* After a reset the buffers belong to nobody: do not answer. */
			if (req->gen == blk->gen) {
				blk_req_finish(req);
				blk_stats_count(blk, req, BLK_REQ_QUEUE);
				pushed |= virtq_push(&blk->vdev.vqs[0], blk->vdev.gm, req->head,
						     req->used_len) == 0;
			}
			blk_slot_free(blk, req);
		}
		blk_uring_kick(blk); /* short transfers put back */
		if (pushed)
			virtio_notify_if_needed(&blk->vdev, 0);
		if (!blk->inflight)
			pthread_cond_broadcast(&blk->idle_cv);
		bool stop = blk->stop && !blk->inflight;
		pthread_mutex_unlock(&blk->mu);
		if (stop)
			break;
	}
	return NULL;
}
