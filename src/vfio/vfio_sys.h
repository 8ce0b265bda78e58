/* The real VFIO device: sysfs checks, the type1 container, the group, the
 * device fd, and guest RAM mapped for DMA. */
#ifndef SKIFF_VFIO_SYS_H
#define SKIFF_VFIO_SYS_H

#include <stddef.h>

#include "vfio/vfio_dev.h"

struct guest_mem;

/* "DDDD:BB:DD.F" or "BB:DD.F" to the canonical form (16 bytes); 0 or -1. */
int vfio_addr_parse(const char *addr, char canon[16]);

/* What can be checked before a VM exists: the address, the device, its
 * IOMMU group, its driver and /dev/vfio/vfio. 0, or -1 with a reason. */
int vfio_sys_check(const char *addr, char *err, size_t errlen);

/* Tests: sysfs's PCI device directory and /dev/vfio/, each ending in
 * '/'. */
void vfio_sys_set_roots(const char *sysfs, const char *dev);

/* Opens the device and maps mem for its DMA. 0, or -1 with a reason. */
int vfio_sys_open(const char *addr, const struct guest_mem *mem, const struct vfio_dev_ops **ops,
		  void **h, char canon[16], char *err, size_t errlen);

#endif
