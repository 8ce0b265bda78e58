// SPDX-License-Identifier: Apache-2.0
/* Device-side helpers shared by every virtio device model and transport
 * (declared in virtio_dev.h). */
#include <stdatomic.h>
#include <stdio.h>

#include "virtio/virtio_dev.h"

void virtio_notify_if_needed(struct virtio_dev *vdev, unsigned int q)
{
	if (q >= vdev->num_queues || !vdev->transport)
		return;
	if (virtq_should_notify(&vdev->vqs[q], vdev->gm))
		vdev->transport->notify_queue(vdev, q);
}

int virtio_queue_irq_seq(struct virtio_dev *vdev, unsigned int q, uint64_t *seq)
{
	if (q >= vdev->num_queues || !vdev->transport || !vdev->transport->queue_irq_seq)
		return -1;
	return vdev->transport->queue_irq_seq(vdev, q, seq);
}

static int virtio_queue_vector(struct virtio_dev *vdev, unsigned int q)
{
	if (q >= vdev->num_queues || !vdev->transport || !vdev->transport->queue_vector)
		return -1;
	return vdev->transport->queue_vector(vdev, q);
}

bool virtio_queues_apart(struct virtio_dev *vdev, unsigned int a, unsigned int b)
{
	int va = virtio_queue_vector(vdev, a), vb = virtio_queue_vector(vdev, b);
	return va >= 0 && vb >= 0 && va != vb;
}

void virtio_complete(struct virtio_dev *vdev, unsigned int q, uint16_t head, uint32_t len)
{
	if (q >= vdev->num_queues)
		return;
	if (virtq_push(&vdev->vqs[q], vdev->gm, head, len) < 0)
		return;
	virtio_notify_if_needed(vdev, q);
}

void virtio_dev_needs_reset(struct virtio_dev *vdev)
{
	/* Once per reset cycle: the first error interrupts, later ones
	 * (other queues breaking) add nothing the driver does not know. */
	uint8_t old = atomic_fetch_or(&vdev->status, VIRTIO_STATUS_NEEDS_RESET);
	if (old & VIRTIO_STATUS_NEEDS_RESET)
		return;
	if (vdev->transport && vdev->transport->notify_config)
		vdev->transport->notify_config(vdev);
}

static void virtio_queue_broken(struct virtq *vq, void *opaque)
{
	(void)vq;
	virtio_dev_needs_reset(opaque);
}

int virtio_dev_init_queues(struct virtio_dev *vdev)
{
	if (vdev->num_queues < 1 || vdev->num_queues > VIRTIO_MAX_QUEUES)
		return -1;
	for (unsigned int i = 0; i < vdev->num_queues; i++) {
		char name[sizeof(vdev->vqs[i].name)];
		snprintf(name, sizeof(name), "%s q%u", vdev->name ? vdev->name : "virtio", i);
		if (virtq_init(&vdev->vqs[i], name, vdev->queue_max_size, virtio_queue_broken,
			       vdev) < 0)
			return -1;
	}
	return 0;
}
