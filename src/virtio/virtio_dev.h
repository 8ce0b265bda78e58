// SPDX-License-Identifier: Apache-2.0
/* The contract between virtio device models (blk, net, ...) and virtio
 * transports (virtio-pci). A device knows nothing about PCI; a transport
 * knows nothing about disks or packets (kvmtool's split).
 *
 * Threads: the transport calls ops from vCPU threads (config space, status,
 * reset) and, for queue kicks, from the device's I/O thread (ioeventfd
 * mode) or the vCPU thread (trapped-kick mode). A device serializes its own
 * queue work with vdev->lock or per-queue locks as it documents. */
#ifndef SKIFF_VIRTIO_DEV_H
#define SKIFF_VIRTIO_DEV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/guest_mem.h"
#include "iothread/poll_policy.h"
#include "virtio/virtq.h"

/* Queues per device: virtio-blk's 16, virtio-net's 8 pairs and control
 * queue; poll_queues has a bit for each. */
#define VIRTIO_MAX_QUEUES 32

/* Device status bits (virtio 1.2, 2.1) */
#define VIRTIO_STATUS_ACKNOWLEDGE 1
#define VIRTIO_STATUS_DRIVER	  2
#define VIRTIO_STATUS_DRIVER_OK	  4
#define VIRTIO_STATUS_FEATURES_OK 8
#define VIRTIO_STATUS_NEEDS_RESET 64
#define VIRTIO_STATUS_FAILED	  128

/* Feature bits common to all devices */
#define VIRTIO_F_VERSION_1	 32
#define VIRTIO_F_ACCESS_PLATFORM 33
#define VIRTIO_F_RING_PACKED	 34

/* ISR bits (used with INTx) */
#define VIRTIO_ISR_QUEUE  1
#define VIRTIO_ISR_CONFIG 2

#define VIRTIO_ID_NET	1
#define VIRTIO_ID_BLOCK 2

struct virtio_dev;

struct virtio_dev_ops {
	/* Reads/writes device-specific config space (offset, len within
	 * config_len; the transport checks bounds). */
	void (*config_read)(struct virtio_dev *vdev, uint32_t offset, void *buf, uint32_t len);
	void (*config_write)(struct virtio_dev *vdev, uint32_t offset, const void *buf,
			     uint32_t len);
	/* The driver set DRIVER_OK: queues are configured and activated.
	 * Return 0, or -1 to fail the device (status gets NEEDS_RESET). */
	int (*activate)(struct virtio_dev *vdev);
	/* The driver wrote 0 to status: stop all work, drop in-flight
	 * requests. Called before the transport resets its queues. */
	void (*reset)(struct virtio_dev *vdev);
	/* Queue `q` was kicked. */
	void (*queue_notify)(struct virtio_dev *vdev, unsigned int q);
	/* Optional: true while the device leaves q's work in the ring on
	 * purpose (a rate limiter waits, a queue pair is disabled; what ends
	 * the wait resumes it). A poller
	 * then counts the ring as idle, or it would spin on that work. */
	bool (*queue_throttled)(struct virtio_dev *vdev, unsigned int q);
};

/* Filled in by the transport so the device can signal the guest. */
struct virtio_transport_ops {
	/* Interrupt for queue q (MSI-X vector or INTx + ISR bit). */
	void (*notify_queue)(struct virtio_dev *vdev, unsigned int q);
	/* Configuration-change interrupt (also used after NEEDS_RESET). */
	void (*notify_config)(struct virtio_dev *vdev);
	/* Hands queue q to an in-kernel backend (vhost): returns its kick
	 * eventfd (the ioeventfd, no longer read by the I/O thread) and an
	 * eventfd that interrupts the guest for q directly (the vector's
	 * irqfd). 0, or -1 if the transport cannot (trapped kicks, INTx). */
	int (*queue_handoff)(struct virtio_dev *vdev, unsigned int q, int *kick_fd, int *call_fd);
	/* Takes handed-off queues back (device reset). */
	void (*queue_takeback)(struct virtio_dev *vdev, unsigned int q);
	/* Optional: calls queue_notify(q) again later, from the thread that
	 * takes q's kicks, after it served its other work; for a device that
	 * stopped at its per-run budget. 0, or -1 if the transport cannot
	 * (trapped kicks run on the kicking vCPU: the device carries on). */
	int (*queue_resched)(struct virtio_dev *vdev, unsigned int q);
	/* Optional: where queue q's interrupts go and how many left there:
	 * the upper 32 bits change whenever the driver sets q's vector (to
	 * any value, the same one too), the lower whenever an interrupt
	 * leaves on that vector (see pci_msix_vector_seq). Compare two with
	 * virtio_irq_seq_sent. 0, or -1 if the transport cannot say (INTx,
	 * no vector). */
	int (*queue_irq_seq)(struct virtio_dev *vdev, unsigned int q, uint64_t *seq);
	/* Optional: queue q's MSI-X vector as the driver set it last, or -1
	 * (none set, INTx, or the transport cannot say). */
	int (*queue_vector)(struct virtio_dev *vdev, unsigned int q);
};

struct virtio_dev {
	const char *name;   /* "virtio-blk0", for logs and stats */
	uint32_t device_id; /* VIRTIO_ID_* */
	uint64_t host_features;
	uint64_t driver_features; /* negotiated; valid after FEATURES_OK */
	uint32_t config_len;
	unsigned int num_queues;
	/* MSI-X vectors the function offers; 0 means num_queues + 1, one per
	 * queue and one for config changes. Fewer makes a driver that wants
	 * one per queue share one among them (Linux: vp_find_vqs falls back
	 * to config + one shared): interrupts for several queues that arrive
	 * before the guest takes the first then become one injection. */
	unsigned int msix_vectors;
	/* The guest's kicks run the device on the vCPU that wrote them, even
	 * where the transport has ioeventfds for the others (QEMU's
	 * virtio-balloon-pci has no ioeventfd either). For a device whose
	 * work changes guest RAM's host mappings (virtio-balloon's madvise):
	 * done on another thread while the vCPU is in the guest, each call
	 * interrupts it twice, the host's TLB shootdown and KVM's remote
	 * flush; on the vCPU itself it is out of the guest. */
	bool kicks_on_vcpu;
	uint16_t queue_max_size;
	struct virtq vqs[VIRTIO_MAX_QUEUES];
	const struct guest_mem *gm;
	const struct virtio_dev_ops *ops;
	const struct virtio_transport_ops *transport;
	void *transport_data; /* owned by the transport */
	void *priv;	      /* owned by the device model */
	/* Adaptive polling of the queues in poll_queues (a bit per queue) by
	 * the I/O thread; needs ioeventfd kicks. Queues whose kicks mean work
	 * (TX, requests) qualify; a receive queue does not. */
	struct poll_policy poll;
	uint32_t poll_queues;
	/* Optional, per queue: the mutex the device holds whenever it
	 * touches virtqueue q, for a device that does so from threads other
	 * than the I/O thread (virtio-blk completes on its workers, a lock
	 * per queue). The poller then takes queue_lock[q] too when it checks
	 * q's ring or turns its guest kicks off and on, so every access to
	 * such a queue is under its lock. Several entries may name one
	 * mutex. NULL: q's work all runs on the I/O thread (virtio-net with
	 * polling). */
	pthread_mutex_t *queue_lock[VIRTIO_MAX_QUEUES];
	_Atomic uint8_t status;
	_Atomic uint32_t config_generation;
	pthread_mutex_t lock;
};

/* Helpers for device models */
static inline bool virtio_has_feature(const struct virtio_dev *vdev, unsigned int bit)
{
	return (vdev->driver_features >> bit) & 1;
}

/* Pushes a completion and interrupts the guest if the ring asks for it. */
void virtio_complete(struct virtio_dev *vdev, unsigned int q, uint16_t head, uint32_t len);
/* Interrupts the guest for queue q if virtq_should_notify says so (for
 * devices that batch virtq_push calls). */
void virtio_notify_if_needed(struct virtio_dev *vdev, unsigned int q);
/* The transport's queue_irq_seq for q: 0, or -1 if it has none. */
int virtio_queue_irq_seq(struct virtio_dev *vdev, unsigned int q, uint64_t *seq);
/* Whether queues a and b have interrupts on different MSI-X vectors:
 * false when they share one, or when the transport cannot say (INTx has
 * one line for all queues). */
bool virtio_queues_apart(struct virtio_dev *vdev, unsigned int a, unsigned int b);
/* Whether, between the reads of queue_irq_seq that gave then and now, an
 * interrupt left on the vector the queue was on all along. Not when the
 * driver set the queue's vector meanwhile: an interrupt on the old
 * vector, or on the new one before the move, says nothing of this queue
 * to a driver that looks only at the queues it put on a vector. */
static inline bool virtio_irq_seq_sent(uint64_t then, uint64_t now)
{
	return then >> 32 == now >> 32 && then != now;
}
/* Marks the device broken: NEEDS_RESET + config interrupt (spec 2.1.2). */
void virtio_dev_needs_reset(struct virtio_dev *vdev);

/* Helper for transports: virtq_init on vqs[0, num_queues), named
 * "<name> q<N>", each breaking into virtio_dev_needs_reset. Returns 0 or
 * -1 (bad num_queues or queue_max_size). */
int virtio_dev_init_queues(struct virtio_dev *vdev);

#endif
