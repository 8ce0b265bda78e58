// SPDX-License-Identifier: Apache-2.0
/* The real VFIO device: sysfs checks, the type1 container, the group, the
 * device fd, and guest RAM mapped for DMA. */
#ifndef SKIFF_VFIO_SYS_H
#define SKIFF_VFIO_SYS_H

#include <stddef.h>
#include <stdint.h>

#include "devices/vfio/vfio_dev.h"

struct guest_mem;
struct vfio_container;

/* "DDDD:BB:DD.F" or "BB:DD.F" to the canonical form (16 bytes); 0 or -1. */
int vfio_addr_parse(const char *addr, char canon[16]);

/* What can be checked before a VM exists: the address, the device, its
 * IOMMU group, its driver and /dev/vfio/vfio. 0, or -1 with a reason. */
int vfio_sys_check(const char *addr, char *err, size_t errlen);

/* Every IOMMU group of the n devices at addrs given whole (bridges
 * aside): 0, or -1 naming the first function left out, of addrs[*bad]'s
 * group. */
int vfio_groups_whole(const char *const *addrs, unsigned int n, unsigned int *bad, char *err,
		      size_t errlen);

/* Tests: sysfs's PCI device directory and /dev/vfio/, each ending in
 * '/'. */
void vfio_sys_set_roots(const char *sysfs, const char *dev);

/* The kernel calls for the container, groups and device fds: the real
 * ones, or a fake in tests. ioctl and open answer -errno on failure. */
struct vfio_io {
	int (*open)(const char *path, int flags);
	int (*ioctl)(int fd, unsigned long req, uintptr_t arg);
	void (*close)(int fd);
};
extern const struct vfio_io *vfio_io;
/* Tests: io instead of the kernel (NULL: the kernel again). */
void vfio_sys_set_io(const struct vfio_io *io);
/* /dev/vfio/ and sysfs's PCI devices (or the tests' roots). */
const char *vfio_dev_root(void);
const char *vfio_sysfs_root(void);

/* Group `group` attached to the VM's container c: the container opened,
 * its IOMMU set and mem mapped for DMA with the first group; a group
 * already attached is reused. The group's fd (each success is undone by
 * one vfio_container_put), or -1 with a reason. */
int vfio_container_get(struct vfio_container *c, int group, const struct guest_mem *mem, char *err,
		       size_t errlen);
/* The last device of a group closes it; the last device, the container. */
void vfio_container_put(struct vfio_container *c, int group);

/* Opens the device, its group in container c (mem mapped for DMA there
 * with the VM's first device). 0, or -1 with a reason. */
int vfio_sys_open(const char *addr, struct vfio_container *c, const struct guest_mem *mem,
		  const struct vfio_dev_ops **ops, void **h, char canon[16], char *err,
		  size_t errlen);

#endif
