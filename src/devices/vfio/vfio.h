// SPDX-License-Identifier: Apache-2.0
/* PCI passthrough through VFIO: a host PCI device bound to vfio-pci, put
 * on skiff's PCI bus with its configuration space virtualized.
 *
 * What the guest sees: the device's IDs, class and header; its BARs with
 * their own kinds and sizes but at addresses skiff chose (the guest may move
 * them); the expansion ROM hidden; the MSI, MSI-X and PCI Express
 * capabilities (the rest hidden) at the device's offsets, and the device's
 * own config registers outside any capability (passed through); INTA. BAR contents are the device's
 * own: with mmap on, the mmappable parts of each BAR are KVM memory slots over the VFIO region's
 * mapping, and only the MSI-X table and PBA pages trap; with mmap off, every access traps and goes
 * through pread/pwrite.
 *
 * Interrupts never pass through skiff's threads: MSI and MSI-X vectors are
 * eventfds that VFIO signals and KVM injects (irqfds on MSI routes; only
 * an MSI vector pending when the guest unmasks it is injected by skiff);
 * INTx is a level irqfd whose EOI resample eventfd is VFIO's unmask.
 *
 * The device never reads the machine: guest memory and memory slots come
 * in struct vfio_ctx, interrupts through the PCI bus's host ops, and the
 * kernel interface through struct vfio_dev_ops (vfio_dev.h), so tests run
 * it over a fake device.
 *
 * Lifecycle: vfio_pci_create (opens, maps guest RAM for DMA with the VM's
 * first device, builds the config space) -> pci_bus_add_device(vfio_pci_dev()) -> vfio_pci_start
 * (reset, INTx on) -> guest runs -> vfio_pci_stop (interrupts off, reset)
 * -> vfio_pci_destroy, after the bus is gone (the device manager's order). */
#ifndef SKIFF_VFIO_H
#define SKIFF_VFIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct guest_mem;
struct pci_device;
struct vfio_pci;
struct vfio_dev_ops;

/* The VM's VFIO container, shared by all its passthrough devices (guest
 * RAM mapped once; a group attached once). Made empty with the VM, opened
 * with the first device, closed with the last; freed after the devices. */
struct vfio_container;
struct vfio_container *vfio_container_new(void);
void vfio_container_free(struct vfio_container *c);

struct vfio_ctx {
	const struct guest_mem *mem;	  /* mapped for the device's DMA */
	struct vfio_container *container; /* the VM's */
	void *host;
	/* Maps [hva, hva + size) at gpa as guest memory; the slot, or
	 * -errno. */
	int (*memslot_add)(void *host, uint64_t gpa, uint64_t size, void *hva);
	int (*memslot_del)(void *host, int slot);
	/* Tells KVM about the device's IOMMU group (KVM's VFIO device: it
	 * then knows of assigned devices, for posted interrupts and
	 * non-coherent DMA); 0 or -errno. NULL: nobody to tell (tests). */
	int (*kvm_vfio_add)(void *host, int group_fd);
};

/* KVM's VFIO device on vm_fd (created in *kvm_dev if that is -1, for the
 * VM's life) with group_fd added. 0 or -errno. */
int vfio_kvm_group_add(int vm_fd, int *kvm_dev, int group_fd);

/* Opens the device at addr ("DDDD:BB:DD.F" or "BB:DD.F"), maps guest RAM
 * for its DMA and builds its PCI function. Returns 0, or -1 with a one-line
 * reason in err (bad input: the caller exits with status 2). */
/* flags: VFIO_F_MMAP maps BARs into the guest (KVM slots), VFIO_F_ROM shows
 * the device's expansion ROM (read-only, through VFIO's ROM region). */
#define VFIO_F_MMAP 1u
#define VFIO_F_ROM  2u
int vfio_pci_create(const char *addr, unsigned int flags, const struct vfio_ctx *ctx,
		    struct vfio_pci **out, char *err, size_t errlen);
/* The same over any device (tests): ops/h stand for the device fd. */
int vfio_pci_create_with(const struct vfio_dev_ops *ops, void *h, const char *name,
			 unsigned int flags, const struct vfio_ctx *ctx, struct vfio_pci **out,
			 char *err, size_t errlen);

struct pci_device *vfio_pci_dev(struct vfio_pci *v);
/* After pci_bus_add_device: resets the device and connects INTx. 0 or
 * -1 with a reason. */
int vfio_pci_start(struct vfio_pci *v, char *err, size_t errlen);
/* vCPUs stopped: interrupts off, device reset (idempotent). */
void vfio_pci_stop(struct vfio_pci *v);
/* Stops (if needed) and frees the device: after pci_bus_destroy, or for a
 * device that was never added to a bus. */
void vfio_pci_destroy(struct vfio_pci *v);

#endif
