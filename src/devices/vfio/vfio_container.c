// SPDX-License-Identifier: Apache-2.0
/* The VM's one VFIO container (Documentation/driver-api/vfio.rst): every
 * passthrough device's IOMMU group is attached to it, so guest RAM is
 * mapped for DMA once (and pinned once against RLIMIT_MEMLOCK), and two
 * functions of one group share the group's fd (a group node opens once).
 *
 * Opened with the first device: the type1 IOMMU is set once a group is
 * attached, then RAM is mapped; later groups are attached with
 * VFIO_GROUP_SET_CONTAINER and see the same mappings. Each device holds a
 * reference to its group and to the container: the last device of a group
 * closes the group (which leaves the container), the last device closes
 * the container. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/vfio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/guest_mem.h"
#include "devices/vfio/vfio.h"
#include "devices/vfio/vfio_sys.h"

#define VFIO_GROUPS_MAX 32 /* a VM has fewer PCI slots */

struct vfio_group {
	int nr; /* the IOMMU group's number */
	int fd;
	unsigned int refs; /* devices open in it */
};

struct vfio_container {
	int fd;		   /* -1 while no device is open */
	unsigned int refs; /* devices open */
	struct vfio_group groups[VFIO_GROUPS_MAX];
	unsigned int nr_groups;
};

static int real_open(const char *path, int flags)
{
	int fd = open(path, flags);
	return fd < 0 ? -errno : fd;
}

static int real_ioctl(int fd, unsigned long req, uintptr_t arg)
{
	int r = ioctl(fd, req, arg);
	return r < 0 ? -errno : r;
}

static void real_close(int fd)
{
	close(fd);
}

static const struct vfio_io real_io = {real_open, real_ioctl, real_close};
const struct vfio_io *vfio_io = &real_io;

void vfio_sys_set_io(const struct vfio_io *io)
{
	vfio_io = io ? io : &real_io;
}

struct vfio_container *vfio_container_new(void)
{
	struct vfio_container *c = calloc(1, sizeof(*c));
	if (c)
		c->fd = -1;
	return c;
}

void vfio_container_free(struct vfio_container *c)
{
	if (!c)
		return;
	/* Devices put everything back before: nothing left to close. */
	for (unsigned int i = 0; i < c->nr_groups; i++)
		vfio_io->close(c->groups[i].fd);
	if (c->fd >= 0)
		vfio_io->close(c->fd);
	free(c);
}

static int dma_map(int container, uint64_t iova, void *host, uint64_t size)
{
	struct vfio_iommu_type1_dma_map m = {
	    .argsz = sizeof(m),
	    .flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
	    .vaddr = (uint64_t)(uintptr_t)host,
	    .iova = iova,
	    .size = size,
	};
	return vfio_io->ioctl(container, VFIO_IOMMU_MAP_DMA, (uintptr_t)&m);
}

/* Both RAM ranges at their guest physical addresses. */
static int container_dma(struct vfio_container *c, const struct guest_mem *mem, char *err,
			 size_t errlen)
{
	int r = dma_map(c->fd, 0, mem->host, mem->low_size);
	if (r == 0 && mem->size > mem->low_size)
		r = dma_map(c->fd, GUEST_MEM_HIGH_BASE, mem->host + mem->low_size,
			    mem->size - mem->low_size);
	if (r < 0) {
		snprintf(err, errlen, "VFIO_IOMMU_MAP_DMA of guest RAM: %s%s", strerror(-r),
			 r == -ENOMEM
			     ? " (guest RAM is pinned: raise RLIMIT_MEMLOCK (ulimit -l) to "
			       "the guest's size, or CAP_IPC_LOCK)"
			     : "");
		return -1;
	}
	return 0;
}

static int container_open(struct vfio_container *c, char *err, size_t errlen)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%svfio", vfio_dev_root());
	c->fd = vfio_io->open(path, O_RDWR | O_CLOEXEC);
	if (c->fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s%s", path, strerror(-c->fd),
			 c->fd == -EACCES ? " (read and write access to it)" : "");
		c->fd = -1;
		return -1;
	}
	if (vfio_io->ioctl(c->fd, VFIO_GET_API_VERSION, 0) != VFIO_API_VERSION ||
	    vfio_io->ioctl(c->fd, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU) <= 0) {
		snprintf(err, errlen, "no VFIO type1 IOMMU: load vfio_iommu_type1");
		return -1;
	}
	return 0;
}

/* Opens group nr and attaches it; the first one also sets the IOMMU and
 * maps RAM. The group's fd, or -1 with a reason (the fd closed). */
static int group_attach(struct vfio_container *c, int nr, const struct guest_mem *mem, char *err,
			size_t errlen)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s%d", vfio_dev_root(), nr);
	int fd = vfio_io->open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s%s", path,
			 fd == -EBUSY ? "IOMMU group already in use" : strerror(-fd),
			 fd == -EACCES ? " (the group's node must be this user's: chown it)" : "");
		return -1;
	}
	struct vfio_group_status gs = {.argsz = sizeof(gs)};
	int r;
	if (vfio_io->ioctl(fd, VFIO_GROUP_GET_STATUS, (uintptr_t)&gs) < 0 ||
	    !(gs.flags & VFIO_GROUP_FLAGS_VIABLE)) {
		snprintf(err, errlen,
			 "IOMMU group %d is not viable: bind every device in "
			 "/sys/kernel/iommu_groups/%d/devices to vfio-pci",
			 nr, nr);
		goto fail;
	}
	if ((r = vfio_io->ioctl(fd, VFIO_GROUP_SET_CONTAINER, (uintptr_t)&c->fd)) < 0) {
		snprintf(err, errlen, "VFIO_GROUP_SET_CONTAINER: %s", strerror(-r));
		goto fail;
	}
	if (c->nr_groups > 0)
		return fd;
	if ((r = vfio_io->ioctl(c->fd, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU)) < 0) {
		snprintf(err, errlen, "VFIO_SET_IOMMU: %s%s", strerror(-r),
			 r == -EPERM ? " (no interrupt remapping: load vfio_iommu_type1 "
				       "with allow_unsafe_interrupts=1)"
				     : "");
		goto fail;
	}
	if (container_dma(c, mem, err, errlen) < 0)
		goto fail;
	return fd;
fail:
	vfio_io->close(fd);
	return -1;
}

int vfio_container_get(struct vfio_container *c, int group, const struct guest_mem *mem, char *err,
		       size_t errlen)
{
	for (unsigned int i = 0; i < c->nr_groups; i++) {
		if (c->groups[i].nr == group) {
			c->groups[i].refs++;
			c->refs++;
			return c->groups[i].fd;
		}
	}
	if (c->nr_groups == VFIO_GROUPS_MAX) {
		snprintf(err, errlen, "more than %d IOMMU groups", VFIO_GROUPS_MAX);
		return -1;
	}
	if (c->fd < 0 && container_open(c, err, errlen) < 0)
		goto fail;
	int fd = group_attach(c, group, mem, err, errlen);
	if (fd < 0)
		goto fail;
	c->groups[c->nr_groups++] = (struct vfio_group){group, fd, 1};
	c->refs++;
	return fd;
fail:
	if (!c->refs && c->fd >= 0) {
		vfio_io->close(c->fd);
		c->fd = -1;
	}
	return -1;
}

void vfio_container_put(struct vfio_container *c, int group)
{
	for (unsigned int i = 0; i < c->nr_groups; i++) {
		struct vfio_group *g = &c->groups[i];
		if (g->nr != group)
			continue;
		if (--g->refs == 0) {
			/* Closing the group takes it out of the container. */
			vfio_io->close(g->fd);
			*g = c->groups[--c->nr_groups];
		}
		if (--c->refs == 0) {
			vfio_io->close(c->fd);
			c->fd = -1;
		}
		return;
	}
}
