// SPDX-License-Identifier: Apache-2.0
#include "net/tap.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define TAP_VNET_HDR_LEN 12 /* struct virtio_net_hdr_v1: virtio 1.x always */

/* Reads a small sysfs attribute of interface NAME as an integer (base 0:
 * tun_flags is "0x1002", ifindex decimal). Returns 0, or -errno. */
static int tap_sysfs_read(const char *name, const char *attr, long *out)
{
	char path[128], buf[32];
	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", name, attr);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	int e = errno;
	close(fd);
	if (n <= 0)
		return n < 0 ? -e : -EINVAL;
	buf[n] = 0;
	char *end;
	errno = 0;
	*out = strtol(buf, &end, 0);
	return errno || end == buf ? -EINVAL : 0;
}

/* The interface must exist and be a tap (tun_flags exists only for tun/tap
 * devices). Gives its ifindex, to check after TUNSETIFF that we attached to
 * it and did not create a new one (it could be deleted in between). In a
 * jail there is no /sys: the flags are then unknown (-1), and TUNSETIFF
 * itself refuses a tun or a queue-mode mismatch. */
static int tap_check_exists(const char *name, long *ifindex, long *flags, char *err, size_t errlen)
{
	*ifindex = (long)if_nametoindex(name);
	if (*ifindex == 0) {
		snprintf(err, errlen,
			 "no network interface '%s' (create it first: ip tuntap add %s mode tap)",
			 name, name);
		return -1;
	}
	if (tap_sysfs_read(name, "tun_flags", flags) < 0) {
		if (access("/sys/class/net", F_OK) < 0) {
			*flags = -1;
			return 0;
		}
		snprintf(err, errlen, "interface '%s' is not a tap device", name);
		return -1;
	}
	if (!(*flags & IFF_TAP)) {
		snprintf(err, errlen, "interface '%s' is a tun (layer 3) device, not a tap", name);
		return -1;
	}
	return 0;
}

static int tap_attach_as(int fd, const char *name, long mq)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | mq;
	return ioctl(fd, TUNSETIFF, &ifr);
}

/* A multi-queue tap only accepts multi-queue attaches (of one queue each:
 * tap_open_queues attaches one fd per queue). FLAGS unknown (-1, no /sys):
 * the other queue mode is tried when the kernel refuses the first, and
 * FLAGS becomes what worked. */
static int tap_attach(int fd, const char *name, long *flags, bool want_mq, char *err, size_t errlen)
{
	if (*flags >= 0 && tap_attach_as(fd, name, *flags & IFF_MULTI_QUEUE) == 0)
		return 0;
	if (*flags < 0) {
		long mq = want_mq ? IFF_MULTI_QUEUE : 0;
		int r = tap_attach_as(fd, name, mq);
		if (r < 0 && errno == EINVAL) {
			mq ^= IFF_MULTI_QUEUE;
			r = tap_attach_as(fd, name, mq);
		}
		if (r == 0) {
			*flags = IFF_TAP | mq;
			return 0;
		}
	}
	switch (errno) {
	case EBUSY:
		snprintf(err, errlen, "tap '%s' is in use by another process or device", name);
		break;
	case EPERM:
		snprintf(err, errlen,
			 "TUNSETIFF on tap '%s': %s (a tap owned by this user, made with "
			 "`ip tuntap add %s mode tap user %u`, or CAP_NET_ADMIN)",
			 name, strerror(errno), name, (unsigned int)geteuid());
		break;
	default:
		snprintf(err, errlen, "cannot attach to tap '%s': %s", name, strerror(errno));
	}
	return -1;
}

/* One more queue (fd) of a tap that exists: attached, the header size
 * set, no offloads. Returns the fd, or -1 with a reason in err. */
static int tap_open_one(const char *name, long ifindex, long *flags, bool want_mq, char *err,
			size_t errlen)
{
	int hdr_len = TAP_VNET_HDR_LEN;
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open /dev/net/tun: %s%s", strerror(errno),
			 errno == EACCES ? " (read and write access to /dev/net/tun)" : "");
		return -1;
	}
	if (tap_attach(fd, name, flags, want_mq, err, errlen) < 0)
		goto fail;
	if ((long)if_nametoindex(name) != ifindex) {
		snprintf(err, errlen, "tap '%s' disappeared while attaching", name);
		goto fail;
	}
	if (ioctl(fd, TUNSETVNETHDRSZ, &hdr_len) < 0) {
		snprintf(err, errlen, "tap '%s': cannot set a %d-byte vnet header: %s", name,
			 hdr_len, strerror(errno));
		goto fail;
	}
	/* No offloads until the guest negotiates them (activate). */
	if (ioctl(fd, TUNSETOFFLOAD, 0UL) < 0) {
		snprintf(err, errlen, "tap '%s': TUNSETOFFLOAD: %s", name, strerror(errno));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

int tap_open_queues(struct tap *t, unsigned int n, const char *name, char *err, size_t errlen)
{
	long ifindex, flags;

	for (unsigned int i = 0; i < n && i < TAP_QUEUES_MAX; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].fd = -1;
	}
	if (n < 1 || n > TAP_QUEUES_MAX) {
		snprintf(err, errlen, "%u tap queues (1..%d)", n, TAP_QUEUES_MAX);
		return -1;
	}
	if (!name[0] || strlen(name) >= IFNAMSIZ || strchr(name, '/')) {
		snprintf(err, errlen, "invalid interface name '%s'", name);
		return -1;
	}
	if (tap_check_exists(name, &ifindex, &flags, err, errlen) < 0)
		return -1;
	for (unsigned int i = 0; i < n; i++) {
		t[i].fd = -1;
		if (n == 1 || flags < 0 || (flags & IFF_MULTI_QUEUE))
			t[i].fd = tap_open_one(name, ifindex, &flags, n > 1, err, errlen);
		/* Unknown flags (no /sys) are known after the first attach. */
		if (n > 1 && flags >= 0 && !(flags & IFF_MULTI_QUEUE)) {
			tap_close(&t[i]);
			snprintf(
			    err, errlen,
			    "tap '%s' was created without multi_queue: queues=%u needs one (ip "
			    "tuntap add %s mode tap multi_queue), or give queues=1",
			    name, n, name);
		}
		if (t[i].fd < 0) {
			while (i--)
				tap_close(&t[i]);
			return -1;
		}
		t[i].is_tun = true;
		t[i].multi_queue = flags & IFF_MULTI_QUEUE;
		snprintf(t[i].name, sizeof(t[i].name), "%s", name);
	}
	return 0;
}

int tap_open(struct tap *t, const char *name, char *err, size_t errlen)
{
	return tap_open_queues(t, 1, name, err, errlen);
}

int tap_is_multi_queue(const char *name)
{
	long flags;
	if (!name[0] || strlen(name) >= IFNAMSIZ || strchr(name, '/') ||
	    tap_sysfs_read(name, "tun_flags", &flags) < 0)
		return -1;
	return (flags & IFF_MULTI_QUEUE) != 0;
}

int tap_set_queue(struct tap *t, bool attach)
{
	if (!t->is_tun || !t->multi_queue)
		return 0;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = attach ? IFF_ATTACH_QUEUE : IFF_DETACH_QUEUE;
	return ioctl(t->fd, TUNSETQUEUE, &ifr) < 0 ? -errno : 0;
}

void tap_from_fd(struct tap *t, int fd)
{
	memset(t, 0, sizeof(*t));
	t->fd = fd;
	t->is_tun = false;
	snprintf(t->name, sizeof(t->name), "fd%d", fd);
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int tap_set_offload(struct tap *t, unsigned int tun_flags)
{
	t->offload = tun_flags;
	if (!t->is_tun)
		return 0;
	return ioctl(t->fd, TUNSETOFFLOAD, (unsigned long)tun_flags) < 0 ? -errno : 0;
}

void tap_close(struct tap *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}
