// SPDX-License-Identifier: Apache-2.0
/* virtio-blk's counters: what each answered request did, by type, size
 * and status, plus kicks and medium changes, over all queues. Relaxed
 * atomics like every counter_t: bumped by any queue under its own lock
 * (two queues may bump one at once), read by stats from any thread. */
#include <stddef.h>

#include "devices/virtio-blk/virtio_blk.h"
#include "devices/virtio-blk/virtio_blk_priv.h"

void blk_stats_count(struct blk_dev *blk, const struct blk_req *req, enum blk_req_next how)
{
	struct virtio_blk_stats *s = &blk->stats;
	if (how == BLK_REQ_DROP || (how == BLK_REQ_DONE && req->status != VIRTIO_BLK_S_OK)) {
		counter_add(&s->invalid, 1);
		return;
	}
	if (req->status != VIRTIO_BLK_S_OK) {
		counter_add(&s->io_errors, 1);
		return;
	}
	switch (req->type) {
	case VIRTIO_BLK_T_IN:
		counter_add(&s->reads, 1);
		counter_add(&s->read_bytes, req->len);
		break;
	case VIRTIO_BLK_T_OUT:
		counter_add(&s->writes, 1);
		counter_add(&s->write_bytes, req->len);
		break;
	case VIRTIO_BLK_T_FLUSH:
		counter_add(&s->flushes, 1);
		break;
	default: /* GET_ID, DISCARD, WRITE_ZEROES: no counter of their own */
		break;
	}
}

void virtio_blk_counters(struct virtio_dev *vdev, counter_emit_fn emit, void *ctx)
{
	static const struct counter_field c[] = {
	    {"reads", offsetof(struct virtio_blk_stats, reads)},
	    {"read bytes", offsetof(struct virtio_blk_stats, read_bytes)},
	    {"writes", offsetof(struct virtio_blk_stats, writes)},
	    {"write bytes", offsetof(struct virtio_blk_stats, write_bytes)},
	    {"flushes", offsetof(struct virtio_blk_stats, flushes)},
	    {"invalid requests", offsetof(struct virtio_blk_stats, invalid)},
	    {"io errors", offsetof(struct virtio_blk_stats, io_errors)},
	    {"queue events", offsetof(struct virtio_blk_stats, kicks)},
	    {"config fails", offsetof(struct virtio_blk_stats, config_fails)},
	    {"updates", offsetof(struct virtio_blk_stats, updates)},
	    {"update fails", offsetof(struct virtio_blk_stats, update_fails)},
	    {"rate limiter throttled", offsetof(struct virtio_blk_stats, throttled)},
	};
	const struct blk_dev *blk = vdev->priv;
	counter_emit_fields(emit, ctx, blk->name, &blk->stats, c, sizeof(c) / sizeof(c[0]));
}
