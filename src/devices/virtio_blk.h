/* virtio-blk (virtio 1.2 §5.2): a raw image file as a guest disk.
 *
 * One request queue. Kicks pop and check requests on the kicking thread
 * (the disk's I/O thread, or the vCPU with --no-ioeventfd: cheap, never
 * blocks on the disk); the disk I/O runs on one worker thread per disk
 * ("blkN"), which completes requests itself. A mutex per disk serializes
 * everything that touches the virtqueue, the I/O thread's poller included
 * (poll=adaptive|always; vdev->queue_lock). */
#ifndef SKIFF_VIRTIO_BLK_H
#define SKIFF_VIRTIO_BLK_H

#include <stddef.h>

#include "core/machine.h"

struct virtio_dev;

/* --disk PATH[,ro][,poll=...]: opens the image, attaches virtio-blkN (N =
 * m->nr_disks) to the PCI bus, served by machine_iothread(m). Returns 0,
 * or -1 with a one-line reason. */
int virtio_blk_add(struct machine *m, const char *spec, char *err, size_t errlen);

/* The device without a transport (virtio_blk_add uses it; so do tests):
 * parses spec (virtio_blk_spec.h), opens the image and starts the worker;
 * vdev->poll comes from the spec. The caller fills in vdev->transport, gm
 * and the virtqueues. NULL with a reason on error. */
struct virtio_dev *virtio_blk_create(const char *spec, unsigned int index, char *err,
				     size_t errlen);
/* Stops the worker (dropping queued requests) and frees the device. */
void virtio_blk_destroy(struct virtio_dev *vdev);
/* Waits until every queued request has completed. */
void virtio_blk_drain(struct virtio_dev *vdev);

#endif
