// SPDX-License-Identifier: Apache-2.0
/* virtio-vsock in Firecracker's metrics line: its "vsock" group, the
 * VM's one vsock (no per-device groups, as Firecracker's). The device's
 * counters carry Firecracker's names already; what Firecracker counts and
 * skiff cannot fail (a queue event, a config access) is 0. Refusals, bad
 * packets and credit lies have no Firecracker field: they are under
 * "skiff" ("counter virtio-vsock0 refused"). backend=vhost counts
 * nothing: the kernel moves its packets. */
#include "devices/virtio-vsock/virtio_vsock.h"

static const struct dev_metric vsock_fields[] = {
    {"activate_fails", {NULL}},
    {"cfg_fails", {NULL}},
    {"rx_queue_event_fails", {NULL}},
    {"tx_queue_event_fails", {NULL}},
    {"ev_queue_event_fails", {NULL}},
    {"muxer_event_fails", {NULL}},
    {"conn_event_fails", {"conn_event_fails"}},
    {"rx_queue_event_count", {"rx_queue_event_count"}},
    {"tx_queue_event_count", {"tx_queue_event_count"}},
    {"rx_bytes_count", {"rx_bytes_count"}},
    {"tx_bytes_count", {"tx_bytes_count"}},
    {"rx_packets_count", {"rx_packets_count"}},
    {"tx_packets_count", {"tx_packets_count"}},
    {"conns_added", {"conns_added"}},
    {"conns_killed", {"conns_killed"}},
    {"conns_removed", {"conns_removed"}},
    {"killq_resync", {"killq_resync"}},
    {"tx_flush_fails", {"tx_flush_fails"}},
    {"write_flush_fails", {NULL}},
    {"rx_read_fails", {"rx_read_fails"}},
    {"tx_write_fails", {NULL}},
};

const struct dev_metrics virtio_vsock_metrics = DEV_METRICS("vsock", vsock_fields);
