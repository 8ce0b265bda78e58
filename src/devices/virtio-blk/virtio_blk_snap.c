// SPDX-License-Identifier: Apache-2.0
/* virtio-blk's state in a snapshot: its queues are the transport's
 * (virtio_pci_save); what is the disk's is that no request is in flight
 * (each queue is drained first: the VM is paused, so what the backend has
 * completes into the guest's ring before the ring is saved) and which disk
 * it is, so a load onto an image of another size is refused. */
#include <stdio.h>
#include <string.h>

#include "core/snap.h"
#include "devices/virtio-blk/virtio_blk.h"
#include "devices/virtio-blk/virtio_blk_priv.h"

struct blk_snap {
	uint64_t capacity; /* sectors */
	uint32_t nq, ro;
};

static struct blk_dev *blk_snap_of(void *dev)
{
	return ((struct virtio_dev *)dev)->priv;
}

int virtio_blk_save(void *dev, struct snap_writer *w, uint32_t id, uint32_t instance, char *err,
		    size_t errlen)
{
	struct blk_dev *blk = blk_snap_of(dev);
	virtio_blk_drain(dev);
	pthread_mutex_lock(&blk->config_mu);
	struct blk_snap s = {blk->config.capacity, blk->nq, blk->backend.ro};
	pthread_mutex_unlock(&blk->config_mu);
	if (snap_put(w, id, instance, &s, sizeof(s)) == 0)
		return 0;
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* The image's lock passes to a migration's target: released once the
 * target has checked the state, taken back if it then fails. */
int virtio_blk_handover(void *dev, bool release, char *err, size_t errlen)
{
	struct virtio_dev *vdev = dev;
	int r = blk_backend_lock(&blk_snap_of(dev)->backend, !release);
	if (r == 0)
		return 0;
	snprintf(err, errlen, "%s: cannot %s its image's lock: %s", vdev->name,
		 release ? "release" : "take back", strerror(-r));
	return -1;
}

int virtio_blk_restore(void *dev, const void *data, size_t len, char *err, size_t errlen)
{
	struct blk_dev *blk = blk_snap_of(dev);
	struct virtio_dev *vdev = dev;
	struct blk_snap s;
	const char *why = len != sizeof(s) ? "its size is wrong" : NULL;
	if (!why) {
		memcpy(&s, data, sizeof(s));
		why = s.nq != blk->nq			   ? "its queue count differs"
		      : s.ro != blk->backend.ro		   ? "its read-only flag differs"
		      : s.capacity != blk->config.capacity ? "the disk image changed size"
							   : NULL;
	}
	if (!why)
		return 0;
	snprintf(err, errlen, "%s: saved state refused: %s", vdev->name, why);
	return -1;
}
