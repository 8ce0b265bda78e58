// SPDX-License-Identifier: Apache-2.0
#include "virtio/vhost.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/vhost.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int vhost_open(struct vhost *vh, const char *path, const char *module, char *err, size_t errlen)
{
	memset(vh, 0, sizeof(*vh));
	vh->fd = open(path, O_RDWR | O_CLOEXEC);
	if (vh->fd < 0) {
		int e = errno;
		char hint[96];
		if (e == EACCES)
			snprintf(hint, sizeof(hint), "read and write access to %s", path);
		else
			snprintf(hint, sizeof(hint), "load the %s module", module);
		snprintf(err, errlen, "cannot open %s: %s (%s)", path, strerror(e), hint);
		return -1;
	}
	if (ioctl(vh->fd, VHOST_SET_OWNER, NULL) < 0 ||
	    ioctl(vh->fd, VHOST_GET_FEATURES, &vh->features) < 0) {
		const char *name = strrchr(path, '/');
		snprintf(err, errlen, "%s setup failed: %s", name ? name + 1 : path,
			 strerror(errno));
		vhost_close(vh);
		return -1;
	}
	return 0;
}

void vhost_close(struct vhost *vh)
{
	if (vh->fd >= 0)
		close(vh->fd);
	vh->fd = -1;
	vh->started = 0;
}

/* The kernel logs only while the log base is set and checked against
 * the memory table: SET_FEATURES with LOG_ALL fails (EFAULT) without. */
static int set_log_base(struct vhost *vh)
{
	uint64_t base = (uint64_t)(uintptr_t)vh->log;
	return ioctl(vh->fd, VHOST_SET_LOG_BASE, &base) < 0 ? -errno : 0;
}

int vhost_set_features(struct vhost *vh, uint64_t features)
{
	vh->acked = features & vh->features & ~(1ull << VHOST_F_LOG_ALL);
	uint64_t f = vh->acked | (vh->log ? 1ull << VHOST_F_LOG_ALL : 0);
	int r = vh->log ? set_log_base(vh) : 0;
	if (r == 0 && ioctl(vh->fd, VHOST_SET_FEATURES, &f) < 0)
		r = -errno;
	return r;
}

int vhost_set_mem(struct vhost *vh, const struct guest_mem *gm)
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
	int r = ioctl(vh->fd, VHOST_SET_MEM_TABLE, m) < 0 ? -errno : 0;
	free(m);
	return r;
}

/* Ring idx's addresses; while logging, with its used ring's GPA: the
 * kernel logs what it writes there by that address. */
static int set_ring_addr(struct vhost *vh, unsigned int idx, const struct virtq *vq)
{
	struct vhost_vring_addr addr = {
	    .index = idx,
	    .flags = vh->log ? 1u << VHOST_VRING_F_LOG : 0,
	    .desc_user_addr = (uint64_t)(uintptr_t)vq->desc,
	    .avail_user_addr = (uint64_t)(uintptr_t)vq->avail,
	    .used_user_addr = (uint64_t)(uintptr_t)vq->used,
	    .log_guest_addr = vh->log ? vq->used_gpa : 0,
	};
	return ioctl(vh->fd, VHOST_SET_VRING_ADDR, &addr) < 0 ? -errno : 0;
}

int vhost_start_ring(struct vhost *vh, unsigned int idx, const struct virtq *vq, int kick_fd,
		     int call_fd)
{
	if (idx >= VHOST_RINGS_MAX)
		return -EINVAL;
	struct vhost_vring_state num = {.index = idx, .num = vq->size};
	/* vhost continues where skiff's shadow index stands. */
	struct vhost_vring_state base = {.index = idx, .num = vq->last_avail_idx};
	struct vhost_vring_file kick = {.index = idx, .fd = kick_fd};
	struct vhost_vring_file call = {.index = idx, .fd = call_fd};
	if (ioctl(vh->fd, VHOST_SET_VRING_NUM, &num) < 0 ||
	    ioctl(vh->fd, VHOST_SET_VRING_BASE, &base) < 0 || set_ring_addr(vh, idx, vq) < 0 ||
	    ioctl(vh->fd, VHOST_SET_VRING_KICK, &kick) < 0 ||
	    ioctl(vh->fd, VHOST_SET_VRING_CALL, &call) < 0)
		return -errno;
	vh->started |= 1u << idx;
	return 0;
}

int vhost_set_log(struct vhost *vh, _Atomic uint64_t *log, const struct virtq *vqs)
{
	if (log && !(vh->features & (1ull << VHOST_F_LOG_ALL)))
		return -EOPNOTSUPP;
	vh->log = log;
	if (!vh->started) /* the next start sets it all */
		return 0;
	/* Features first: from then on the kernel logs the buffers it
	 * writes; then each ring logs its used ring too (QEMU's order). */
	int r = vhost_set_features(vh, vh->acked);
	for (unsigned int i = 0; i < VHOST_RINGS_MAX && r == 0; i++)
		if (vh->started & (1u << i))
			r = set_ring_addr(vh, i, &vqs[i]);
	return r;
}

int vhost_set_busyloop(struct vhost *vh, unsigned int idx, unsigned int usec)
{
	struct vhost_vring_state s = {.index = idx, .num = usec};
	return ioctl(vh->fd, VHOST_SET_VRING_BUSYLOOP_TIMEOUT, &s) < 0 ? -errno : 0;
}

void vhost_stop_ring(struct vhost *vh, unsigned int idx, struct virtq *vq)
{
	if (idx >= VHOST_RINGS_MAX || !(vh->started & (1u << idx)))
		return;
	struct vhost_vring_state base = {.index = idx};
	bool known = ioctl(vh->fd, VHOST_GET_VRING_BASE, &base) == 0;
	if (vq && known)
		virtq_resume_at(vq, (uint16_t)base.num);
	else if (vq)
		virtq_mark_broken(vq, VIRTQ_ERR_DEVICE);
	vh->started &= ~(1u << idx);
}
