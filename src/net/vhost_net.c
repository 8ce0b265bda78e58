// SPDX-License-Identifier: Apache-2.0
#include "net/vhost_net.h"

#include <errno.h>
#include <linux/vhost.h>
#include <sys/ioctl.h>

int vhost_net_open(struct vhost *vh, char *err, size_t errlen)
{
	return vhost_open(vh, "/dev/vhost-net", "vhost_net", err, errlen);
}

int vhost_net_start_ring(struct vhost *vh, unsigned int idx, const struct virtq *vq, int kick_fd,
			 int call_fd, int tap_fd)
{
	struct vhost_vring_file backend = {.index = idx, .fd = tap_fd};
	int r = vhost_start_ring(vh, idx, vq, kick_fd, call_fd);
	if (r == 0 && ioctl(vh->fd, VHOST_NET_SET_BACKEND, &backend) < 0) {
		r = -errno;
		vh->started &= ~(1u << idx); /* without a backend it never ran */
	}
	return r;
}

void vhost_net_stop(struct vhost *vh, struct virtq *vqs)
{
	for (unsigned int i = 0; i < 2; i++) {
		if (!(vh->started & (1u << i)))
			continue;
		struct vhost_vring_file backend = {.index = i, .fd = -1};
		ioctl(vh->fd, VHOST_NET_SET_BACKEND, &backend);
		vhost_stop_ring(vh, i, vqs ? &vqs[i] : NULL);
	}
}
