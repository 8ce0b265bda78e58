// SPDX-License-Identifier: Apache-2.0
/* The guest driver's side of a virtio-pci device, for unit tests that
 * drive the real transport: the common config window, the status
 * handshake, queue set-up, and split rings in fake RAM with queue q's at
 * base + q * 0x1000 (descriptors, avail at +0x400, used at +0x800), each
 * chain's buffers taken from a bump allocator. */
#ifndef SKIFF_TEST_VP_DRIVER_H
#define SKIFF_TEST_VP_DRIVER_H

#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "fake_mem.h"
#include "fake_pci_host.h"
#include "virtio/virtio_pci.h"
#include "virtio/virtio_pci_impl.h"

#define VPD_MAXQ 8

struct vp_driver {
	struct bus *trap;
	struct fake_mem *fm;
	struct virtio_pci *vp;
	uint64_t bar;	   /* the device's BAR (VP_BAR) */
	uint64_t ring_gpa; /* queue q's rings at ring_gpa + q * 0x1000 */
	uint64_t next_buf; /* the next buffer's guest address */
	uint16_t qsz;
	uint16_t avail_idx[VPD_MAXQ], next_desc[VPD_MAXQ];
};

static inline void vpd_cw(const struct vp_driver *d, uint32_t off, uint32_t len, uint64_t v)
{
	mmio_wr(d->trap, d->bar + VP_COMMON_OFF + off, len, v);
}

static inline uint8_t vpd_status(const struct vp_driver *d)
{
	return (uint8_t)mmio_rd(d->trap, d->bar + VP_COMMON_OFF + VP_STATUS, 1);
}

static inline uint64_t vpd_desc_gpa(const struct vp_driver *d, unsigned int q)
{
	return d->ring_gpa + 0x1000 * (uint64_t)q;
}

static inline uint64_t vpd_avail_gpa(const struct vp_driver *d, unsigned int q)
{
	return vpd_desc_gpa(d, q) + 0x400;
}

static inline uint64_t vpd_used_gpa(const struct vp_driver *d, unsigned int q)
{
	return vpd_desc_gpa(d, q) + 0x800;
}

static inline uint16_t vpd_used_idx(const struct vp_driver *d, unsigned int q)
{
	return __atomic_load_n((uint16_t *)fake_mem_at(d->fm, vpd_used_gpa(d, q) + 2),
			       __ATOMIC_ACQUIRE);
}

/* ACKNOWLEDGE, DRIVER, the features written, FEATURES_OK. */
static inline void vpd_negotiate(const struct vp_driver *d, uint64_t feat)
{
	vpd_cw(d, VP_STATUS, 1, VIRTIO_STATUS_ACKNOWLEDGE);
	vpd_cw(d, VP_STATUS, 1, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
	vpd_cw(d, VP_GFSELECT, 4, 0);
	vpd_cw(d, VP_GF, 4, (uint32_t)feat);
	vpd_cw(d, VP_GFSELECT, 4, 1);
	vpd_cw(d, VP_GF, 4, feat >> 32);
	vpd_cw(d, VP_STATUS, 1, vpd_status(d) | VIRTIO_STATUS_FEATURES_OK);
}

/* Queue q: its size, its rings where the layout above puts them, vector
 * vec (VIRTIO_MSI_NO_VECTOR for none), enabled. */
static inline void vpd_queue(const struct vp_driver *d, unsigned int q, uint16_t vec)
{
	vpd_cw(d, VP_Q_SELECT, 2, q);
	vpd_cw(d, VP_Q_SIZE, 2, d->qsz);
	vpd_cw(d, VP_Q_DESC, 8, vpd_desc_gpa(d, q));
	vpd_cw(d, VP_Q_DRIVER, 8, vpd_avail_gpa(d, q));
	vpd_cw(d, VP_Q_DEVICE, 8, vpd_used_gpa(d, q));
	vpd_cw(d, VP_Q_MSIX, 2, vec);
	vpd_cw(d, VP_Q_ENABLE, 2, 1);
}

/* DRIVER_OK, and the device took it. */
static inline void vpd_driver_ok(const struct vp_driver *d)
{
	vpd_cw(d, VP_STATUS, 1, vpd_status(d) | VIRTIO_STATUS_DRIVER_OK);
	assert_int_equal(vpd_status(d), 0x0f);
}

/* Posts a chain of cnt buffers (lens, flags each) on queue q and makes it
 * available; returns their guest addresses in gpas. */
static inline void vpd_post(struct vp_driver *d, unsigned int q, const uint32_t *lens,
			    const uint16_t *flags, unsigned int cnt, uint64_t *gpas)
{
	uint16_t head = d->next_desc[q] % d->qsz;
	for (unsigned int i = 0; i < cnt; i++) {
		uint16_t idx = d->next_desc[q]++ % d->qsz;
		gpas[i] = d->next_buf;
		d->next_buf += (lens[i] + 63) & ~63u;
		struct virtq_desc v = {.addr = gpas[i],
				       .len = lens[i],
				       .flags = flags[i] | (i + 1 < cnt ? VIRTQ_DESC_F_NEXT : 0),
				       .next = (uint16_t)((idx + 1) % d->qsz)};
		memcpy(fake_mem_at(d->fm, vpd_desc_gpa(d, q) + 16 * (uint64_t)idx), &v, sizeof(v));
	}
	uint16_t old = d->avail_idx[q];
	*(uint16_t *)fake_mem_at(d->fm, vpd_avail_gpa(d, q) + 4 + 2 * (uint64_t)(old % d->qsz)) =
	    head;
	d->avail_idx[q] = (uint16_t)(old + 1);
	__atomic_store_n((uint16_t *)fake_mem_at(d->fm, vpd_avail_gpa(d, q) + 2), d->avail_idx[q],
			 __ATOMIC_RELEASE);
}

/* Posts one buffer of len bytes on queue q (device-writable if w). */
static inline uint64_t vpd_post1(struct vp_driver *d, unsigned int q, uint32_t len, bool w)
{
	uint16_t flags = w ? VIRTQ_DESC_F_WRITE : 0;
	uint64_t gpa;
	vpd_post(d, q, &len, &flags, 1, &gpa);
	return gpa;
}

/* The guest's notify write reached queue q's ioeventfd; the I/O thread
 * handles it. */
static inline void vpd_kick(const struct vp_driver *d, unsigned int q)
{
	uint64_t one = 1;
	assert_int_equal(write(d->vp->q[q].kick_fd, &one, sizeof(one)), sizeof(one));
	vp_kick_ready(&d->vp->q[q], EPOLLIN);
}

#endif
