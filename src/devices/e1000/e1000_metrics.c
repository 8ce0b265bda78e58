// SPDX-License-Identifier: Apache-2.0
/* The e1000 in Firecracker's metrics line: "net", as virtio-net's cards,
 * with the same fields in the same order (one aggregate), each from the
 * e1000's own counters. A frame refused at receive (the receiver off, too
 * long, a tap error) is an rx_fail, a transmit descriptor chain it drops
 * a malformed frame; it has no rate limiter. Frames its address filter
 * refused, DMA and ring errors have no Firecracker field: they are under
 * "skiff" ("counter e1000-0 rx filtered"). */
#include "devices/e1000/e1000_kind.h"

static const struct dev_metric e1000_net_fields[] = {
    {"activate_fails", {NULL}},
    {"no_rx_avail_buffer", {"rx starved"}},
    {"rx_bytes_count", {"rx bytes"}},
    {"rx_count", {"rx packets"}},
    {"rx_fails", {"rx errors", "rx dropped"}},
    {"rx_packets_count", {"rx packets"}},
    {"rx_rate_limiter_throttled", {NULL}},
    {"tap_read_fails", {"rx errors"}},
    {"tap_write_fails", {"tx errors"}},
    {"tx_bytes_count", {"tx bytes"}},
    {"tx_count", {"tx packets"}},
    {"tx_fails", {"tx errors"}},
    {"tx_malformed_frames", {"tx dropped"}},
    {"tx_packets_count", {"tx packets"}},
    {"tx_rate_limiter_throttled", {NULL}},
};

const struct dev_metrics e1000_metrics = DEV_METRICS("net", e1000_net_fields);
