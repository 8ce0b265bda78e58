// SPDX-License-Identifier: Apache-2.0
/* The vhost-net backend: the kernel's /dev/vhost-net moves packets between
 * the virtqueues and the tap. The rings, memory table and eventfds go
 * through the generic vhost (virtio/vhost.h); what is vhost-net's own is
 * the tap each ring moves packets to and from (VHOST_NET_SET_BACKEND). */
#ifndef SKIFF_VHOST_NET_H
#define SKIFF_VHOST_NET_H

#include <stddef.h>

#include "virtio/vhost.h"
#include "virtio/virtq.h"

/* Opens /dev/vhost-net (vhost_open); -1 with a one-line reason. */
int vhost_net_open(struct vhost *vh, char *err, size_t errlen);
/* Starts ring `idx` (0 = rx, 1 = tx) of an activated virtq, with tap_fd
 * as its backend. 0 or -errno (the ring then does not count as started). */
int vhost_net_start_ring(struct vhost *vh, unsigned int idx, const struct virtq *vq, int kick_fd,
			 int call_fd, int tap_fd);
/* Detaches the tap and stops both rings. For a reset, vqs is NULL. For a
 * fallback to the built-in path, vqs are the two virtqs (rx, tx): each
 * ring that ran goes on where vhost stopped (vhost_stop_ring). */
void vhost_net_stop(struct vhost *vh, struct virtq *vqs);

#endif
