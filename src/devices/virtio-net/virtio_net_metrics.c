// SPDX-License-Identifier: Apache-2.0
/* virtio-net in Firecracker's metrics line: its "net" group, the e1000's
 * too (the first --net row's group counts every card). */
#include "devices/virtio-net/virtio_net.h"

/* virtio-net and e1000 count under the same names. A frame lost on
 * receive, to a tap error or one the guest cannot take, is an rx_fail;
 * on transmit, a malformed frame is not a tx_fail (as in Firecracker). */
static const struct dev_metric net_fields[] = {
    {"activate_fails", {NULL}},
    {"no_rx_avail_buffer", {"rx starved"}},
    {"rx_bytes_count", {"rx bytes"}},
    {"rx_count", {"rx packets"}},
    {"rx_fails", {"rx errors", "rx dropped"}},
    {"rx_packets_count", {"rx packets"}},
    {"rx_rate_limiter_throttled", {"rx rate limiter throttled"}},
    {"tap_read_fails", {"rx errors"}},
    {"tap_write_fails", {"tx errors"}},
    {"tx_bytes_count", {"tx bytes"}},
    {"tx_count", {"tx packets"}},
    {"tx_fails", {"tx errors"}},
    {"tx_malformed_frames", {"tx dropped"}},
    {"tx_packets_count", {"tx packets"}},
    {"tx_rate_limiter_throttled", {"tx rate limiter throttled"}},
};

const struct dev_metrics virtio_net_metrics = DEV_METRICS("net", net_fields);
