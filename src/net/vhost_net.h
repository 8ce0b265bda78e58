// SPDX-License-Identifier: Apache-2.0
/* The vhost-net backend: the kernel's /dev/vhost-net moves packets between
 * the virtqueues and the tap, so no data-path work happens in skiff. skiff
 * hands it the guest memory table, the ring addresses, and the same eventfds
 * KVM uses: the queue's ioeventfd as the kick, the vector's irqfd as the
 * call. */
#ifndef SKIFF_VHOST_NET_H
#define SKIFF_VHOST_NET_H

#include <stddef.h>
#include <stdint.h>

#include "core/guest_mem.h"
#include "virtio/virtq.h"

struct vhost_net {
	int fd;
	uint64_t features; /* what the kernel's vhost offers */
	int started[2];
};

/* Opens /dev/vhost-net and takes ownership; -1 with a one-line reason. */
int vhost_net_open(struct vhost_net *vn, char *err, size_t errlen);
void vhost_net_close(struct vhost_net *vn);
/* The features the guest negotiated that vhost handles (the ring features,
 * MRG_RXBUF, VERSION_1); 0 or -errno. */
int vhost_net_set_features(struct vhost_net *vn, uint64_t features);
/* Guest RAM as vhost sees it: one region per RAM slot. */
int vhost_net_set_mem(struct vhost_net *vn, const struct guest_mem *gm);
/* Starts ring `idx` (0 = rx, 1 = tx) of an activated virtq. */
int vhost_net_start_ring(struct vhost_net *vn, unsigned int idx, const struct virtq *vq,
			 int kick_fd, int call_fd, int tap_fd);
/* VHOST_SET_VRING_BUSYLOOP_TIMEOUT: vhost polls the ring for `usec`. */
int vhost_net_set_busyloop(struct vhost_net *vn, unsigned int idx, unsigned int usec);
/* Detaches the tap and stops both rings. For a reset, vqs is NULL. For a
 * fallback to the built-in path, vqs are the two virtqs (rx, tx): each
 * ring that ran goes on where vhost stopped (virtq_resume_at), or breaks
 * if vhost does not say where; from 0 the guest would get its buffers
 * twice. */
void vhost_net_stop(struct vhost_net *vn, struct virtq *vqs);

#endif
