// SPDX-License-Identifier: Apache-2.0
/* virtio-rng in Firecracker's metrics line: its "entropy" group. */
#include "devices/virtio-rng/virtio_rng.h"

/* The VM's one virtio-rng (Firecracker's entropy has no per-device
 * groups). An event fails on a refused chain or an empty host source. */
static const struct dev_metric entropy_fields[] = {
    {"activate_fails", {NULL}},
    {"entropy_bytes", {"bytes"}},
    {"entropy_event_count", {"requests"}},
    {"entropy_event_fails", {"bad requests", "host rng fails"}},
    {"entropy_rate_limiter_throttled", {"rate limiter throttled"}},
    {"host_rng_fails", {"host rng fails"}},
    {"rate_limiter_event_count", {"rate limiter events"}},
};

const struct dev_metrics virtio_rng_metrics = DEV_METRICS("entropy", entropy_fields);
