// SPDX-License-Identifier: Apache-2.0
/* virtio over PCI, modern transport only (virtio 1.2 §4.1): a device model
 * fills in a struct virtio_dev and calls virtio_pci_add(); the transport
 * does everything PCI and virtio-generic.
 *
 * The guest sees vendor 0x1af4, device 0x1040 + device_id, revision 1, and
 *   BAR 0-1 (64-bit, 16 KiB): common cfg at 0x0000, ISR at 0x1000, device
 *           cfg at 0x2000, notify at 0x3000 (queue q at 0x3000 + 4 * q);
 *   BAR 2-3 (64-bit, 4 KiB): the MSI-X table (num_queues + 1 vectors, or
 *           vdev->msix_vectors) and PBA;
 * with vendor capabilities for common, notify, ISR, device and PCI-config
 * access, plus MSI-X. INTA is the fallback when MSI-X is off.
 *
 * What the transport does for the device:
 *  - offers vdev->host_features plus VERSION_1, RING_EVENT_IDX and
 *    RING_INDIRECT_DESC, minus what it cannot do (packed rings,
 *    notification data, queue reset); refuses FEATURES_OK without
 *    VERSION_1 or with a feature it did not offer; sets
 *    vdev->driver_features at FEATURES_OK;
 *  - enforces the status order ACKNOWLEDGE, DRIVER, FEATURES_OK, DRIVER_OK
 *    (bits set out of order are ignored; only 0 clears them);
 *  - calls virtq_init on vdev->vqs[0, num_queues) with the device's name
 *    and queue_max_size; at DRIVER_OK passes the negotiated features to
 *    every enabled queue, activates it, then calls ops->activate;
 *    queue configuration is refused from DRIVER_OK on;
 *  - on a broken queue: DEVICE_NEEDS_RESET and a config interrupt;
 *  - on status 0: stops delivering kicks, waits for kicks in progress,
 *    calls ops->reset (which must return only when the device is quiet),
 *    then resets every virtq and its own state;
 *  - kicks: with env->use_ioeventfd, ops->queue_notify runs on the device's
 *    I/O thread (KVM ioeventfd per queue); otherwise on the vCPU thread
 *    that wrote the notify register. Kicks arrive only for queues that were
 *    enabled at DRIVER_OK, and only until reset;
 *  - interrupts: vdev->transport->notify_queue / notify_config, callable
 *    from any thread (irqfd per MSI-X vector, or ISR + INTA).
 *
 * Usage: a device model fills in its virtio_dev, and the device manager
 * (src/vmm/devmgr.c) attaches it:
 *
 *	vdev->name = "virtio-blk0";         // stays valid for the VM's life
 *	vdev->device_id = VIRTIO_ID_BLOCK;
 *	vdev->host_features = device-specific feature bits;
 *	vdev->config_len = sizeof(config);  // <= VIRTIO_PCI_CONFIG_MAX
 *	vdev->num_queues = 1;               // 1..VIRTIO_MAX_QUEUES
 *	vdev->queue_max_size = 256;         // power of 2 <= VIRTQ_MAX_SIZE
 *	vdev->ops = &ops;                   // queue_notify required
 *	vdev->priv = dev;
 *	if (virtio_pci_attach(&env, vdev, err, errlen) < 0)
 *		... free the device; err says why; the caller exits 2
 *
 * On success the transport owns vdev->gm, transport, transport_data,
 * status, driver_features and vqs; vdev must stay valid until
 * pci_bus_destroy. On failure nothing refers to vdev any more. */
#ifndef SKIFF_VIRTIO_PCI_H
#define SKIFF_VIRTIO_PCI_H

#include <stdbool.h>
#include <stddef.h>

#include "core/guest_mem.h"
#include "core/counter.h"
#include "virtio/virtio_dev.h"

#define VIRTIO_PCI_VENDOR      0x1af4
#define VIRTIO_PCI_DEVICE_BASE 0x1040 /* + device_id */
#define VIRTIO_PCI_CONFIG_MAX  0x1000 /* largest config_len */

struct pci_bus;
struct iothread;

/* Attaches vdev to the PCI bus, its kicks and pollers served by the I/O
 * thread io. Returns 0, or -1 with a one-line reason in err (bad vdev
 * fields, "no free PCI slot (max 31 devices)", ...). io may be NULL with
 * use_ioeventfd: the kick eventfds are then created and registered with
 * KVM but nobody polls them. */
struct virtio_pci_env {
	struct pci_bus *pci;
	struct iothread *io;
	const struct guest_mem *gm;
	bool use_ioeventfd;
};
int virtio_pci_attach(const struct virtio_pci_env *env, struct virtio_dev *vdev, char *err,
		      size_t errlen);
/* The transport's counters of an attached vdev (kicks, interrupts and
 * polling per queue, configuration interrupts) and its queues'. */
void virtio_pci_counters(const struct virtio_dev *vdev, counter_emit_fn emit, void *ctx);

/* Snapshots (core/snap.h, virtio_pci_state.c), on a paused VM: the PCI
 * function (SNAP_ID_PCI_FN) and the transport with its queues
 * (SNAP_ID_VIRTIO_PCI: status, features, selectors, vectors, config
 * generation, ISR, each queue's virtq_state), both as `instance`.
 * 0, or -1 with a reason. */
struct snap_writer;
int virtio_pci_save(struct virtio_dev *vdev, struct snap_writer *w, uint32_t instance, char *err,
		    size_t errlen);
/* Both payloads back onto vdev attached afresh, its guest not yet run
 * (guest memory restored): both checked whole first; then the PCI state,
 * the transport's, each queue through virtq_state_restore, and after
 * DRIVER_OK the device's activate and live kicks, as the driver left it;
 * each live queue gets one kick, for a guest kick taken but not served
 * before the save. On -1 the transport is reset (a failed load discards
 * the VM anyway). */
int virtio_pci_restore(struct virtio_dev *vdev, const void *pci, size_t pci_len, const void *vp,
		       size_t vp_len, char *err, size_t errlen);

#endif
