// SPDX-License-Identifier: Apache-2.0
/* virtio-blk in Firecracker's metrics line: its "block" group. */
#include "devices/virtio-blk/virtio_blk.h"

static const struct dev_metric block_fields[] = {
    {"activate_fails", {NULL}},
    {"cfg_fails", {"config fails"}},
    {"execute_fails", {"io errors"}},
    {"flush_count", {"flushes"}},
    {"invalid_reqs_count", {"invalid requests"}},
    {"queue_event_count", {"queue events"}},
    {"rate_limiter_throttled_events", {"rate limiter throttled"}},
    {"read_bytes", {"read bytes"}},
    {"read_count", {"reads"}},
    {"update_count", {"updates"}},
    {"update_fails", {"update fails"}},
    {"write_bytes", {"write bytes"}},
    {"write_count", {"writes"}},
};

const struct dev_metrics virtio_blk_metrics = DEV_METRICS("block", block_fields);
