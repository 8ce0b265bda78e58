// SPDX-License-Identifier: Apache-2.0
/* virtio-vsock's state in a snapshot (docs/SNAPSHOT.md): its queue
 * positions are the transport's; what is the device's is which guest it
 * serves (guest_cid). Its streams are the host's sockets and cannot
 * survive a new process: none is saved, and on restore the guest is told
 * with a VIRTIO_VSOCK_EVENT_TRANSPORT_RESET on the event queue (virtio
 * 1.2 5.10.6.7, as Firecracker does on snapshot load), so its driver
 * drops its connections, reads the CID again and can connect anew.
 * backend=vhost (virtio_vsock_vhost.c) writes the same section and owes
 * the same event through the same functions (vsock_snap_put,
 * vsock_snap_restore, vsock_evq_reset). */
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "core/dma.h"
#include "core/snap.h"
#include "devices/virtio-vsock/virtio_vsock_priv.h"

#define VSOCK_SNAP_LAYOUT 1u

struct vsock_snap {
	uint32_t layout, zero;
	uint64_t cid;
};

/* The section both backends write: the CID they serve. 0, or -1. */
int vsock_snap_put(uint64_t cid, struct snap_writer *w, uint32_t id, uint32_t instance, char *err,
		   size_t errlen)
{
	struct vsock_snap s = {.layout = VSOCK_SNAP_LAYOUT, .cid = cid};
	if (snap_put(w, id, instance, &s, sizeof(s)) == 0)
		return 0;
	snprintf(err, errlen, "out of memory");
	return -1;
}

int vsock_snap_restore(const char *name, uint64_t cid, pthread_mutex_t *mu, bool *reset_owed,
		       const void *data, size_t len, char *err, size_t errlen)
{
	struct vsock_snap s;
	const char *why = len != sizeof(s) ? "its size is wrong" : NULL;
	if (!why) {
		memcpy(&s, data, sizeof(s));
		why = s.layout != VSOCK_SNAP_LAYOUT ? "its layout is unknown"
		      : s.zero			    ? "a reserved field is set"
		      : s.cid != cid		    ? "its guest CID differs"
						    : NULL;
	}
	if (why) {
		snprintf(err, errlen, "%s: saved state refused: %s", name, why);
		return -1;
	}
	pthread_mutex_lock(mu);
	*reset_owed = true; /* sent once the transport activates the queues */
	pthread_mutex_unlock(mu);
	return 0;
}

int virtio_vsock_save(void *dev, struct snap_writer *w, uint32_t id, uint32_t instance, char *err,
		      size_t errlen)
{
	const struct virtio_vsock *v = ((struct virtio_dev *)dev)->priv;
	return vsock_snap_put(v->cid, w, id, instance, err, errlen);
}

int virtio_vsock_restore(void *dev, const void *data, size_t len, char *err, size_t errlen)
{
	struct virtio_vsock *v = ((struct virtio_dev *)dev)->priv;
	return vsock_snap_restore(v->name, v->cid, &v->mu, &v->reset_owed, data, len, err, errlen);
}

bool vsock_evq_reset(struct virtio_dev *vdev, struct virtq_elem *elem, counter_t *bad)
{
	struct virtq *vq = &vdev->vqs[VSOCK_EVQ];
	const struct guest_mem *gm = vdev->gm;
	if (virtq_pop(vq, gm, elem) <= 0)
		return false; /* no buffer yet: the guest's next kick */
	struct virtio_vsock_event ev = {.id = htole32(VIRTIO_VSOCK_EVENT_TRANSPORT_RESET)};
	uint32_t n = 0;
	if (!elem->out_num && elem->in_len >= sizeof(ev)) {
		/* Relaxed: virtq_push's release fence orders it before the
		 * used index. */
		dma_sg_write_relaxed(elem->iov, elem->in_num, 0, &ev, sizeof(ev));
		n = sizeof(ev);
	} else {
		counter_add(bad, 1); /* a buffer the event cannot go in */
	}
	if (virtq_push(vq, gm, elem->head, n) == 0)
		virtio_notify_if_needed(vdev, VSOCK_EVQ);
	return n != 0;
}

void vsock_evq_run(struct virtio_vsock *v)
{
	if (v->active && v->reset_owed &&
	    vsock_evq_reset(&v->vdev, &v->elem, &v->stats.bad_packets))
		v->reset_owed = false;
}
