// SPDX-License-Identifier: Apache-2.0
/* MSI-X (PCI local bus spec 3.0, 6.8.2): the capability, the vector table
 * and the pending bit array in a BAR of their own, and delivery through KVM
 * GSI routing: each vector gets one MSI route and one irqfd the first time
 * it is unmasked, so sending an interrupt is one eventfd write from any
 * thread. The route follows table writes.
 *
 * Masking: a vector is deliverable when MSI-X is enabled, the function
 * mask is clear and the vector's mask bit is clear. An interrupt for a
 * vector that is not deliverable sets its pending bit; the vector fires
 * when it becomes deliverable. */
#ifndef SKIFF_PCI_MSIX_H
#define SKIFF_PCI_MSIX_H

#include <stdbool.h>
#include <stdint.h>

#include "pci/pci.h"

#define PCI_MSIX_MAX_VECTORS  64
#define PCI_MSIX_BAR_SIZE     0x1000
#define PCI_MSIX_TABLE_OFFSET 0x000 /* within the BAR */
#define PCI_MSIX_PBA_OFFSET   0x800
#define PCI_MSIX_ENTRY_SIZE   16
#define PCI_MSIX_CAP_LEN      12

/* Capability fields and bits */
#define PCI_MSIX_FLAGS		    2 /* message control, 16 bits */
#define PCI_MSIX_TABLE		    4 /* table offset | BIR */
#define PCI_MSIX_PBA		    8 /* PBA offset | BIR */
#define PCI_MSIX_FLAGS_QSIZE	    0x07ff
#define PCI_MSIX_FLAGS_MASKALL	    0x4000
#define PCI_MSIX_FLAGS_ENABLE	    0x8000
#define PCI_MSIX_ENTRY_CTRL_MASKBIT 0x1

enum pci_msix_result {
	PCI_MSIX_OFF,	  /* MSI-X disabled: the caller uses INTx */
	PCI_MSIX_SENT,	  /* delivered */
	PCI_MSIX_PENDING, /* masked: pending bit set */
	PCI_MSIX_DROPPED, /* no such vector (e.g. virtio's NO_VECTOR) */
};

/* Adds the capability and a PCI_MSIX_BAR_SIZE BAR (slots bar, bar + 1)
 * holding the table and PBA, with nr vectors (1..PCI_MSIX_MAX_VECTORS),
 * all masked. Call before pci_bus_add_device. Returns 0, or -1 with a
 * reason in err. */
int pci_msix_init(struct pci_device *dev, unsigned int nr, unsigned int bar, char *err,
		  size_t errlen);
/* Deassigns the irqfds, closes them, frees the state. */
void pci_msix_destroy(struct pci_device *dev);

/* Signals `vector`; any thread. */
enum pci_msix_result pci_msix_notify(struct pci_device *dev, unsigned int vector);
bool pci_msix_enabled(struct pci_device *dev);
/* A value that changes whenever pci_msix_notify sends `vector` (or leaves
 * it pending), the vector's number in it: read after storing what the
 * guest should see, a later read that differs means an interrupt on that
 * vector left after the store (both under the table's lock). 0, or -1
 * while MSI-X is off or no such vector. Not counted: vhost's direct
 * signals through pci_msix_vector_fd. */
int pci_msix_vector_seq(struct pci_device *dev, unsigned int vector, uint64_t *seq);
/* The eventfd of `vector` (while MSI-X is enabled; else -1), for an
 * in-kernel backend (vhost) to signal directly. Masking is honoured: while
 * the vector is masked its irqfd is unbound, writes stay in the eventfd and
 * show in the PBA, and they are injected when the vector is unmasked. */
int pci_msix_vector_fd(struct pci_device *dev, unsigned int vector);

/* Config bytes [off, off + len) were written (bus config lock held):
 * picks up enable and function-mask changes. */
void pci_msix_cfg_write(struct pci_device *dev, uint32_t off, uint32_t len);

/* The guest-visible MSI-X state for a snapshot: the table and the PBA
 * (enable and function mask are in config space). Fixed layout. */
struct pci_msix_state {
	uint32_t nr, zero;
	uint64_t pba[PCI_MSIX_MAX_VECTORS / 64];
	uint32_t entry[PCI_MSIX_MAX_VECTORS][4];
};
/* The table and the PBA, with what a backend left in a masked vector's
 * eventfd counted as pending (as a guest reading the PBA would see). */
void pci_msix_state_save(struct pci_device *dev, struct pci_msix_state *s);
/* What is wrong with s for this function, or NULL. */
const char *pci_msix_state_check(const struct pci_device *dev, const struct pci_msix_state *s);
/* Checked s into the function, then its enable and mask bits from config
 * space: every deliverable vector gets its route and irqfd, and a pending
 * one fires. */
void pci_msix_state_apply(struct pci_device *dev, const struct pci_msix_state *s);

#endif
