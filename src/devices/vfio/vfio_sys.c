// SPDX-License-Identifier: Apache-2.0
/* The kernel side of VFIO (Documentation/driver-api/vfio.rst): the host
 * checks (sysfs, the IOMMU group, drivers), the device fd from its group in
 * the VM's container (vfio_container.c, guest RAM mapped there), and the
 * regions and interrupts vfio_dev_ops exposes. */
#include "devices/vfio/vfio_sys.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <linux/kvm.h>
#include <linux/vfio.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devices/vfio/vfio.h"

/* Where devices and VFIO nodes are; tests point them elsewhere. */
static const char *sysfs_pci = "/sys/bus/pci/devices/";
static const char *dev_vfio = "/dev/vfio/";

void vfio_sys_set_roots(const char *sysfs, const char *dev)
{
	sysfs_pci = sysfs;
	dev_vfio = dev;
}

const char *vfio_dev_root(void)
{
	return dev_vfio;
}

const char *vfio_sysfs_root(void)
{
	return sysfs_pci;
}

/* One open device: its group's fd is the container's (shared with the
 * group's other devices). */
struct vfio_sys {
	struct vfio_container *c;
	int group_nr, group, device;
	uint32_t dev_flags;
};

int vfio_addr_parse(const char *addr, char canon[16])
{
	unsigned int d = 0, b, s, f;
	int n = -1;
	if (!addr || strlen(addr) > 12)
		return -1;
	if (sscanf(addr, "%4x:%2x:%2x.%1x%n", &d, &b, &s, &f, &n) != 4 || n != (int)strlen(addr)) {
		d = 0;
		n = -1;
		if (sscanf(addr, "%2x:%2x.%1x%n", &b, &s, &f, &n) != 3 || n != (int)strlen(addr))
			return -1;
	}
	/* sscanf's %x takes signs and spaces: only hex digits may pass. */
	for (const char *p = addr; *p; p++)
		if (!strchr("0123456789abcdefABCDEF:.", *p))
			return -1;
	if (s > 0x1f || f > 7)
		return -1;
	snprintf(canon, 16, "%04x:%02x:%02x.%x", d, b, s, f);
	return 0;
}

/* The last path component of the symlink at sysfs_pci canon/name. */
static int link_base(const char *canon, const char *name, char *out, size_t len)
{
	char path[PATH_MAX], target[PATH_MAX];
	snprintf(path, sizeof(path), "%s%s/%s", sysfs_pci, canon, name);
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return -1;
	target[n] = 0;
	const char *base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) >= len)
		return -1;
	memcpy(out, base, strlen(base) + 1);
	return 0;
}

/* Drivers a group's other devices may have: a VFIO one, pci-stub, or a
 * bridge's port driver (all leave the group's DMA to VFIO, as the kernel's
 * viability rule says); none at all is fine too. */
static bool driver_shares_group(const char *drv)
{
	return strstr(drv, "vfio") || !strcmp(drv, "pci-stub") || !strcmp(drv, "pcieport");
}

/* Every device of canon's IOMMU group (given or not) off host drivers: a
 * group is handed over whole, and VFIO would only say "not viable". 0, or
 * -1 naming the device left on a host driver. */
static int group_whole(const char *canon, int group, char *err, size_t errlen)
{
	char dir[PATH_MAX], name[PATH_MAX], drv[64];
	snprintf(dir, sizeof(dir), "%s%s/iommu_group/devices", sysfs_pci, canon);
	DIR *d = opendir(dir);
	if (!d)
		return 0; /* VFIO's viability check still speaks */
	struct dirent *e;
	int r = 0;
	while (r == 0 && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char target[PATH_MAX];
		ssize_t n = -1;
		if (snprintf(name, sizeof(name), "%s/%s/driver", dir, e->d_name) <
		    (int)sizeof(name))
			n = readlink(name, target, sizeof(target) - 1);
		if (n < 0)
			continue; /* no driver */
		target[n] = 0;
		const char *base = strrchr(target, '/');
		if (snprintf(drv, sizeof(drv), "%s", base ? base + 1 : target) >=
			(int)sizeof(drv) ||
		    driver_shares_group(drv))
			continue;
		snprintf(err, errlen,
			 "IOMMU group %d of %s is not all VFIO's: %s is bound to %s, a host "
			 "driver (bind every device of the group to vfio-pci)",
			 group, canon, e->d_name, drv);
		r = -1;
	}
	closedir(d);
	return r;
}

/* Any driver built on vfio-pci-core (vfio-pci or a variant such as
 * mlx5_vfio_pci) registers the device's IOMMU group with VFIO: its group
 * node is what says the driver is a VFIO one, not the driver's name. */
static int sys_check(const char *addr, char canon[16], int *group, char drv[64], char *err,
		     size_t errlen)
{
	char path[PATH_MAX], buf[64];
	struct stat st;
	if (vfio_addr_parse(addr, canon) < 0) {
		snprintf(err, errlen, "malformed PCI address '%s': use DDDD:BB:DD.F", addr);
		return -1;
	}
	snprintf(path, sizeof(path), "%s%s", sysfs_pci, canon);
	if (stat(path, &st) < 0) {
		snprintf(err, errlen, "no PCI device %s on this host", canon);
		return -1;
	}
	if (link_base(canon, "iommu_group", buf, sizeof(buf)) < 0) {
		snprintf(err, errlen,
			 "%s has no IOMMU group: no IOMMU enabled (intel_iommu=on / amd_iommu=on)",
			 canon);
		return -1;
	}
	*group = atoi(buf);
	if (link_base(canon, "driver", drv, 64) < 0) {
		snprintf(err, errlen, "%s is not bound to vfio-pci (no driver)", canon);
		return -1;
	}
	snprintf(path, sizeof(path), "%svfio", dev_vfio);
	if (access(path, F_OK) < 0) {
		snprintf(err, errlen, "no %s: the vfio module is not loaded", path);
		return -1;
	}
	snprintf(path, sizeof(path), "%s%d", dev_vfio, *group);
	if (access(path, F_OK) < 0) {
		snprintf(err, errlen,
			 "%s is bound to %s, not a VFIO driver (no %s): bind it to vfio-pci", canon,
			 drv, path);
		return -1;
	}
	return group_whole(canon, *group, err, errlen);
}

int vfio_sys_check(const char *addr, char *err, size_t errlen)
{
	char canon[16], drv[64];
	int group;
	return sys_check(addr, canon, &group, drv, err, errlen);
}

static int sys_region_caps(struct vfio_region_info *ri, struct vfio_region *out)
{
	if (!(ri->flags & VFIO_REGION_INFO_FLAG_CAPS))
		return 0;
	uint32_t off = ri->cap_offset;
	for (int n = 0; off && n < 16; n++) {
		if (off + sizeof(struct vfio_info_cap_header) > ri->argsz)
			return -EINVAL;
		struct vfio_info_cap_header *hdr = (void *)((uint8_t *)ri + off);
		if (hdr->id == VFIO_REGION_INFO_CAP_SPARSE_MMAP) {
			struct vfio_region_info_cap_sparse_mmap *sp = (void *)hdr;
			if (off + sizeof(*sp) + (uint64_t)sp->nr_areas * sizeof(sp->areas[0]) >
			    ri->argsz)
				return -EINVAL;
			out->nr_areas = 0;
			for (uint32_t i = 0; i < sp->nr_areas && i < VFIO_MAX_AREAS; i++) {
				out->areas[i].offset = sp->areas[i].offset;
				out->areas[i].size = sp->areas[i].size;
				out->nr_areas++;
			}
			/* A sparse list with no areas: nothing to map. */
			if (!sp->nr_areas)
				out->flags &= ~VFIO_REGION_INFO_FLAG_MMAP;
		}
		off = hdr->next;
	}
	return 0;
}

static int sys_region_info(void *h, unsigned int index, struct vfio_region *out)
{
	struct vfio_sys *s = h;
	struct vfio_region_info *ri = calloc(1, sizeof(*ri));
	if (!ri)
		return -ENOMEM;
	ri->argsz = sizeof(*ri);
	ri->index = index;
	int r = 0;
	if (ioctl(s->device, VFIO_DEVICE_GET_REGION_INFO, ri) < 0) {
		r = -errno;
	} else if (ri->argsz > sizeof(*ri) && ri->argsz < 65536) {
		/* Capabilities follow: ask again with room for them. */
		uint32_t sz = ri->argsz;
		struct vfio_region_info *big = realloc(ri, sz);
		if (!big) {
			free(ri);
			return -ENOMEM;
		}
		ri = big;
		memset(ri, 0, sz);
		ri->argsz = sz;
		ri->index = index;
		if (ioctl(s->device, VFIO_DEVICE_GET_REGION_INFO, ri) < 0)
			r = -errno;
	}
	if (r == 0) {
		memset(out, 0, sizeof(*out));
		out->flags = ri->flags;
		out->size = ri->size;
		out->offset = ri->offset;
		r = sys_region_caps(ri, out);
	}
	free(ri);
	return r;
}

static uint32_t sys_irq_count(void *h, unsigned int index)
{
	struct vfio_sys *s = h;
	struct vfio_irq_info ii = {.argsz = sizeof(ii), .index = index};
	if (ioctl(s->device, VFIO_DEVICE_GET_IRQ_INFO, &ii) < 0)
		return 0;
	return ii.count;
}

static int sys_set_irqs(void *h, unsigned int index, uint32_t flags, unsigned int start,
			unsigned int count, const int32_t *fds)
{
	struct vfio_sys *s = h;
	size_t data = (flags & VFIO_IRQ_SET_DATA_EVENTFD) ? count * sizeof(int32_t) : 0;
	struct vfio_irq_set *set = calloc(1, sizeof(*set) + data);
	if (!set)
		return -ENOMEM;
	set->argsz = (uint32_t)(sizeof(*set) + data);
	set->flags = flags;
	set->index = index;
	set->start = start;
	set->count = count;
	if (data)
		memcpy(set->data, fds, data);
	/* Positive: MSI vectors the host could give, fewer than asked. */
	int r = ioctl(s->device, VFIO_DEVICE_SET_IRQS, set);
	if (r < 0)
		r = -errno;
	free(set);
	return r;
}

static int sys_reset(void *h)
{
	struct vfio_sys *s = h;
	if (!(s->dev_flags & VFIO_DEVICE_FLAGS_RESET))
		return -ENOTTY;
	return ioctl(s->device, VFIO_DEVICE_RESET) < 0 ? -errno : 0;
}

static ssize_t sys_pread(void *h, void *buf, size_t len, uint64_t off)
{
	ssize_t n = pread(((struct vfio_sys *)h)->device, buf, len, (off_t)off);
	return n < 0 ? -errno : n;
}

static ssize_t sys_pwrite(void *h, const void *buf, size_t len, uint64_t off)
{
	ssize_t n = pwrite(((struct vfio_sys *)h)->device, buf, len, (off_t)off);
	return n < 0 ? -errno : n;
}

static void *sys_mmap(void *h, uint64_t off, uint64_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       ((struct vfio_sys *)h)->device, (off_t)off);
	return p == MAP_FAILED ? NULL : p;
}

static void sys_munmap(void *h, void *p, uint64_t len)
{
	(void)h;
	munmap(p, len);
}

static void sys_close(void *h)
{
	struct vfio_sys *s = h;
	if (s->device >= 0)
		vfio_io->close(s->device);
	if (s->group >= 0)
		vfio_container_put(s->c, s->group_nr);
	free(s);
}

static int sys_group_fd(void *h)
{
	return ((struct vfio_sys *)h)->group;
}

int vfio_kvm_group_add(int vm_fd, int *kvm_dev, int group_fd)
{
	if (*kvm_dev < 0) {
		struct kvm_create_device cd = {.type = KVM_DEV_TYPE_VFIO};
		if (ioctl(vm_fd, KVM_CREATE_DEVICE, &cd) < 0)
			return -errno;
		*kvm_dev = (int)cd.fd;
	}
	int32_t fd = group_fd;
	struct kvm_device_attr a = {.group = KVM_DEV_VFIO_GROUP,
				    .attr = KVM_DEV_VFIO_GROUP_ADD,
				    .addr = (uint64_t)(uintptr_t)&fd};
	return ioctl(*kvm_dev, KVM_SET_DEVICE_ATTR, &a) < 0 ? -errno : 0;
}

static const struct vfio_dev_ops sys_ops = {
    .region_info = sys_region_info,
    .irq_count = sys_irq_count,
    .set_irqs = sys_set_irqs,
    .reset = sys_reset,
    .pread = sys_pread,
    .pwrite = sys_pwrite,
    .mmap = sys_mmap,
    .munmap = sys_munmap,
    .group_fd = sys_group_fd,
    .close = sys_close,
};

int vfio_sys_open(const char *addr, struct vfio_container *c, const struct guest_mem *mem,
		  const struct vfio_dev_ops **ops, void **h, char canon[16], char *err,
		  size_t errlen)
{
	int group;
	char drv[64];
	if (sys_check(addr, canon, &group, drv, err, errlen) < 0)
		return -1;
	struct vfio_sys *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	s->c = c;
	s->group_nr = group;
	s->device = -1;
	s->group = vfio_container_get(c, group, mem, err, errlen);
	if (s->group < 0)
		goto fail;
	s->device = vfio_io->ioctl(s->group, VFIO_GROUP_GET_DEVICE_FD, (uintptr_t)canon);
	if (s->device < 0) {
		snprintf(err, errlen, "%s (driver %s): %s", canon, drv,
			 s->device == -EBUSY ? "device already in use" : strerror(-s->device));
		goto fail;
	}
	struct vfio_device_info di = {.argsz = sizeof(di)};
	if (vfio_io->ioctl(s->device, VFIO_DEVICE_GET_INFO, (uintptr_t)&di) < 0 ||
	    !(di.flags & VFIO_DEVICE_FLAGS_PCI) || di.num_regions <= VFIO_PCI_CONFIG_REGION_INDEX) {
		snprintf(err, errlen, "%s: not a VFIO PCI device", canon);
		goto fail;
	}
	s->dev_flags = di.flags;
	*ops = &sys_ops;
	*h = s;
	return 0;
fail:
	sys_close(s);
	return -1;
}
