// SPDX-License-Identifier: Apache-2.0
/* virtio-blk (virtio 1.2 §5.2): a raw image file as a guest disk.
 *
 * 1 to BLK_QUEUES_MAX request queues (VIRTIO_BLK_F_MQ when more than one;
 * default one per vCPU). Kicks pop and check requests on the kicking
 * thread (the disk's I/O thread, or the vCPU with --no-ioeventfd: cheap,
 * never blocks on the disk; at most BLK_POP_BUDGET per run); the disk I/O
 * runs on one thread per queue ("blkN" for queue 0, "blkN.Q" for the
 * others), which completes requests on their queue itself. A mutex per
 * queue serializes everything that touches that virtqueue, the I/O
 * thread's poller included (poll=adaptive|always; vdev->queue_lock[q]);
 * no lock spans the queues on the data path. */
#ifndef SKIFF_VIRTIO_BLK_H
#define SKIFF_VIRTIO_BLK_H

#include <stddef.h>

#include "devices/dev_api.h"
#include "devices/dev_metrics.h"
#include "devices/dev_sandbox.h"
#include "devices/device.h"

struct virtio_dev;

/* The device kind behind --disk (a struct blk_spec, virtio_blk_spec.h):
 * opens the image and starts the workers "blkN" (N = ctx->index); without
 * queues= in the spec, a queue per vCPU (ctx->nr_vcpus). */
int virtio_blk_new_device(const struct dev_ctx *ctx, const void *spec, struct device *out,
			  char *err, size_t errlen);
/* What in spec needs ioeventfd kicks ("poll="), or NULL. */
const char *virtio_blk_needs_ioeventfd(const void *spec);

/* Chains popped per kick before the run yields, as virtio-net's budget: a
 * guest refilling requests that complete at once must not pin the I/O
 * thread it shares, nor keep the disk's mutex from a reset. The transport
 * calls again later (queue_resched). */
#define BLK_POP_BUDGET 64
/* --disk ...,queues=N: 1..BLK_QUEUES_MAX. Each queue costs a thread, its
 * request slots (~300 KiB) and, with io_uring, a ring. */
#define BLK_QUEUES_MAX 16

/* The same from a spec string, for tests:
 * parses spec (virtio_blk_spec.h), opens the image and starts the workers
 * (one queue unless the spec says queues=N);
 * vdev->poll comes from the spec. The caller fills in vdev->transport, gm
 * and the virtqueues. NULL with a reason on error. */
struct virtio_dev *virtio_blk_create(const char *spec, unsigned int index, char *err,
				     size_t errlen);
/* Waits for queued requests to complete, then stops the workers. */
void virtio_blk_stop(struct virtio_dev *vdev);
/* Stops the workers (dropping queued requests) and frees the device. */
void virtio_blk_destroy(struct virtio_dev *vdev);
/* Changes the medium: opens the image at path (read-only if the disk is)
 * and swaps it in once the requests in flight have finished; the guest
 * gets the new capacity with a configuration interrupt. 0, or -1 with a
 * reason in err and the old image still in place. */
int virtio_blk_replace(struct virtio_dev *vdev, const char *path, char *err, size_t errlen);
/* New limits for the buckets in mask (1 << RL_*), from any thread: 0. */
int virtio_blk_limit(struct virtio_dev *vdev, const struct ratelimit_cfg *cfg, unsigned int mask);
/* Waits until every queued request, on every queue, has completed. */
void virtio_blk_drain(struct virtio_dev *vdev);
/* Its counters (dev_ops.counters): requests by type, bytes, errors,
 * kicks, medium changes. */
void virtio_blk_counters(struct virtio_dev *vdev, counter_emit_fn emit, void *ctx);

/* Its group in the metrics line (virtio_blk_metrics.c). */
extern const struct dev_metrics virtio_blk_metrics;
/* Firecracker's drives: PUT and PATCH /drives/ID, the "drives" list
 * (virtio_blk_api.c). */
extern const struct dev_api blk_api;
/* Its disk threads' calls, and the ring's submit elsewhere
 * (virtio_blk_sandbox.c). */
extern const struct dev_sandbox virtio_blk_sandbox;

/* Its row in the device manager's table of kinds (virtio_blk_kind.c). */
struct dm_kind;
extern const struct dm_kind virtio_blk_kind;

#endif
