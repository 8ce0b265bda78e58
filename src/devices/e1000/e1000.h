// SPDX-License-Identifier: Apache-2.0
/* An emulated Intel 82540EM (PCI 8086:100e) on a tap, for guests without
 * virtio drivers: Linux's unmodified e1000 driver binds to it.
 *
 * The device knows neither the machine nor its transport: it gets guest
 * memory, an I/O thread, an open tap and hooks for KVM's coalesced MMIO in
 * struct e1000_ctx, and hands out its struct pci_device for whoever
 * attaches it to a bus. */
#ifndef SKIFF_E1000_H
#define SKIFF_E1000_H

#include <stddef.h>
#include <stdint.h>

#include "core/counter.h"
#include "core/guest_mem.h"
#include "net/tap.h"

struct e1000;
struct iothread;
struct pci_device;
struct snap_writer;

/* Which register writes may wait in KVM's coalesced ring (e1000.c has the
 * table and the rule). ALL also batches the TX doorbell: it exists only to
 * reproduce the field's latency trap in benchmarks. */
enum e1000_coalesce { E1000_COALESCE_OFF, E1000_COALESCE_ON, E1000_COALESCE_ALL };

struct e1000_ctx {
	const char *name; /* "e1000-0"; copied */
	const struct guest_mem *gm;
	struct iothread *io; /* runs RX; NULL: the caller drives e1000_rx_run (tests) */
	struct tap tap;	     /* owned by the device from e1000_create on, also on failure */
	uint8_t mac[6];
	enum e1000_coalesce coalesce;
	/* Coalesced MMIO (all optional): register/unregister a zone of MMIO
	 * space, and drain the ring (replays batched writes through the
	 * device's handler; never called with the device's lock held). */
	int (*zone_add)(void *opaque, uint64_t addr, uint32_t len);
	int (*zone_del)(void *opaque, uint64_t addr, uint32_t len);
	void (*flush)(void *opaque);
	void *cm_opaque;
};

/* Builds the device (PCI header, 128 KiB memory BAR 0, EEPROM with the MAC)
 * and, with ctx->io, watches the tap on it. NULL with a reason in err. */
struct e1000 *e1000_create(const struct e1000_ctx *ctx, char *err, size_t errlen);
struct pci_device *e1000_pci(struct e1000 *d);
/* Quiesces: after it returns the device touches no guest memory and sends
 * or receives nothing; register accesses still answer. */
void e1000_stop(struct e1000 *d);
/* Frees a stopped device that no bus uses any more; closes the tap. */
void e1000_destroy(struct e1000 *d);

/* The device's counters for statistics: count, and name/address of the
 * i-th ("tx packets"). */
const char *e1000_name(const struct e1000 *d);
unsigned int e1000_counter_count(void);
const char *e1000_counter_name(unsigned int i);
const counter_t *e1000_counter(const struct e1000 *d, unsigned int i);

/* Snapshots (e1000_snap.c, with struct dev_ops' save and restore
 * signatures): the card's state as section (id, instance) on a paused VM
 * (the coalesced ring drained first); that payload back onto a card built
 * the same way whose guest has not run, checked whole before anything
 * changes. 0, or -1 with one line in err. Its PCI function is saved
 * apart (pci_device_save). */
int e1000_save(struct e1000 *d, struct snap_writer *w, uint32_t id, uint32_t instance, char *err,
	       size_t errlen);
int e1000_restore(struct e1000 *d, const void *data, size_t len, char *err, size_t errlen);
/* A live migration's switch on one host (dev_ops.handover): the tap let go
 * of (a single-queue tap takes one process) or taken back by name. */
int e1000_handover(struct e1000 *d, bool release, char *err, size_t errlen);

/* Moves packets tap -> guest until the tap is empty, the guest has no
 * buffers or the budget is spent (the I/O thread calls it). */
void e1000_rx_run(struct e1000 *d);

#endif
