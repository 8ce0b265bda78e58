// SPDX-License-Identifier: Apache-2.0
/* The kernel's vhost: a device's rings run by a kernel worker
 * (/dev/vhost-net, /dev/vhost-vsock), so no data-path work happens in
 * skiff. What every vhost device takes from a VMM is here: ownership,
 * features, the guest memory table, and per ring its size, position,
 * addresses and the same eventfds KVM uses (the queue's ioeventfd as the
 * kick, the vector's irqfd as the call). What is a kind's own (vhost-net's
 * tap backend, vhost-vsock's guest CID and running switch) stays with it.
 * ABI: <linux/vhost.h>.
 *
 * Threads: the caller's; a device serializes its calls (activate and
 * reset on a vCPU, the last stop on the main thread). */
#ifndef SKIFF_VHOST_H
#define SKIFF_VHOST_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/guest_mem.h"
#include "virtio/virtq.h"

#define VHOST_RINGS_MAX 32 /* a bit each in started */

struct vhost {
	int fd;		   /* -1: closed */
	uint64_t features; /* what the kernel's vhost offers */
	uint64_t acked;	   /* what vhost_set_features gave it (without LOG_ALL) */
	uint32_t started;  /* rings handed to the kernel, a bit per index */
	/* Dirty logging (vhost_set_log): the log, or NULL (off). The next
	 * vhost_set_features and vhost_start_ring turn it on too. */
	_Atomic uint64_t *log;
};

/* Opens path (e.g. "/dev/vhost-net"), takes ownership (VHOST_SET_OWNER)
 * and reads its features. 0, or -1 with one line in err naming path and,
 * if it cannot be opened, what to do (access to it, or load module);
 * vh->fd is then -1 and nothing is left open. */
int vhost_open(struct vhost *vh, const char *path, const char *module, char *err, size_t errlen);
/* Closes it (vh->fd -1 is a no-op): the kernel stops every ring. */
void vhost_close(struct vhost *vh);
/* The features the guest negotiated that vhost has (VHOST_SET_FEATURES
 * with features & vh->features, and VHOST_F_LOG_ALL while logging, after
 * VHOST_SET_LOG_BASE); 0 or -errno. While logging, the memory table must
 * be set first: the kernel checks that the log covers it. */
int vhost_set_features(struct vhost *vh, uint64_t features);
/* Guest RAM as vhost sees it: one region per RAM slot. 0 or -errno. */
int vhost_set_mem(struct vhost *vh, const struct guest_mem *gm);
/* Hands ring idx (< VHOST_RINGS_MAX) of an activated virtq to vhost:
 * its size, its position (skiff's shadow avail index), its addresses and
 * kick_fd / call_fd. 0 (the ring counts as started) or -errno. */
int vhost_start_ring(struct vhost *vh, unsigned int idx, const struct virtq *vq, int kick_fd,
		     int call_fd);
/* Dirty logging on (log) or off (NULL), as QEMU's vhost_dev_set_log for
 * a migration: the log base (VHOST_SET_LOG_BASE), the features again with
 * or without VHOST_F_LOG_ALL (the kernel then logs the guest buffers it
 * writes), and every started ring's addresses again with or without
 * VHOST_VRING_F_LOG and its used ring's GPA (it logs its used-ring
 * writes). vqs[i]: ring i's virtq. log is a bit per 4 KiB guest-physical
 * page from GPA 0 to the end of RAM; it must outlive the fd (the kernel
 * keeps its address). Rings not started take it at their start. 0, or
 * -errno (-EOPNOTSUPP: this vhost has no LOG_ALL; nothing changed). */
int vhost_set_log(struct vhost *vh, _Atomic uint64_t *log, const struct virtq *vqs);
/* VHOST_SET_VRING_BUSYLOOP_TIMEOUT: vhost polls ring idx for usec. */
int vhost_set_busyloop(struct vhost *vh, unsigned int idx, unsigned int usec);
/* Stops ring idx if started (VHOST_GET_VRING_BASE). vq NULL: the ring
 * resets next. Else vq goes on where vhost stopped (virtq_resume_at), or
 * breaks if vhost does not say where: from 0 the guest would get its
 * buffers twice. */
void vhost_stop_ring(struct vhost *vh, unsigned int idx, struct virtq *vq);

#endif
