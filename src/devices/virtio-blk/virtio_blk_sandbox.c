// SPDX-License-Identifier: Apache-2.0
/* virtio-blk's calls beyond the roles' tables (devices/dev_sandbox.h): a
 * VM without a disk has no disk thread and none of these in any filter. */
#include "devices/virtio-blk/virtio_blk.h"

/* clang-format off */
/* A disk thread reads and writes its image (already open); with
 * aio=io_uring it waits in the queue's ring and resubmits. The ring was
 * restricted to readv, writev, fsync and nop when it was set up. */
static const struct sandbox_rule blk_thread[] = {
    SANDBOX_ALLOW(pread64),
    SANDBOX_ALLOW(pwrite64),
    SANDBOX_ALLOW(preadv),
    SANDBOX_ALLOW(pwritev),
    SANDBOX_ALLOW(preadv2),
    SANDBOX_ALLOW(pwritev2),
    SANDBOX_ALLOW(fdatasync),
    SANDBOX_ALLOW(fsync),
    SANDBOX_ALLOW(fallocate),
    SANDBOX_ALLOW(io_uring_enter),
};
/* The kicking thread (a vCPU on a trapped kick, or the I/O thread)
 * submits the queue's ring; the stop's nop wakes a disk thread from the
 * main thread. */
static const struct sandbox_rule blk_submit[] = {
    SANDBOX_ALLOW(io_uring_enter),
};
/* clang-format on */

const struct dev_sandbox virtio_blk_sandbox = {
    .role[SANDBOX_BLK] = SANDBOX_RULES(blk_thread),
    .role[SANDBOX_VCPU] = SANDBOX_RULES(blk_submit),
    .role[SANDBOX_IO] = SANDBOX_RULES(blk_submit),
    .role[SANDBOX_MAIN] = SANDBOX_RULES(blk_submit),
};
