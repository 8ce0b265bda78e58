/* virtio-blk's insides, shared by virtio_blk.c (the device, the thread
 * path) and virtio_blk_uring.c (the io_uring path). */
#ifndef SKIFF_VIRTIO_BLK_PRIV_H
#define SKIFF_VIRTIO_BLK_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/counter.h"
#include "devices/blk_backend.h"
#include "devices/blk_req.h"
#include "devices/blk_uring.h"
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

/* Counted as a request is answered (blk_stats_count), so one a reset
 * dropped is not; reads, writes and flushes only when they succeeded. */
struct virtio_blk_stats {
	counter_t reads, read_bytes;
	counter_t writes, write_bytes;
	counter_t flushes;
	counter_t invalid;		 /* refused as parsed: header, range, type, ro, status */
	counter_t io_errors;		 /* valid, but the image's I/O failed */
	counter_t kicks;		 /* queue notifications acted on */
	counter_t config_fails;		 /* config reads outside the config space */
	counter_t updates, update_fails; /* medium changes (virtio_blk_replace) */
};

struct blk_dev {
	struct virtio_dev vdev;
	struct blk_backend backend;
	struct blk_config config;
	char name[24];
	unsigned int index; /* N of virtio-blkN; the worker is "blkN" */
	pthread_t worker;

	/* mu guards the virtqueue and everything below. */
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
	/* aio=io_uring: requests in the ring (submitted, not yet answered) */
	bool aio_uring;
	struct blk_uring uring;
	unsigned int inflight;
	bool submit_failed_logged;
	struct virtio_blk_stats stats;
};

/* With mu held. */
void blk_slot_free(struct blk_dev *blk, struct blk_req *req);
/* Counts an answered request, with mu held. how: what blk_req_parse said
 * (BLK_REQ_QUEUE: it was carried out, so an error is the image's). */
void blk_stats_count(struct blk_dev *blk, const struct blk_req *req, enum blk_req_next how);
/* aio=io_uring, with mu held: puts a checked request into the ring (it is
 * submitted by blk_uring_kick); false if the ring has no room. */
bool blk_uring_queue(struct blk_dev *blk, struct blk_req *req);
void blk_uring_kick(struct blk_dev *blk);
/* The disk thread of aio=io_uring: answers completions in batches. */
void *blk_uring_worker(void *arg);

#endif
