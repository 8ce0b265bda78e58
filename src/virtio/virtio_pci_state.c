// SPDX-License-Identifier: Apache-2.0
/* The virtio-pci transport's state in a snapshot (docs/SNAPSHOT.md), in a
 * fixed layout: what the driver negotiated and configured, and each
 * queue's positions (virtq_state.h). A restore checks every field against
 * what a driver could have left on this device before it applies any,
 * then rebuilds what DRIVER_OK built: queues active, the device's
 * activate, live kicks (the ioeventfds follow the BARs, the irqfds the
 * MSI-X table: pci_device_restore). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/snap.h"
#include "pci/pci_msix.h"
#include "virtio/virtio_pci_impl.h"
#include "virtio/virtq_state.h"

struct vp_state {
	uint64_t guest_features, driver_features;
	uint32_t dfselect, gfselect, config_generation, num_queues;
	uint16_t queue_select, config_vector;
	uint8_t status, isr;
	/* 1: DRIVER_OK's activation failed (the device needs a reset, no
	 * queue is live): the restore leaves it so. 0 in every earlier save. */
	uint8_t inactive, zero;
};

struct vp_queue_state {
	struct virtq_state vq;
	uint16_t vector;
	uint8_t enable, zero[5];
};

_Static_assert(sizeof(struct vp_state) == 40 && sizeof(struct vp_queue_state) == 56,
	       "no padding in the saved transport");

#define VP_STATUS_ALL                                                                              \
	(VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK |            \
	 VIRTIO_STATUS_DRIVER_OK | VIRTIO_STATUS_NEEDS_RESET | VIRTIO_STATUS_FAILED)

int virtio_pci_save(struct virtio_dev *vdev, struct snap_writer *w, uint32_t instance, char *err,
		    size_t errlen)
{
	struct virtio_pci *vp = vdev->transport_data;
	struct {
		struct vp_state h;
		struct vp_queue_state q[VIRTIO_MAX_QUEUES];
	} s;
	memset(&s, 0, sizeof(s));
	pthread_mutex_lock(&vp->lock);
	s.h = (struct vp_state){.guest_features = vp->guest_features,
				.driver_features = vdev->driver_features,
				.dfselect = vp->dfselect,
				.gfselect = vp->gfselect,
				.config_generation = atomic_load(&vdev->config_generation),
				.num_queues = vdev->num_queues,
				.queue_select = vp->queue_select,
				.config_vector = atomic_load(&vp->config_vector),
				.status = atomic_load(&vdev->status)};
	s.h.inactive = (s.h.status & VIRTIO_STATUS_DRIVER_OK) && !atomic_load(&vp->live);
	for (unsigned int i = 0; i < vdev->num_queues; i++) {
		virtq_state_save(&vdev->vqs[i], &s.q[i].vq);
		s.q[i].vector = atomic_load(&vp->q[i].vector);
		s.q[i].enable = vp->q[i].enable;
	}
	pthread_mutex_unlock(&vp->lock);
	pthread_mutex_lock(&vp->isr_lock);
	s.h.isr = vp->isr;
	pthread_mutex_unlock(&vp->isr_lock);
	size_t n = sizeof(s.h) + vdev->num_queues * sizeof(s.q[0]);
	if (pci_device_save(&vp->pci, w, instance, err, errlen) < 0)
		return -1;
	if (snap_put(w, SNAP_ID_VIRTIO_PCI, instance, &s, n) < 0) {
		snprintf(err, errlen, "%s: out of memory saving its transport", vdev->name);
		return -1;
	}
	return 0;
}

/* A vector in the function's MSI-X table (vector_check's rule: a driver
 * that writes another reads back NO_VECTOR). The table may be smaller
 * than a vector per queue (virtio_dev.msix_vectors): a vector past it
 * would have its interrupts dropped. */
static bool vp_vector_ok(const struct virtio_dev *vdev, uint16_t v)
{
	return v < vp_msix_vectors(vdev) || v == VIRTIO_MSI_NO_VECTOR;
}

/* The status a driver can reach: each bit only after the one before. */
static const char *vp_status_odd(uint8_t st)
{
	if (st & ~VP_STATUS_ALL)
		return "its status has unknown bits";
	if (((st & VIRTIO_STATUS_DRIVER) && !(st & VIRTIO_STATUS_ACKNOWLEDGE)) ||
	    ((st & VIRTIO_STATUS_FEATURES_OK) && !(st & VIRTIO_STATUS_DRIVER)) ||
	    ((st & VIRTIO_STATUS_DRIVER_OK) && !(st & VIRTIO_STATUS_FEATURES_OK)))
		return "its status skips a step";
	return NULL;
}

static const char *vp_state_odd(const struct virtio_pci *vp, const struct vp_state *h)
{
	const struct virtio_dev *vdev = vp->vdev;
	bool fok = h->status & VIRTIO_STATUS_FEATURES_OK;
	if (h->num_queues != vdev->num_queues)
		return "its queue count differs";
	if (h->zero || h->isr & ~(VIRTIO_ISR_QUEUE | VIRTIO_ISR_CONFIG))
		return "a reserved field is set";
	/* Only a failed activation leaves DRIVER_OK with nothing live, and
	 * it sets NEEDS_RESET. */
	if (h->inactive > 1 ||
	    (h->inactive && (h->status & (VIRTIO_STATUS_DRIVER_OK | VIRTIO_STATUS_NEEDS_RESET)) !=
				(VIRTIO_STATUS_DRIVER_OK | VIRTIO_STATUS_NEEDS_RESET)))
		return "its activation flag does not fit its status";
	const char *why = vp_status_odd(h->status);
	if (why)
		return why;
	if (h->guest_features & ~vp->offered)
		return "the driver has features never offered";
	if (h->driver_features != (fok ? h->guest_features : 0) ||
	    (fok && !(h->guest_features >> VIRTIO_F_VERSION_1 & 1)))
		return "its negotiated features do not fit its status";
	if (!vp_vector_ok(vdev, h->config_vector))
		return "its configuration vector is out of range";
	return NULL;
}

static const char *vp_queue_odd(const struct virtio_pci *vp, const struct vp_state *h,
				const struct vp_queue_state *q)
{
	bool live = (h->status & VIRTIO_STATUS_DRIVER_OK) && q->enable;
	if (q->enable > 1 || q->zero[0] | q->zero[1] | q->zero[2] | q->zero[3] | q->zero[4])
		return "a queue's reserved field is set";
	if (!vp_vector_ok(vp->vdev, q->vector))
		return "a queue's vector is out of range";
	if (q->vq.size > vp->vdev->queue_max_size || (q->vq.size & (q->vq.size - 1)))
		return "a queue's size is not a power of 2 the device allows";
	if (q->vq.enabled && !live)
		return "a queue is active without DRIVER_OK";
	/* DRIVER_OK gives an enabled queue the driver's ring features, and
	 * reset takes them (virtq_set_features): else the device would read
	 * a used_event the driver never writes, or walk tables it never
	 * offered. */
	uint64_t ring = live ? h->driver_features : 0;
	if ((q->vq.event_idx && !(ring >> VIRTQ_F_EVENT_IDX & 1)) ||
	    (q->vq.indirect && !(ring >> VIRTQ_F_INDIRECT_DESC & 1)))
		return "a queue uses a ring feature the driver did not accept";
	/* DRIVER_OK activated every enabled queue, or the device needs a
	 * reset (an activation failed). */
	if (live && !q->vq.enabled && !q->vq.broken && !(h->status & VIRTIO_STATUS_NEEDS_RESET))
		return "an enabled queue is not active after DRIVER_OK";
	return virtq_state_check(&q->vq);
}

/* The state as the driver left it, then what DRIVER_OK does. */
static int vp_state_apply(struct virtio_pci *vp, const struct vp_state *h,
			  const struct vp_queue_state *qs, char *err, size_t errlen)
{
	struct virtio_dev *vdev = vp->vdev;
	vp->guest_features = h->guest_features;
	vdev->driver_features = h->driver_features;
	vp->dfselect = h->dfselect;
	vp->gfselect = h->gfselect;
	vp->queue_select = h->queue_select;
	atomic_store(&vp->config_vector, h->config_vector);
	atomic_store(&vdev->config_generation, h->config_generation);
	for (unsigned int i = 0; i < vdev->num_queues; i++) {
		vp_queue_set_vector(&vp->q[i], qs[i].vector);
		vp->q[i].enable = qs[i].enable;
		if (virtq_state_restore(&vdev->vqs[i], vdev->gm, &qs[i].vq, err, errlen) < 0)
			return -1;
	}
	atomic_store(&vdev->status, h->status);
	/* Not activated again where it had failed: a guest can make it fail
	 * (vhost-vsock's driver without an rx queue), and a second failure
	 * would refuse its VM's every restore and migration. */
	if (!(h->status & VIRTIO_STATUS_DRIVER_OK) || h->inactive)
		return 0;
	if (vdev->ops->activate && vdev->ops->activate(vdev) < 0) {
		snprintf(err, errlen, "%s: the restored device does not activate", vdev->name);
		return -1;
	}
	for (unsigned int i = 0; i < vdev->num_queues; i++)
		if (vp->q[i].enable)
			atomic_store(&vp->q[i].live, true);
	atomic_store(&vp->live, true);
	return 0;
}

/* An interrupt the guest had not acknowledged, and a kick per live queue
 * (one taken before the save may not have been served). */
static void vp_state_wake(struct virtio_pci *vp, uint8_t isr)
{
	pthread_mutex_lock(&vp->isr_lock);
	vp->isr = isr;
	if (isr && !pci_msix_enabled(&vp->pci))
		pci_intx_set(&vp->pci, true);
	pthread_mutex_unlock(&vp->isr_lock);
	uint64_t one = 1;
	for (unsigned int i = 0; i < vp->vdev->num_queues; i++)
		if (atomic_load(&vp->q[i].live) && vp->q[i].kick_fd >= 0 &&
		    write(vp->q[i].kick_fd, &one, sizeof(one)) != sizeof(one))
			vp_log(vp, "cannot kick a restored queue");
}

int virtio_pci_restore(struct virtio_dev *vdev, const void *pci, size_t pci_len, const void *vps,
		       size_t vp_len, char *err, size_t errlen)
{
	struct virtio_pci *vp = vdev->transport_data;
	struct vp_state h;
	struct vp_queue_state qs[VIRTIO_MAX_QUEUES];
	const char *why = NULL;
	if (vp_len != sizeof(h) + vdev->num_queues * sizeof(qs[0]))
		why = "its size is wrong";
	if (!why) {
		memcpy(&h, vps, sizeof(h));
		memcpy(qs, (const uint8_t *)vps + sizeof(h), vp_len - sizeof(h));
		why = vp_state_odd(vp, &h);
	}
	for (unsigned int i = 0; !why && i < vdev->num_queues; i++)
		why = vp_queue_odd(vp, &h, &qs[i]);
	if (why) {
		snprintf(err, errlen, "%s: saved transport state refused: %s", vdev->name, why);
		return -1;
	}
	if (pci_device_restore(&vp->pci, pci, pci_len, err, errlen) < 0)
		return -1;
	pthread_mutex_lock(&vp->lock);
	int r = vp_state_apply(vp, &h, qs, err, errlen);
	if (r < 0)
		vp_reset(vp);
	pthread_mutex_unlock(&vp->lock);
	if (r == 0)
		vp_state_wake(vp, h.isr);
	return r;
}
