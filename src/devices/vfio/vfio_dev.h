// SPDX-License-Identifier: Apache-2.0
/* The kernel side of one VFIO device, as function pointers: the real one
 * (vfio_sys.c) issues ioctls and pread/pwrite on the device fd; unit tests
 * supply a fake. Indices and flags are linux/vfio.h's. */
#ifndef SKIFF_VFIO_DEV_H
#define SKIFF_VFIO_DEV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define VFIO_MAX_AREAS 8

struct vfio_region {
	uint32_t flags; /* VFIO_REGION_INFO_FLAG_{READ,WRITE,MMAP} */
	uint64_t size;
	uint64_t offset; /* of the region in the device fd */
	/* Sparse mmap areas (offsets within the region); none with the MMAP
	 * flag: the whole region may be mapped. */
	unsigned int nr_areas;
	struct {
		uint64_t offset, size;
	} areas[VFIO_MAX_AREAS];
};

struct vfio_dev_ops {
	/* 0 or -errno. */
	int (*region_info)(void *h, unsigned int index, struct vfio_region *out);
	/* Interrupts of index (VFIO_PCI_*_IRQ_INDEX); 0 if none. */
	uint32_t (*irq_count)(void *h, unsigned int index);
	/* VFIO_DEVICE_SET_IRQS; fds is count eventfds for DATA_EVENTFD. 0,
	 * -errno, or (MSI) how many vectors the host could give if fewer. */
	int (*set_irqs)(void *h, unsigned int index, uint32_t flags, unsigned int start,
			unsigned int count, const int32_t *fds);
	/* VFIO_DEVICE_RESET; -ENOTTY if the device cannot reset. */
	int (*reset)(void *h);
	/* At an offset in the device fd; bytes moved or -errno. */
	ssize_t (*pread)(void *h, void *buf, size_t len, uint64_t off);
	ssize_t (*pwrite)(void *h, const void *buf, size_t len, uint64_t off);
	/* NULL on failure. */
	void *(*mmap)(void *h, uint64_t off, uint64_t len);
	void (*munmap)(void *h, void *p, uint64_t len);
	/* The IOMMU group's fd (for KVM's VFIO device). */
	int (*group_fd)(void *h);
	/* Closes the device (and its group and the VM's container if it was
	 * their last device). */
	void (*close)(void *h);
};

#endif
