// SPDX-License-Identifier: Apache-2.0
/* virtio-blk's insides, shared by virtio_blk.c (the device),
 * virtio_blk_queue.c (a request queue, the thread path) and
 * virtio_blk_uring.c (the io_uring path). */
#ifndef SKIFF_VIRTIO_BLK_PRIV_H
#define SKIFF_VIRTIO_BLK_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/counter.h"
#include "devices/block/blk_backend.h"
#include "devices/block/blk_req.h"
#include "devices/block/blk_uring.h"
#include "devices/throttle.h"
#include "virtio/virtio_dev.h"

/* Ring entries; also the number of request slots, so a pop always finds
 * one (the virtqueue refuses more chains in flight than its size). */
#define BLK_QUEUE_SIZE 128
/* Ring entries: every slot in flight, plus the wake-up nop. */
#define BLK_URING_ENTRIES  256
#define BLK_URING_TAG_WAKE UINT64_MAX

struct blk_config { /* guest layout (§5.2.4), little-endian like the host */
	uint64_t capacity;
	uint32_t size_max;
	uint32_t seg_max;
	uint16_t cylinders;
	uint8_t heads, sectors;
	uint32_t blk_size;
	uint8_t physical_block_exp, alignment_offset;
	uint16_t min_io_size;
	uint32_t opt_io_size;
	uint8_t writeback, unused0;
	uint16_t num_queues;
	uint32_t max_discard_sectors, max_discard_seg, discard_sector_alignment;
	uint32_t max_write_zeroes_sectors, max_write_zeroes_seg;
	uint8_t write_zeroes_may_unmap, unused1[3];
};
_Static_assert(offsetof(struct blk_config, blk_size) == 20, "config layout");
_Static_assert(offsetof(struct blk_config, num_queues) == 34, "config layout");
_Static_assert(offsetof(struct blk_config, max_discard_sectors) == 36, "config layout");
_Static_assert(offsetof(struct blk_config, write_zeroes_may_unmap) == 56, "config layout");
#define BLK_CONFIG_LEN 60 /* through unused1; the secure-erase fields are not offered */

/* Counted as a request is answered (blk_stats_count), on any queue, so
 * one a reset dropped is not; reads, writes and flushes only when they succeeded. */
struct virtio_blk_stats {
	counter_t reads, read_bytes;
	counter_t writes, write_bytes;
	counter_t flushes;
	counter_t invalid;		 /* refused as parsed: header, range, type, ro, status */
	counter_t io_errors;		 /* valid, but the image's I/O failed */
	counter_t kicks;		 /* queue notifications acted on */
	counter_t config_fails;		 /* config reads outside the config space */
	counter_t updates, update_fails; /* medium changes (virtio_blk_replace) */
	counter_t throttled;		 /* the rate limiter made the queues wait */
};

/* One request queue: its lock, slots, FIFO and disk thread. Kicks on
 * different queues share nothing but the image fd (positioned I/O needs no
 * lock) and the counters (relaxed atomics). */
struct blk_queue {
	struct blk_dev *blk;
	unsigned int index; /* virtqueue number */
	pthread_t worker;
	bool started; /* worker runs: join it */

	/* mu guards this virtqueue and everything below. */
	pthread_mutex_t mu;
	pthread_cond_t work_cv; /* to the worker: a request was queued, or stop */
	pthread_cond_t idle_cv; /* from the worker: it finished a request */
	bool active;		/* between activate and reset */
	bool stop;		/* the worker must exit */
	bool busy;		/* the worker is doing I/O without mu */
	bool hold;		/* a medium change: pop nothing, let the rest finish */
	uint64_t gen;		/* bumped by reset: older requests are dropped */
	/* Request slots: free ones on a stack, queued ones in a FIFO. */
	struct blk_req *reqs; /* BLK_QUEUE_SIZE of them */
	unsigned int nfree, free[BLK_QUEUE_SIZE];
	unsigned int qhead, qlen, fifo[BLK_QUEUE_SIZE];
	struct virtq_elem elem; /* pop buffer (16 KiB) */
	/* aio=io_uring: this queue's ring, requests in it (submitted, not
	 * yet answered) */
	struct blk_uring uring;
	unsigned int inflight;
	bool submit_failed_logged;
};

struct blk_dev {
	struct virtio_dev vdev;
	/* Read by every queue without a lock: changed only by
	 * virtio_blk_replace while each queue is held and idle. */
	struct blk_backend backend;
	struct blk_config config; /* under config_mu */
	pthread_mutex_t config_mu;
	char name[24];
	unsigned int index; /* N of virtio-blkN; the workers are "blkN", "blkN.Q" */
	bool aio_uring;
	bool stopped; /* virtio_blk_stop ran (main thread only) */
	unsigned int nq;
	struct blk_queue q[VIRTIO_MAX_QUEUES];
	struct virtio_blk_stats stats; /* atomics: summed over the queues */
	/* bw= / ops=, shared by the queues; its timer on io resumes them */
	struct throttle throttle;
	struct iothread *io;
};

/* With q->mu held. */
void blk_slot_free(struct blk_queue *q, struct blk_req *req);
/* Counts an answered request. how: what blk_req_parse said (BLK_REQ_QUEUE:
 * it was carried out, so an error is the image's). */
void blk_stats_count(struct blk_dev *blk, const struct blk_req *req, enum blk_req_next how);

/* ---- one queue (virtio_blk_queue.c) ---- */
/* Sets q up (slots, lock) and starts its disk thread (its ring, with
 * aio=io_uring, is set up already): 0, or -1 with err. */
int blk_queue_init(struct blk_queue *q, struct blk_dev *blk, unsigned int index, char *err,
		   size_t errlen);
/* Frees what blk_queue_init set up, and the ring; the worker must have
 * stopped. */
void blk_queue_fini(struct blk_queue *q);
/* Pops and starts what the guest made available, with q->mu held. */
void blk_queue_pop_all(struct blk_queue *q);
/* Waits, with q->mu held, until nothing queued, busy or in the ring. */
void blk_queue_wait_idle(struct blk_queue *q);
/* Waits for queued requests, then stops and joins the worker. */
void blk_queue_stop(struct blk_queue *q);

/* ---- aio=io_uring (virtio_blk_uring.c), with q->mu held ---- */
/* Puts a checked request into q's ring (it is submitted by
 * blk_uring_kick); false if the ring has no room. */
bool blk_uring_queue(struct blk_queue *q, struct blk_req *req);
void blk_uring_kick(struct blk_queue *q);
/* A queue's disk thread with aio=io_uring: answers completions in batches. */
void *blk_uring_worker(void *arg);

/* virtio_blk_snap.c: dev_ops.save and restore (devices/device.h). */
struct snap_writer;
int virtio_blk_save(void *dev, struct snap_writer *w, uint32_t id, uint32_t instance, char *err,
		    size_t errlen);
int virtio_blk_restore(void *dev, const void *data, size_t len, char *err, size_t errlen);
int virtio_blk_handover(void *dev, bool release, char *err, size_t errlen);

#endif
