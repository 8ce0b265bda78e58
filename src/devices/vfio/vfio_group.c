// SPDX-License-Identifier: Apache-2.0
/* A passthrough IOMMU group is given whole: every function in it that is
 * bound to a VFIO driver (so meant for a guest) is named with --vfio-pci,
 * bridges aside (the group holds them for the requester IDs they alias).
 * One left out would be reachable by the guest's DMA through the group's
 * shared IOMMU domain while nobody drives it, and no other VM could take
 * it while this one holds the group: Documentation/driver-api/vfio.rst's
 * group is the unit of ownership. Functions parked without a driver or
 * on pci-stub stay out, as the kernel's viability rule lets them; one on a
 * host driver was refused already (vfio_sys.c). Checked before the VM
 * exists. */
#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices/vfio/vfio_sys.h"

/* A PCI-to-PCI bridge (06:04) or a subtractive one (06:09), by its class
 * file; a device whose class cannot be read counts as a function. */
static bool is_bridge(const char *dir, const char *name)
{
	char path[PATH_MAX];
	unsigned int cls = 0;
	if (snprintf(path, sizeof(path), "%s/%s/class", dir, name) >= (int)sizeof(path))
		return false;
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	int n = fscanf(f, "%x", &cls);
	fclose(f);
	return n == 1 && (cls >> 8 == 0x0604 || cls >> 8 == 0x0609);
}

/* Bound to vfio-pci or a variant built on vfio-pci-core. */
static bool on_vfio(const char *dir, const char *name)
{
	char path[PATH_MAX], target[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/%s/driver", dir, name) >= (int)sizeof(path))
		return false;
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = 0;
	const char *base = strrchr(target, '/');
	return strstr(base ? base + 1 : target, "vfio") != NULL;
}

static bool given(char (*canon)[16], unsigned int n, const char *name)
{
	for (unsigned int i = 0; i < n; i++)
		if (!strcmp(canon[i], name))
			return true;
	return false;
}

/* The first function of device i's group not among canon, in err. */
static int group_given(char (*canon)[16], unsigned int n, unsigned int i, char *err, size_t errlen)
{
	char dir[PATH_MAX], group[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s%s/iommu_group", vfio_sysfs_root(), canon[i]);
	ssize_t len = readlink(dir, group, sizeof(group) - 1);
	if (len < 0)
		return 0; /* the per-device check said so already */
	group[len] = 0;
	const char *nr = strrchr(group, '/');
	nr = nr ? nr + 1 : group;
	snprintf(dir, sizeof(dir), "%s%s/iommu_group/devices", vfio_sysfs_root(), canon[i]);
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *e;
	int r = 0;
	while (r == 0 && (e = readdir(d))) {
		if (e->d_name[0] == '.' || given(canon, n, e->d_name) || !on_vfio(dir, e->d_name) ||
		    is_bridge(dir, e->d_name))
			continue;
		snprintf(err, errlen,
			 "its IOMMU group %s also holds %s, which is not given: a group passes "
			 "through whole (add --vfio-pci %s)",
			 nr, e->d_name, e->d_name);
		r = -1;
	}
	closedir(d);
	return r;
}

int vfio_groups_whole(const char *const *addrs, unsigned int n, unsigned int *bad, char *err,
		      size_t errlen)
{
	char(*canon)[16] = calloc(n ? n : 1, sizeof(*canon));
	if (!canon) {
		snprintf(err, errlen, "out of memory");
		*bad = 0;
		return -1;
	}
	for (unsigned int i = 0; i < n; i++)
		if (vfio_addr_parse(addrs[i], canon[i]) < 0)
			canon[i][0] = 0; /* told by the per-device check */
	int r = 0;
	for (unsigned int i = 0; r == 0 && i < n; i++) {
		*bad = i;
		if (canon[i][0])
			r = group_given(canon, n, i, err, errlen);
	}
	free(canon);
	return r;
}
