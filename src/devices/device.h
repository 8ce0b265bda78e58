// SPDX-License-Identifier: Apache-2.0
/* What every device kind gives the device manager (src/vmm/), and what it
 * gets from it. A device is created from its parsed options and a context;
 * it returns the model the manager puts on a transport (a virtio device
 * for virtio-pci, or a PCI function for a PCI-native device) and its ops.
 * It never picks a transport and never reads the machine: all it knows of
 * the VM is in struct dev_ctx.
 *
 * Lifecycle, driven by the manager: create -> (transport attached) ->
 * start -> [guest runs] -> stop -> destroy. stop runs after the vCPUs and
 * the I/O threads have stopped: it waits for the device's own threads and
 * in-flight requests, and after it returns the device touches neither
 * guest memory nor its transport. destroy frees it, after the manager has
 * freed the transports (and, for a PCI-native device, removed its PCI
 * function from the bus: such a device sets no pci_device_ops.release). */
#ifndef SKIFF_DEVICE_H
#define SKIFF_DEVICE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/counter.h"
#include "core/guest_mem.h"
#include "core/ratelimit.h"

struct iothread;
struct snap_writer;
struct virtio_dev;
struct pci_device;
struct vfio_container;

/* What the VM does for a device that asks (all but opaque optional; a
 * device whose kind needs one refuses to start without it). */
struct dev_host {
	void *opaque;
	/* Maps [hva, hva + size) at gpa as guest memory: the slot or -errno. */
	int (*memslot_add)(void *opaque, uint64_t gpa, uint64_t size, void *hva);
	int (*memslot_del)(void *opaque, int slot);
	/* Batched MMIO writes (KVM coalesced MMIO) over [addr, addr + len). */
	int (*mmio_batch_add)(void *opaque, uint64_t addr, uint32_t len);
	int (*mmio_batch_del)(void *opaque, uint64_t addr, uint32_t len);
	/* Replays every batched write now (they reach the trap table). */
	void (*mmio_batch_flush)(void *opaque);
	/* Adds a VFIO group to KVM's VFIO device: 0 or -errno. */
	int (*kvm_vfio_add)(void *opaque, int group_fd);
	/* The VM's VFIO container, shared by its passthrough devices. */
	struct vfio_container *vfio;
};

struct dev_ctx {
	const char *name;	     /* "virtio-blk0": valid for the VM's life */
	unsigned int index;	     /* N among the devices of its kind */
	const struct guest_mem *gm;  /* the only guest memory it may touch */
	struct iothread *io;	     /* runs its event work; NULL in some tests */
	const struct dev_host *host; /* NULL in some tests */
	unsigned int nr_vcpus;	     /* the VM's vCPUs (0 in some tests: take 1) */
	/* --cpu-pm on took HLT exits away: an idle vCPU halts in the guest,
	 * and every interrupt sent to it costs an exit and an injection. */
	bool halt_in_guest;
};

struct dev_ops {
	/* Optional: the transport is attached; add event sources. 0 or -1. */
	int (*start)(void *dev, char *err, size_t errlen);
	/* Required: quiesce (see above). */
	void (*stop)(void *dev);
	/* Required: free everything the device owns. */
	void (*destroy)(void *dev);
	/* Optional: list its counters. */
	void (*counters)(void *dev, counter_emit_fn emit, void *ctx);
	/* Optional: a new medium at path (a disk's image) while the guest
	 * runs, from the main thread. 0, or -1 with a reason. */
	int (*replace)(void *dev, const char *path, char *err, size_t errlen);
	/* Optional: new rate limits while the guest runs, from the main
	 * thread: the buckets in mask (1 << RL_*) of limiter dir (DEV_RL_RX:
	 * a disk's requests or a card's receive side; DEV_RL_TX). 0, or -1
	 * with a reason. */
	int (*limit)(void *dev, unsigned int dir, const struct ratelimit_cfg *cfg,
		     unsigned int mask, char *err, size_t errlen);
	/* Optional: a change while the guest runs, as key=value pairs of the
	 * kind's own (a balloon's new target), from the main thread. 0, or -1
	 * with a reason. */
	int (*update)(void *dev, const char *spec, char *err, size_t errlen);
	/* Optional: the device's state for a snapshot (core/snap.h), on a
	 * paused VM, as one section (id, instance) of its own in w; a kind
	 * without it cannot be snapshotted. 0, or -1 with a reason. */
	int (*save)(void *dev, struct snap_writer *w, uint32_t id, uint32_t instance, char *err,
		    size_t errlen);
	/* With save: that section's payload back, on a device whose guest has
	 * not run yet. Checks all of it before it changes anything: 0, or -1
	 * with a reason and the device as it was. */
	int (*restore)(void *dev, const void *data, size_t len, char *err, size_t errlen);
	/* Optional: a live migration's switch, on a paused VM, from the main
	 * thread: release gives up what another host's VMM must take (a
	 * disk image's lock) once the target has the state; !release takes
	 * it back if the target failed after all. 0, or -1 with a reason. */
	int (*handover)(void *dev, bool release, char *err, size_t errlen);
	/* Optional, for a device with a thread of its own (not an I/O
	 * thread's handler, which iothread_hold parks): on, from before it
	 * returns until it is called off, that thread touches neither guest
	 * memory nor the rings, so that a snapshot's or a switch's state and
	 * memory agree (vmm_devices_hold). From the controller. */
	void (*hold)(void *dev, bool on);
	/* Optional: why this device can never be snapshotted or migrated
	 * (its state is outside skiff, and losing it is not an option), or
	 * NULL; dm_kind.no_snapshot says it for a whole kind. */
	const char *no_snapshot;
	/* Optional: why this device writes guest memory that neither KVM's
	 * dirty log nor the VMM's own marks see (vhost's kernel worker), so
	 * that a Diff snapshot or a migration's pre-copy would miss pages;
	 * NULL when it does not. */
	const char *(*dirty_blind)(const void *dev);
	/* Optional, with dirty_blind: those writes logged after all, for a
	 * migration's pre-copy or, with track_dirty_pages, from the build on
	 * for Diff snapshots (vhost's own log: virtio/vhost.h, vhost_set_log),
	 * from the main thread, the guest running or not yet: log (a bit per 4 KiB
	 * guest-physical page, core/vm_dirty.h's vm_dirty_gpa_log) on, NULL
	 * off. A device with it can migrate. 0, or -1 with a reason (then
	 * off). */
	int (*dirty_log)(void *dev, _Atomic uint64_t *log, char *err, size_t errlen);
	/* Optional, with dirty_blind, for a device whose writer cannot log
	 * (vhost-vsock: Linux's drivers/vhost/vsock.c logs no packet it
	 * writes): it stops making those writes (stop) for a migration's
	 * pre-copy, its guest's traffic waiting, and makes them again
	 * (!stop) if the migration fails. Not for Diff snapshots: tracking
	 * lasts the VM's life. From the controller. 0, or -1 with a reason. */
	int (*dirty_stop)(void *dev, bool stop, char *err, size_t errlen);
};

enum { DEV_RL_RX, DEV_RL_TX };

/* Filled by a kind's create function. */
struct device {
	void *dev;
	const struct dev_ops *ops;
	struct virtio_dev *vdev; /* for virtio transports */
	struct pci_device *pci;	 /* for PCI-native devices */
};

#endif
