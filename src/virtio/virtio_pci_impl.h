// SPDX-License-Identifier: Apache-2.0
/* virtio-pci internals shared by virtio_pci.c (device, BARs, kicks,
 * interrupts) and virtio_pci_common.c (common configuration and the status
 * state machine), and used by the unit tests. Register layout: virtio 1.2
 * §4.1.4. */
#ifndef SKIFF_VIRTIO_PCI_IMPL_H
#define SKIFF_VIRTIO_PCI_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/log.h"
#include "iothread/iothread.h"
#include "pci/pci.h"
#include "virtio/virtio_dev.h"
#include "virtio/virtio_pci.h"

/* BARs */
#define VP_BAR	       0 /* registers, 64-bit: slots 0-1 */
#define VP_MSIX_BAR    2
#define VP_BAR_SIZE    0x4000
#define VP_COMMON_OFF  0x0000
#define VP_COMMON_LEN  0x38 /* up to queue_device; no queue_reset */
#define VP_ISR_OFF     0x1000
#define VP_DEVICE_OFF  0x2000
#define VP_NOTIFY_OFF  0x3000
#define VP_NOTIFY_MULT 4 /* bytes between queues' notify addresses */
/* The notify again, in an I/O BAR, offered first (the order of the
 * capabilities is the device's preference): on AMD-V KVM decodes and
 * emulates every MMIO notify, while an OUT exit carries its next RIP and
 * skips the emulator. A 16-bit write per queue, VP_PIO_MULT apart: 4,
 * as in the MMIO BAR (a driver that mixes up the two capabilities'
 * multipliers, as SeaBIOS's can, still kicks the right queue). */
#define VP_PIO_BAR	4
#define VP_PIO_MULT	4
#define VP_PIO_BAR_SIZE (VIRTIO_MAX_QUEUES * VP_PIO_MULT)
_Static_assert((VP_PIO_BAR_SIZE & (VP_PIO_BAR_SIZE - 1)) == 0 && VP_PIO_BAR_SIZE <= 256,
	       "an I/O BAR is a power of 2 of at most 256 ports");

/* Capability types (cfg_type) */
#define VIRTIO_PCI_CAP_COMMON_CFG 1
#define VIRTIO_PCI_CAP_NOTIFY_CFG 2
#define VIRTIO_PCI_CAP_ISR_CFG	  3
#define VIRTIO_PCI_CAP_DEVICE_CFG 4
#define VIRTIO_PCI_CAP_PCI_CFG	  5
#define VIRTIO_PCI_CAP_LEN	  16
#define VIRTIO_PCI_NOTIFY_CAP_LEN 20
#define VIRTIO_PCI_CFG_CAP_LEN	  20
/* Fields of a virtio capability */
#define VP_CAP_CFG_TYPE	    3
#define VP_CAP_BAR	    4
#define VP_CAP_OFFSET	    8
#define VP_CAP_LENGTH	    12
#define VP_CAP_NOTIFY_MULT  16
#define VP_CAP_PCI_CFG_DATA 16

/* Common configuration fields */
#define VP_DFSELECT	  0x00
#define VP_DF		  0x04
#define VP_GFSELECT	  0x08
#define VP_GF		  0x0c
#define VP_MSIX_CONFIG	  0x10
#define VP_NUM_QUEUES	  0x12
#define VP_STATUS	  0x14
#define VP_CFG_GENERATION 0x15
#define VP_Q_SELECT	  0x16
#define VP_Q_SIZE	  0x18
#define VP_Q_MSIX	  0x1a
#define VP_Q_ENABLE	  0x1c
#define VP_Q_NOFF	  0x1e
#define VP_Q_DESC	  0x20
#define VP_Q_DRIVER	  0x28
#define VP_Q_DEVICE	  0x30

#define VIRTIO_MSI_NO_VECTOR 0xffff

/* Features the transport adds to every device's offer, and ones it
 * removes because it does not implement them. */
#define VIRTIO_F_NOTIFICATION_DATA 38
#define VIRTIO_F_RING_RESET	   40
#define VP_FEATURES_ADD                                                                            \
	((1ULL << VIRTIO_F_VERSION_1) | (1ULL << VIRTQ_F_EVENT_IDX) |                              \
	 (1ULL << VIRTQ_F_INDIRECT_DESC))
#define VP_FEATURES_DROP                                                                           \
	((1ULL << VIRTIO_F_RING_PACKED) | (1ULL << VIRTIO_F_NOTIFICATION_DATA) |                   \
	 (1ULL << VIRTIO_F_RING_RESET) | (1ULL << VIRTIO_F_ACCESS_PLATFORM))

struct virtio_pci;

enum { VP_KICK_MMIO, VP_KICK_PIO };

struct virtio_pci_queue {
	struct virtio_pci *vp;
	unsigned int index;
	_Atomic uint16_t vector; /* MSI-X vector, read by notify_queue */
	/* Stores to vector (vp_queue_set_vector): vp_queue_irq_seq's upper
	 * half, so that a value read before a store never matches one read
	 * after it, even for the same vector. */
	_Atomic uint32_t vector_sets;
	bool enable;	   /* the driver wrote queue_enable = 1 */
	_Atomic bool live; /* activated at DRIVER_OK: kicks delivered */
	int kick_fd;	   /* eventfd of the ioeventfds; -1 in trap mode */
	struct {
		bool assigned; /* registered with KVM at addr */
		uint64_t addr;
	} kick[2];	 /* the MMIO notify, the port one (VP_KICK_*) */
	bool polled;	 /* poller registered with the I/O thread */
	bool handed_off; /* kicks go to vhost, not the I/O thread */
	counter_t kicks; /* ioeventfd kicks seen by the I/O thread */
	counter_t irqs;	 /* interrupts sent for this queue */
	struct iothread_poller poller;
	char poller_name[48];
};

struct virtio_pci {
	struct pci_device pci; /* first: container_of by cast */
	struct virtio_dev *vdev;
	struct iothread *io;
	bool use_ioeventfd;

	/* Common and device configuration, status; vCPU threads. */
	pthread_mutex_t lock;
	uint32_t dfselect, gfselect;
	uint64_t offered;	 /* device_feature */
	uint64_t guest_features; /* driver_feature as written */
	uint16_t queue_select;
	_Atomic uint16_t config_vector;
	struct virtio_pci_queue q[VIRTIO_MAX_QUEUES];
	struct log_rl log_rl; /* driver mistakes, rate-limited */

	/* Gating of kicks and poller callbacks: reset clears live, then waits
	 * for kicks_inflight. */
	_Atomic bool live;
	_Atomic int kicks_inflight;

	/* INTx: ISR bits and the line change together. */
	pthread_mutex_t isr_lock;
	uint8_t isr;

	counter_t config_irqs;	      /* configuration interrupts */
	int pci_cfg_cap;	      /* config offset of the PCI-config-access capability */
	atomic_bool ioeventfd_logged; /* its failure is said once */
};

/* virtio_pci_common.c: accesses to the common configuration (offsets
 * relative to it), vp->lock held by the caller. */
void vp_common_read(struct virtio_pci *vp, uint32_t off, uint8_t *data, uint32_t len);
void vp_common_write(struct virtio_pci *vp, uint32_t off, const uint8_t *data, uint32_t len);
const char *vp_common_reg_name(uint32_t off);
/* Device reset (status 0); vp->lock held. */
void vp_reset(struct virtio_pci *vp);
/* Every store to a queue's vector: the vector first, then the count (a
 * reader that loads the count before the vector may pair an old count
 * with the new vector, never the reverse). */
static inline void vp_queue_set_vector(struct virtio_pci_queue *q, uint16_t v)
{
	atomic_store(&q->vector, v);
	atomic_fetch_add(&q->vector_sets, 1);
}

/* The MSI-X table's size (virtio_dev.msix_vectors). */
static inline unsigned int vp_msix_vectors(const struct virtio_dev *vdev)
{
	return vdev->msix_vectors ? vdev->msix_vectors : vdev->num_queues + 1;
}

/* Logs a driver mistake, rate-limited per device (core/log.h). */
void vp_log(struct virtio_pci *vp, const char *what);

/* virtio_pci_notify.c: kicks and interrupts */
extern const struct virtio_transport_ops vp_transport_ops;
/* A trapped notify write for queue q, from either BAR (vCPU thread). */
void vp_notify_write(struct virtio_pci *vp, uint64_t q);
/* I/O thread: a queue's kick eventfd is readable; opaque is the queue. */
void vp_kick_ready(void *opaque, uint32_t events);
/* Registers the queues in vdev->poll_queues as I/O-thread pollers. */
int vp_pollers_add(struct virtio_pci *vp);
/* Interrupt on `vector` (MSI-X) or INTx with isr_bit; any thread. */
void vp_interrupt(struct virtio_pci *vp, uint16_t vector, uint8_t isr_bit);
/* Reads (and so acknowledges) the ISR; clearing deasserts INTx. */
uint8_t vp_isr_read(struct virtio_pci *vp);
void vp_isr_clear(struct virtio_pci *vp);

#endif
