// SPDX-License-Identifier: Apache-2.0
/* virtio-blk's asynchronous engine (--disk ...,aio=io_uring): requests go to
 * an io_uring with real queue depth and come back in batches, one
 * interrupt per batch where the guest's event index allows.
 *
 * The ring is restricted (IORING_REGISTER_RESTRICTIONS) to readv, writev,
 * fsync and nop before it is enabled: whatever a guest sends, the ring can
 * do nothing else (no opens, no sockets), seccomp or not.
 *
 * Threads: the submission side (blk_uring_prep, blk_uring_submit) is used
 * under the device's lock only, the completion side (blk_uring_reap) by
 * the disk thread only, as liburing allows. */
#ifndef SKIFF_BLK_URING_H
#define SKIFF_BLK_URING_H

#include <liburing.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devices/block/blk_req.h"

struct blk_uring {
	struct io_uring ring;
	bool ready;
};

struct blk_uring_done {
	uint64_t tag;
	int res; /* bytes, or -errno */
};

/* 0, or -errno (io_uring missing, disabled or restricted by the host). */
int blk_uring_init(struct blk_uring *u, unsigned int entries);
void blk_uring_exit(struct blk_uring *u);
/* Prepares req's I/O on fd, tagged: IN/OUT as readv/writev of what is left
 * of req->iov at req->off, FLUSH as an fdatasync that starts only once
 * everything submitted before it completed (IOSQE_IO_DRAIN: a flush
 * covers every write the guest saw completed), any other type as a
 * draining nop (the disk thread then runs it itself). false if the
 * submission queue is full. */
bool blk_uring_prep(struct blk_uring *u, const struct blk_req *req, int fd, uint64_t tag);
/* A nop, tagged: wakes the disk thread. */
bool blk_uring_prep_nop(struct blk_uring *u, uint64_t tag);
/* Submits what was prepared: 0 or -errno. */
int blk_uring_submit(struct blk_uring *u);
/* Up to max completions into out; waits for one if none is ready. Returns
 * the count, or -errno. */
int blk_uring_reap(struct blk_uring *u, struct blk_uring_done *out, unsigned int max);

#endif
