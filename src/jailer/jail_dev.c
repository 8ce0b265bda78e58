// SPDX-License-Identifier: Apache-2.0
#include "jailer/jail_dev.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The numbers the kernel assigns these (Documentation/admin-guide/
 * devices.txt): used when the host has no node (a module not loaded yet,
 * or a minimal /dev); the host's own node wins when it exists. */
static const struct jail_dev {
	const char *name; /* under /dev */
	unsigned int major, minor;
	bool always;
} jail_devs[] = {
    {"kvm", 10, 232, true},	     {"net/tun", 10, 200, true}, {"vhost-net", 10, 238, false},
    {"vhost-vsock", 10, 241, false}, {"urandom", 1, 9, false},	 {"vfio/vfio", 10, 196, false},
};
#define JAIL_NDEVS (sizeof(jail_devs) / sizeof(jail_devs[0]))

/* "vfio/N": an IOMMU group, whose major the host chose: no default. */
static bool is_vfio_group(const char *name)
{
	if (strncmp(name, "vfio/", 5))
		return false;
	size_t n = strlen(name + 5);
	return n >= 1 && n <= 6 && strspn(name + 5, "0123456789") == n;
}

static const struct jail_dev *dev_find(const char *name)
{
	for (size_t i = 0; i < JAIL_NDEVS; i++)
		if (!strcmp(jail_devs[i].name, name))
			return &jail_devs[i];
	return NULL;
}

int jail_device_check(const char *name, char *err, size_t errlen)
{
	if (dev_find(name) || is_vfio_group(name))
		return 0;
	snprintf(err, errlen,
		 "invalid --device '%.80s': use vhost-net, vhost-vsock, urandom, vfio/vfio or "
		 "vfio/N",
		 name);
	return -1;
}

/* The directory DIRFD/NAME, made if missing; an fd, or -1. */
static int subdir(int dirfd, const char *name)
{
	if (mkdirat(dirfd, name, 0755) < 0 && errno != EEXIST)
		return -1;
	return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static int make_node(int devfd, const char *name, uid_t uid, gid_t gid, char *err, size_t errlen)
{
	const struct jail_dev *d = dev_find(name);
	char host[64];
	struct stat st;
	dev_t rdev = d ? makedev(d->major, d->minor) : 0;
	snprintf(host, sizeof(host), "/dev/%s", name);
	if (stat(host, &st) == 0 && S_ISCHR(st.st_mode))
		rdev = st.st_rdev;
	else if (!d) {
		snprintf(err, errlen, "--device %s: the host has no character device %s", name,
			 host);
		return -1;
	}
	int dfd = devfd;
	const char *leaf = name;
	const char *slash = strchr(name, '/');
	if (slash) {
		char dir[16];
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - name), name);
		dfd = subdir(devfd, dir);
		if (dfd < 0) {
			snprintf(err, errlen, "cannot make the jail's /dev/%s: %s", dir,
				 strerror(errno));
			return -1;
		}
		leaf = slash + 1;
	}
	/* The jail is new and root's alone while it is made: a node already
	 * there was made by an earlier --device of the same name. The mode
	 * comes whole from mknodat, under umask 077 (not the directories'):
	 * fchmodat would follow a symlink put in the node's place. */
	mode_t umask_was = umask(077);
	int r = mknodat(dfd, leaf, S_IFCHR | 0600, rdev);
	umask(umask_was);
	if (r == 0)
		r = fchownat(dfd, leaf, uid, gid, AT_SYMLINK_NOFOLLOW);
	else if (errno == EEXIST)
		r = 0;
	int e = errno;
	if (dfd != devfd)
		close(dfd);
	if (r < 0) {
		snprintf(err, errlen, "cannot make the jail's %s: %s", host, strerror(e));
		return -1;
	}
	return 0;
}

int jail_devices_make(int rootfd, const char *const *names, unsigned int n, uid_t uid, gid_t gid,
		      char *err, size_t errlen)
{
	int devfd = subdir(rootfd, "dev");
	int r = 0;
	if (devfd < 0) {
		snprintf(err, errlen, "cannot make the jail's /dev: %s", strerror(errno));
		return -1;
	}
	for (size_t i = 0; r == 0 && i < JAIL_NDEVS; i++)
		if (jail_devs[i].always)
			r = make_node(devfd, jail_devs[i].name, uid, gid, err, errlen);
	for (unsigned int i = 0; r == 0 && i < n; i++) {
		const struct jail_dev *d = dev_find(names[i]);
		if (d && d->always)
			continue;
		r = make_node(devfd, names[i], uid, gid, err, errlen);
	}
	close(devfd);
	return r;
}
