// SPDX-License-Identifier: Apache-2.0
#include "net/vhost_net.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/vhost.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int vhost_net_open(struct vhost_net *vn, char *err, size_t errlen)
{
	memset(vn, 0, sizeof(*vn));
	vn->fd = open("/dev/vhost-net", O_RDWR | O_CLOEXEC);
	if (vn->fd < 0) {
		snprintf(err, errlen, "cannot open /dev/vhost-net: %s (%s)", strerror(errno),
			 errno == EACCES ? "read and write access to /dev/vhost-net"
					 : "load the vhost_net module");
		return -1;
	}
	if (ioctl(vn->fd, VHOST_SET_OWNER, NULL) < 0 ||
	    ioctl(vn->fd, VHOST_GET_FEATURES, &vn->features) < 0) {
		snprintf(err, errlen, "vhost-net setup failed: %s", strerror(errno));
		close(vn->fd);
		vn->fd = -1;
		return -1;
	}
	return 0;
}

void vhost_net_close(struct vhost_net *vn)
{
	if (vn->fd >= 0)
		close(vn->fd);
	vn->fd = -1;
}

int vhost_net_set_features(struct vhost_net *vn, uint64_t features)
{
	uint64_t f = features & vn->features;
	return ioctl(vn->fd, VHOST_SET_FEATURES, &f) < 0 ? -errno : 0;
}

int vhost_net_set_mem(struct vhost_net *vn, const struct guest_mem *gm)
{
	struct vhost_memory *m = calloc(1, sizeof(*m) + 2 * sizeof(struct vhost_memory_region));
	if (!m)
		return -ENOMEM;
	m->regions[0] = (struct vhost_memory_region){
	    .guest_phys_addr = 0,
	    .memory_size = gm->low_size,
	    .userspace_addr = (uint64_t)(uintptr_t)gm->host,
	};
	m->nregions = 1;
	if (gm->size > gm->low_size) {
		m->regions[1] = (struct vhost_memory_region){
		    .guest_phys_addr = GUEST_MEM_HIGH_BASE,
		    .memory_size = gm->size - gm->low_size,
		    .userspace_addr = (uint64_t)(uintptr_t)(gm->host + gm->low_size),
		};
		m->nregions = 2;
	}
	int r = ioctl(vn->fd, VHOST_SET_MEM_TABLE, m) < 0 ? -errno : 0;
	free(m);
	return r;
}

int vhost_net_start_ring(struct vhost_net *vn, unsigned int idx, const struct virtq *vq,
			 int kick_fd, int call_fd, int tap_fd)
{
	struct vhost_vring_state num = {.index = idx, .num = vq->size};
	/* vhost continues where skiff's shadow index stands. */
	struct vhost_vring_state base = {.index = idx, .num = vq->last_avail_idx};
	struct vhost_vring_addr addr = {
	    .index = idx,
	    .desc_user_addr = (uint64_t)(uintptr_t)vq->desc,
	    .avail_user_addr = (uint64_t)(uintptr_t)vq->avail,
	    .used_user_addr = (uint64_t)(uintptr_t)vq->used,
	};
	struct vhost_vring_file kick = {.index = idx, .fd = kick_fd};
	struct vhost_vring_file call = {.index = idx, .fd = call_fd};
	struct vhost_vring_file backend = {.index = idx, .fd = tap_fd};
	if (ioctl(vn->fd, VHOST_SET_VRING_NUM, &num) < 0 ||
	    ioctl(vn->fd, VHOST_SET_VRING_BASE, &base) < 0 ||
	    ioctl(vn->fd, VHOST_SET_VRING_ADDR, &addr) < 0 ||
	    ioctl(vn->fd, VHOST_SET_VRING_KICK, &kick) < 0 ||
	    ioctl(vn->fd, VHOST_SET_VRING_CALL, &call) < 0 ||
	    ioctl(vn->fd, VHOST_NET_SET_BACKEND, &backend) < 0)
		return -errno;
	if (idx < 2)
		vn->started[idx] = 1;
	return 0;
}

int vhost_net_set_busyloop(struct vhost_net *vn, unsigned int idx, unsigned int usec)
{
	struct vhost_vring_state s = {.index = idx, .num = usec};
	return ioctl(vn->fd, VHOST_SET_VRING_BUSYLOOP_TIMEOUT, &s) < 0 ? -errno : 0;
}

void vhost_net_stop(struct vhost_net *vn, struct virtq *vqs)
{
	for (unsigned int i = 0; i < 2; i++) {
		if (!vn->started[i])
			continue;
		struct vhost_vring_file backend = {.index = i, .fd = -1};
		struct vhost_vring_state base = {.index = i};
		ioctl(vn->fd, VHOST_NET_SET_BACKEND, &backend);
		bool known = ioctl(vn->fd, VHOST_GET_VRING_BASE, &base) == 0;
		if (vqs && known)
			virtq_resume_at(&vqs[i], (uint16_t)base.num);
		else if (vqs)
			virtq_mark_broken(&vqs[i], VIRTQ_ERR_DEVICE);
		vn->started[i] = 0;
	}
}
