// SPDX-License-Identifier: Apache-2.0
/* virtio-pci common configuration (virtio 1.2 §4.1.4.3): feature
 * negotiation, the device status state machine, queue configuration and
 * reset. Everything here runs on vCPU threads under vp->lock; what the I/O
 * thread reads (vectors, live flags, status) is atomic. */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "virtio/virtio_pci_impl.h"

struct vp_field {
	uint16_t off;
	uint8_t width;
	const char *name; /* for exit accounting */
};

static const struct vp_field vp_fields[] = {
    {VP_DFSELECT, 4, "common device_feature_select"},
    {VP_DF, 4, "common device_feature"},
    {VP_GFSELECT, 4, "common driver_feature_select"},
    {VP_GF, 4, "common driver_feature"},
    {VP_MSIX_CONFIG, 2, "common config_msix_vector"},
    {VP_NUM_QUEUES, 2, "common num_queues"},
    {VP_STATUS, 1, "common device_status"},
    {VP_CFG_GENERATION, 1, "common config_generation"},
    {VP_Q_SELECT, 2, "common queue_select"},
    {VP_Q_SIZE, 2, "common queue_size"},
    {VP_Q_MSIX, 2, "common queue_msix_vector"},
    {VP_Q_ENABLE, 2, "common queue_enable"},
    {VP_Q_NOFF, 2, "common queue_notify_off"},
    {VP_Q_DESC, 8, "common queue_desc"},
    {VP_Q_DRIVER, 8, "common queue_driver"},
    {VP_Q_DEVICE, 8, "common queue_device"},
};

static const struct vp_field *field_at(uint32_t off)
{
	for (size_t i = 0; i < sizeof(vp_fields) / sizeof(vp_fields[0]); i++)
		if (off >= vp_fields[i].off && off < vp_fields[i].off + vp_fields[i].width)
			return &vp_fields[i];
	return NULL;
}

const char *vp_common_reg_name(uint32_t off)
{
	const struct vp_field *f = field_at(off);
	return f ? f->name : "common";
}

void vp_log(struct virtio_pci *vp, const char *what)
{
	log_rl_at(&vp->log_rl, LOG_WARN, "%s: %s", vp->vdev->name, what);
}

/* The selected queue, or NULL if queue_select is out of range. */
static struct virtio_pci_queue *selected(struct virtio_pci *vp)
{
	return vp->queue_select < vp->vdev->num_queues ? &vp->q[vp->queue_select] : NULL;
}

/* A vector the driver may use: one in the MSI-X table, or NO_VECTOR (the
 * driver reads it back and sees the refusal). */
static uint16_t vector_check(struct virtio_pci *vp, uint64_t v)
{
	return v < vp_msix_vectors(vp->vdev) ? (uint16_t)v : VIRTIO_MSI_NO_VECTOR;
}

static uint64_t common_get(struct virtio_pci *vp, uint32_t field)
{
	struct virtio_dev *vdev = vp->vdev;
	struct virtio_pci_queue *q = selected(vp);
	const struct virtq *vq = q ? &vdev->vqs[q->index] : NULL;
	switch (field) {
	case VP_DFSELECT:
		return vp->dfselect;
	case VP_DF:
		return vp->dfselect < 2 ? (uint32_t)(vp->offered >> (32 * vp->dfselect)) : 0;
	case VP_GFSELECT:
		return vp->gfselect;
	case VP_GF:
		return vp->gfselect < 2 ? (uint32_t)(vp->guest_features >> (32 * vp->gfselect)) : 0;
	case VP_MSIX_CONFIG:
		return atomic_load(&vp->config_vector);
	case VP_NUM_QUEUES:
		return vdev->num_queues;
	case VP_STATUS:
		return atomic_load(&vdev->status);
	case VP_CFG_GENERATION:
		return (uint8_t)atomic_load(&vdev->config_generation);
	case VP_Q_SELECT:
		return vp->queue_select;
	case VP_Q_SIZE:
		return vq ? vq->size : 0; /* 0: no such queue */
	case VP_Q_MSIX:
		return q ? atomic_load(&q->vector) : VIRTIO_MSI_NO_VECTOR;
	case VP_Q_ENABLE:
		return q ? q->enable : 0;
	case VP_Q_NOFF:
		return q ? q->index : 0;
	case VP_Q_DESC:
		return vq ? vq->desc_gpa : 0;
	case VP_Q_DRIVER:
		return vq ? vq->avail_gpa : 0;
	case VP_Q_DEVICE:
		return vq ? vq->used_gpa : 0;
	}
	return 0;
}

static bool features_acceptable(struct virtio_pci *vp)
{
	if (!(vp->guest_features & (1ULL << VIRTIO_F_VERSION_1))) {
		vp_log(vp, "driver did not accept VERSION_1 (legacy drivers are not supported); "
			   "FEATURES_OK refused");
		return false;
	}
	if (vp->guest_features & ~vp->offered) {
		vp_log(vp, "driver accepted features that were not offered; FEATURES_OK refused");
		return false;
	}
	return true;
}

/* Activates the enabled queues with the negotiated features, then the
 * device. On failure the queue or the device is left for NEEDS_RESET. */
static bool vp_activate(struct virtio_pci *vp)
{
	struct virtio_dev *vdev = vp->vdev;
	bool ok = true;
	for (unsigned int i = 0; i < vdev->num_queues; i++) {
		if (!vp->q[i].enable)
			continue;
		struct virtq *vq = &vdev->vqs[i];
		if (virtq_set_features(vq, vdev->driver_features) < 0 ||
		    virtq_activate(vq, vdev->gm) < 0)
			ok = false;
	}
	if (ok && vdev->ops->activate && vdev->ops->activate(vdev) < 0) {
		vp_log(vp, "device activation failed");
		ok = false;
	}
	if (!ok)
		return false;
	for (unsigned int i = 0; i < vdev->num_queues; i++)
		if (vp->q[i].enable)
			atomic_store(&vp->q[i].live, true);
	atomic_store(&vp->live, true);
	return true;
}

/* Status only grows, one step at a time (virtio 1.2 §3.1.1); writing 0
 * resets. Bits set out of order are dropped and the driver sees that when
 * it reads status back. NEEDS_RESET belongs to the device. */
static void status_write(struct virtio_pci *vp, uint8_t val)
{
	struct virtio_dev *vdev = vp->vdev;
	if (val == 0) {
		vp_reset(vp);
		return;
	}
	uint8_t old = atomic_load(&vdev->status), next = old;
	uint8_t want = val & ~VIRTIO_STATUS_NEEDS_RESET;
	if (old & ~want & ~VIRTIO_STATUS_NEEDS_RESET)
		vp_log(vp, "driver cleared status bits without a reset; ignored");
	if (want & VIRTIO_STATUS_FAILED)
		next |= VIRTIO_STATUS_FAILED;
	if (want & VIRTIO_STATUS_ACKNOWLEDGE)
		next |= VIRTIO_STATUS_ACKNOWLEDGE;
	if (want & VIRTIO_STATUS_DRIVER) {
		if (next & VIRTIO_STATUS_ACKNOWLEDGE)
			next |= VIRTIO_STATUS_DRIVER;
		else
			vp_log(vp, "DRIVER without ACKNOWLEDGE; ignored");
	}
	if ((want & VIRTIO_STATUS_FEATURES_OK) && !(old & VIRTIO_STATUS_FEATURES_OK)) {
		if (!(next & VIRTIO_STATUS_DRIVER)) {
			vp_log(vp, "FEATURES_OK without DRIVER; ignored");
		} else if (features_acceptable(vp)) {
			next |= VIRTIO_STATUS_FEATURES_OK;
			vdev->driver_features = vp->guest_features;
		}
	}
	bool go = (want & VIRTIO_STATUS_DRIVER_OK) && !(old & VIRTIO_STATUS_DRIVER_OK);
	if (go && (!(next & VIRTIO_STATUS_FEATURES_OK) || (next & VIRTIO_STATUS_FAILED))) {
		vp_log(vp, "DRIVER_OK without FEATURES_OK; ignored");
		go = false;
	}
	atomic_fetch_or(&vdev->status, (uint8_t)(next & ~old));
	if (go) {
		bool ok = vp_activate(vp);
		atomic_fetch_or(&vdev->status, VIRTIO_STATUS_DRIVER_OK);
		if (!ok)
			virtio_dev_needs_reset(vdev);
	}
}

/* Queue configuration is frozen from DRIVER_OK on: the I/O thread may be
 * using the queues, and the virtq layer refuses changes to live queues
 * anyway. The transport only ever changes queues through virtq_set_*. */
static bool queue_writable(struct virtio_pci *vp)
{
	if (!(atomic_load(&vp->vdev->status) & VIRTIO_STATUS_DRIVER_OK))
		return true;
	vp_log(vp, "queue configuration written after DRIVER_OK; ignored");
	return false;
}

static void common_set(struct virtio_pci *vp, uint32_t field, uint64_t v)
{
	struct virtio_pci_queue *q = selected(vp);
	struct virtq *vq = q ? &vp->vdev->vqs[q->index] : NULL;
	switch (field) {
	case VP_DFSELECT:
		vp->dfselect = (uint32_t)v;
		break;
	case VP_GFSELECT:
		vp->gfselect = (uint32_t)v;
		break;
	case VP_GF:
		if (atomic_load(&vp->vdev->status) & VIRTIO_STATUS_FEATURES_OK) {
			vp_log(vp, "driver_feature written after FEATURES_OK; ignored");
		} else if (vp->gfselect < 2) {
			unsigned int shift = 32 * vp->gfselect;
			vp->guest_features &= ~(0xffffffffULL << shift);
			vp->guest_features |= (v & 0xffffffffULL) << shift;
		}
		break;
	case VP_MSIX_CONFIG:
		atomic_store(&vp->config_vector, vector_check(vp, v));
		break;
	case VP_STATUS:
		status_write(vp, (uint8_t)v);
		break;
	case VP_Q_SELECT:
		vp->queue_select = (uint16_t)v;
		break;
	case VP_Q_SIZE:
		if (vq && queue_writable(vp))
			virtq_set_size(vq, (uint32_t)v);
		break;
	case VP_Q_MSIX:
		if (q)
			vp_queue_set_vector(q, vector_check(vp, v));
		break;
	case VP_Q_ENABLE:
		/* Only 1 means anything; a queue is disabled by reset. */
		if (q && v == 1 && queue_writable(vp))
			q->enable = true;
		break;
	case VP_Q_DESC:
		if (vq && queue_writable(vp))
			virtq_set_addr(vq, VIRTQ_RING_DESC, v);
		break;
	case VP_Q_DRIVER:
		if (vq && queue_writable(vp))
			virtq_set_addr(vq, VIRTQ_RING_AVAIL, v);
		break;
	case VP_Q_DEVICE:
		if (vq && queue_writable(vp))
			virtq_set_addr(vq, VIRTQ_RING_USED, v);
		break;
	default: /* read-only fields */
		break;
	}
}

/* The driver accesses each field with its own width; 64-bit fields may
 * also be accessed as two 32-bit halves (virtio 1.2 §4.1.3.1). Other
 * accesses read as 0 and are otherwise ignored. */
static const struct vp_field *access_field(uint32_t off, uint32_t len)
{
	const struct vp_field *f = field_at(off);
	if (!f)
		return NULL;
	if (off == f->off && len == f->width)
		return f;
	if (f->width == 8 && len == 4 && (off - f->off) % 4 == 0)
		return f;
	return NULL;
}

void vp_common_read(struct virtio_pci *vp, uint32_t off, uint8_t *data, uint32_t len)
{
	memset(data, 0, len);
	const struct vp_field *f = access_field(off, len);
	if (!f)
		return;
	uint64_t v = common_get(vp, f->off);
	memcpy(data, (uint8_t *)&v + (off - f->off), len);
}

void vp_common_write(struct virtio_pci *vp, uint32_t off, const uint8_t *data, uint32_t len)
{
	const struct vp_field *f = access_field(off, len);
	if (!f)
		return;
	uint64_t v = 0;
	if (len < f->width) /* a half of a 64-bit field: merge with the rest */
		v = common_get(vp, f->off);
	memcpy((uint8_t *)&v + (off - f->off), data, len);
	common_set(vp, f->off, v);
}

void vp_reset(struct virtio_pci *vp)
{
	struct virtio_dev *vdev = vp->vdev;
	/* No new kicks or poller work reach the device; wait out what is in
	 * progress (seq_cst pairs with vp_work_enter: work that saw live is
	 * counted), as the rings are reset below. */
	atomic_store(&vp->live, false);
	for (unsigned int i = 0; i < vdev->num_queues; i++)
		atomic_store(&vp->q[i].live, false);
	while (atomic_load(&vp->kicks_inflight))
		sched_yield();
	if (vdev->ops->reset)
		vdev->ops->reset(vdev); /* returns when the device is quiet */
	for (unsigned int i = 0; i < vdev->num_queues; i++) {
		virtq_reset(&vdev->vqs[i]);
		vp->q[i].enable = false;
		vp_queue_set_vector(&vp->q[i], VIRTIO_MSI_NO_VECTOR);
	}
	vp->dfselect = vp->gfselect = 0;
	vp->guest_features = 0;
	vdev->driver_features = 0;
	vp->queue_select = 0;
	atomic_store(&vp->config_vector, VIRTIO_MSI_NO_VECTOR);
	vp_isr_clear(vp);
	/* Last: a driver polling status for 0 sees the reset complete. */
	atomic_store(&vdev->status, 0);
}
