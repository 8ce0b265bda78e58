// SPDX-License-Identifier: Apache-2.0
/* `--disk SPEC` for virtio-blk:
 * PATH[,ro][,aio=io_uring|threads][,queues=N][,poll=off|adaptive|always]
 * [,poll-start=K][,poll-window=USEC][,poll-idle=USEC][,poll-max=USEC]
 * [,bw=SIZE:MS[:BURST]][,ops=SIZE:MS[:BURST]] (a rate limiter). The
 * polling options are --net's (iothread/poll_opts.h); disks default to
 * poll=off. */
#ifndef SKIFF_VIRTIO_BLK_SPEC_H
#define SKIFF_VIRTIO_BLK_SPEC_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/opt.h"
#include "core/ratelimit.h"
#include "iothread/poll_policy.h"

enum blk_aio { BLK_AIO_IO_URING, BLK_AIO_THREADS };
extern const char *const blk_aio_names[];

struct blk_spec {
	char path[PATH_MAX];
	bool ro;
	bool direct;		 /* O_DIRECT beside the buffered file: blk_backend.h */
	int aio;		 /* enum blk_aio */
	unsigned int queues;	 /* 1..BLK_QUEUES_MAX; 0: not given (a queue per vCPU) */
	struct poll_policy poll; /* of the request queue */
	struct ratelimit_cfg rl; /* bw=, ops=: Firecracker's rate_limiter */
};

/* The option table of --disk and the defaults it starts from. */
extern const struct opt_table blk_spec_table;
void blk_spec_init(void *spec);

/* Parses SPEC: a non-empty path up to the first comma, then options.
 * Returns 0, or -1 with a one-line reason in err. */
int blk_spec_parse(const char *spec, struct blk_spec *out, char *err, size_t errlen);

#endif
