// SPDX-License-Identifier: Apache-2.0
/* virtio-rng (virtio 1.2 §5.4): entropy for the guest, Firecracker's
 * "entropy" device. One request queue; the guest posts device-writable
 * buffers and gets them back filled from the host's getrandom(2).
 *
 * Which thread: a kick runs the queue on the thread that takes it, as
 * every virtio device here does: the device's I/O thread with ioeventfd
 * kicks (the default), the kicking vCPU with --no-ioeventfd. getrandom
 * is called with GRND_NONBLOCK, so neither ever waits for the host's
 * pool, and a run is bounded (RNG_REQ_MAX per request, RNG_POP_BUDGET
 * requests and RNG_RUN_BYTES per run, then the transport calls again
 * later): a guest that keeps its queue full cannot pin the I/O thread
 * the other devices share. A mutex serializes the queue between kicks
 * (several vCPUs when trapped), the rate limiter's timer on the I/O
 * thread and a reset.
 *
 * A hostile guest: every chain comes through virtq_pop (ring, lengths
 * and addresses checked there); a chain with a device-readable buffer is
 * answered with 0 bytes and counted ("bad requests"), as Firecracker
 * does; a zero-length one gets 0 bytes; a huge one gets RNG_REQ_MAX. */
#ifndef SKIFF_VIRTIO_RNG_H
#define SKIFF_VIRTIO_RNG_H

#include <stddef.h>

#include "core/opt.h"
#include "devices/dev_api.h"
#include "devices/dev_metrics.h"
#include "core/ratelimit.h"
#include "devices/device.h"

/* Bytes given per request at most: Linux's driver asks for 64 bytes
 * (its hwrng buffer) up to a page; more is a guest that wants the host
 * to spend time. */
#define RNG_REQ_MAX (64u << 10)
/* Per run of the queue: requests and bytes, then the run yields. */
#define RNG_POP_BUDGET 64
#define RNG_RUN_BYTES  (256u << 10)

/* `--rng [bw=SIZE:MS[:BURST]][,ops=SIZE:MS[:BURST]]`: Firecracker's
 * rate_limiter (rate= is bw='s other name). */
struct rng_spec {
	struct ratelimit_cfg rl;
};
extern const struct opt_table rng_spec_table;
void rng_spec_init(void *spec);
/* PUT /entropy, --config-file's and /vm/config's section (virtio_rng_api.c). */
extern const struct dev_api rng_api;

/* The device kind behind --rng (one per VM, as Firecracker's). */
int virtio_rng_new_device(const struct dev_ctx *ctx, const void *spec, struct device *out,
			  char *err, size_t errlen);

/* For tests: the device without a transport (the caller fills in
 * vdev->transport, gm and the queue). NULL with a reason on error. */
struct virtio_dev *virtio_rng_create(const char *name, const struct rng_spec *s, char *err,
				     size_t errlen);
void virtio_rng_destroy(struct virtio_dev *vdev);
/* Its counters (dev_ops.counters): requests, bytes, errors, waits. */
void virtio_rng_counters(struct virtio_dev *vdev, counter_emit_fn emit, void *ctx);

/* Its group in the metrics line (virtio_rng_metrics.c). */
extern const struct dev_metrics virtio_rng_metrics;

/* Its row in the device manager's table of kinds (virtio_rng_kind.c). */
struct dm_kind;
extern const struct dm_kind virtio_rng_kind;

#endif
