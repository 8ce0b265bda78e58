// SPDX-License-Identifier: Apache-2.0
/* virtio-net (virtio 1.2 §5.1) on an existing Linux tap: rx/tx queue
 * pairs, checksum and TSO offloads both ways, mergeable rx buffers.
 *
 * --net tap=NAME[,mac=MAC][,queues=N]
 *   tap     an existing tap interface (ip tuntap add NAME mode tap); skiff
 *           never creates one.
 *   mac     a unicast MAC; default 02:73:6b:69:66:NN, NN the device index
 *           (virtio-net0 gets ...:00). Two devices may not share a MAC.
 *   queues  queue pairs, 1..8, a tap queue each (VIRTIO_NET_F_MQ and a
 *           control queue when N > 1; the tap made multi_queue). Default:
 *           one per vCPU on a multi_queue tap, one on any other. */
#ifndef SKIFF_VIRTIO_NET_H
#define SKIFF_VIRTIO_NET_H

#include "devices/dev_api.h"
#include "devices/dev_sandbox.h"
#include "devices/dev_metrics.h"
#include "devices/device.h"

/* The device kind behind --net (model=virtio, a struct net_spec whose mac
 * the device manager has settled): opens the tap and, with vhost=on,
 * /dev/vhost-net. */
int virtio_net_new_device(const struct dev_ctx *ctx, const void *spec, struct device *out,
			  char *err, size_t errlen);
/* What in spec needs ioeventfd kicks ("poll="), or NULL. */
const char *virtio_net_needs_ioeventfd(const void *spec);
/* Refuses --net options that only the e1000 has. */
int virtio_net_spec_check(const void *spec, char *err, size_t errlen);

/* Its ioctls on the vCPU, I/O and main threads (virtio_net_sandbox.c). */
extern const struct dev_sandbox virtio_net_sandbox;
/* dm_kind.sandbox_of: a vhost=off card's have no vhost ioctl. */
const struct dev_sandbox *virtio_net_sandbox_of(const void *spec);

/* Its group in the metrics line, the e1000's too (virtio_net_metrics.c). */
extern const struct dev_metrics virtio_net_metrics;

/* Firecracker's network interfaces: PUT and PATCH /network-interfaces/ID,
 * the "network-interfaces" list (virtio_net_api.c). */
extern const struct dev_api net_api;

/* Its row in the device manager's table of kinds (virtio_net_kind.c). */
struct dm_kind;
extern const struct dm_kind virtio_net_kind;

#endif
