// SPDX-License-Identifier: Apache-2.0
/* --vsock backend=vhost, as QEMU's vhost-vsock-pci: the host kernel's
 * /dev/vhost-vsock carries the guest's streams, and host programs reach
 * the guest with AF_VSOCK at its CID (the host is CID 2 to it). skiff sets
 * the guest's CID when the device is made, so a CID another VM holds is
 * refused before the guest runs (EADDRINUSE), and at DRIVER_OK hands the
 * kernel the rx and tx rings (virtio/vhost.h) and sets it running; a reset
 * stops it and takes them back, and the stop closes it (the kernel then
 * resets the host's streams to this guest).
 *
 * The event queue stays with skiff and keeps its buffers: its one event,
 * TRANSPORT_RESET, follows a snapshot load or a migration (the hybrid
 * device's virtio_vsock_snap.c), and this device refuses both
 * (dev_ops.no_snapshot): its streams live in the host kernel, which has
 * no way to hand them over.
 *
 * Threads: activate and reset on the vCPU that writes the status (the
 * transport serializes them; the ioctls are the kind's vCPU rules,
 * virtio_vsock_sandbox.c), the stop on the main thread once the vCPUs
 * have stopped. No thread of its own. */
#include <errno.h>
#include <stdatomic.h>
#include <linux/vhost.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "core/log.h"
#include "devices/virtio-vsock/virtio_vsock_priv.h"
#include "virtio/vhost.h"

#define VV_QSIZE 256 /* as the hybrid's */
#define VV_RINGS 2   /* rx and tx: the kernel's */

struct vsock_vhost {
	struct virtio_dev vdev;
	char name[24];
	uint64_t cid;
	struct vhost vh;
	bool running;		  /* the rings are the kernel's: activate to reset */
	atomic_bool refusal_said; /* the guest decides how often activate runs */
};

static struct vsock_vhost *vv_of(struct virtio_dev *vdev)
{
	return vdev->priv;
}

static void vv_config_read(struct virtio_dev *vdev, uint32_t offset, void *buf, uint32_t len)
{
	virtio_vsock_config_cid(vv_of(vdev)->cid, offset, buf, len);
}

static void vv_config_write(struct virtio_dev *vdev, uint32_t offset, const void *buf, uint32_t len)
{
	(void)vdev, (void)offset, (void)buf, (void)len; /* read-only */
}

static int vv_set_running(struct vsock_vhost *v, int on)
{
	return ioctl(v->vh.fd, VHOST_VSOCK_SET_RUNNING, &on) < 0 ? -errno : 0;
}

/* The kernel lets go of both rings (they reset next) and skiff's I/O
 * thread takes their kicks back. */
static void vv_halt(struct vsock_vhost *v)
{
	const struct virtio_transport_ops *t = v->vdev.transport;
	vv_set_running(v, 0);
	for (unsigned int q = 0; q < VV_RINGS; q++) {
		vhost_stop_ring(&v->vh, q, NULL);
		if (t->queue_takeback)
			t->queue_takeback(&v->vdev, q);
	}
	v->running = false;
}

/* The rings, the memory table and the features the guest took, to the
 * kernel; 0 or -errno. A feature the kernel lacks (the transport offers
 * its own ring features) is refused rather than left out: the guest
 * would drive the rings by rules the kernel does not follow. */
static int vv_start(struct vsock_vhost *v, const int *kick, const int *call)
{
	struct virtio_dev *vdev = &v->vdev;
	if (vdev->driver_features & ~v->vh.features)
		return -EOPNOTSUPP;
	int r = vhost_set_features(&v->vh, vdev->driver_features);
	if (r == 0)
		r = vhost_set_mem(&v->vh, vdev->gm);
	for (unsigned int q = 0; q < VV_RINGS && r == 0; q++)
		r = vhost_start_ring(&v->vh, q, &vdev->vqs[q], kick[q], call[q]);
	return r == 0 ? vv_set_running(v, 1) : r;
}

static int vv_activate(struct virtio_dev *vdev)
{
	struct vsock_vhost *v = vv_of(vdev);
	const struct virtio_transport_ops *t = vdev->transport;
	int kick[VV_RINGS], call[VV_RINGS], r = t->queue_handoff ? 0 : -ENODEV;
	/* A ring the driver did not set up has no addresses to give. */
	for (unsigned int q = 0; q < VV_RINGS && r == 0; q++)
		r = !vdev->vqs[q].enabled				? -ENXIO
		    : t->queue_handoff(vdev, q, &kick[q], &call[q]) < 0 ? -ENODEV
									: 0;
	if (r == 0)
		r = vv_start(v, kick, call);
	if (r == 0) {
		v->running = true;
		return 0;
	}
	log_once_at(&v->refusal_said, LOG_ERROR,
		    "%s: vhost-vsock cannot run the rings (%s); the device stops", v->name,
		    r == -ENODEV       ? "it needs MSI-X and ioeventfd kicks"
		    : r == -ENXIO      ? "the driver did not set up the rx and tx queues"
		    : r == -EOPNOTSUPP ? "the guest took features the host's vhost lacks"
				       : strerror(-r));
	vv_halt(v);
	return -1; /* the transport sets NEEDS_RESET */
}

static void vv_reset(struct virtio_dev *vdev)
{
	struct vsock_vhost *v = vv_of(vdev);
	if (v->running)
		vv_halt(v);
}

/* rx and tx kicks are the kernel's once running; the event queue's
 * buffers wait for an event this device never owes. */
static void vv_queue_notify(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev, (void)q;
}

static const struct virtio_dev_ops vv_ops = {
    .config_read = vv_config_read,
    .config_write = vv_config_write,
    .activate = vv_activate,
    .reset = vv_reset,
    .queue_notify = vv_queue_notify,
};

/* The vCPUs have stopped: closing the fd stops the kernel's worker
 * (it flushes first), so guest memory is untouched from here. */
static void vv_dev_stop(void *dev)
{
	vhost_close(&vv_of(dev)->vh);
}

static void vv_dev_destroy(void *dev)
{
	struct vsock_vhost *v = vv_of(dev);
	vhost_close(&v->vh);
	pthread_mutex_destroy(&v->vdev.lock);
	free(v);
}

static const struct dev_ops vv_dev_ops = {
    .stop = vv_dev_stop,
    .destroy = vv_dev_destroy,
    .no_snapshot = VSOCK_VHOST_NO_SNAPSHOT,
};

/* VHOST_VSOCK_SET_GUEST_CID: 0, or -1 with why. */
static int vv_set_cid(struct vsock_vhost *v, char *err, size_t errlen)
{
	uint64_t cid = v->cid;
	if (ioctl(v->vh.fd, VHOST_VSOCK_SET_GUEST_CID, &cid) == 0)
		return 0;
	if (errno == EADDRINUSE)
		snprintf(err, errlen, "guest CID %llu is in use on this host (another VM has it)",
			 (unsigned long long)cid);
	else
		snprintf(err, errlen, "vhost-vsock refused guest CID %llu: %s",
			 (unsigned long long)cid, strerror(errno));
	return -1;
}

struct virtio_dev *virtio_vsock_vhost_create(const char *name, const struct vsock_spec *s,
					     const char *path, const struct dev_ops **ops,
					     char *err, size_t errlen)
{
	struct vsock_vhost *v = calloc(1, sizeof(*v));
	if (!v) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(v->name, sizeof(v->name), "%s", name);
	v->cid = s->cid;
	if (vhost_open(&v->vh, path, "vhost_vsock", err, errlen) < 0) {
		free(v);
		return NULL;
	}
	if (vv_set_cid(v, err, errlen) < 0) {
		vhost_close(&v->vh);
		free(v);
		return NULL;
	}
	struct virtio_dev *vdev = &v->vdev;
	vdev->name = v->name;
	vdev->device_id = VIRTIO_ID_VSOCK;
	vdev->host_features = 0; /* STREAM only, as the hybrid device */
	vdev->config_len = sizeof(struct virtio_vsock_config);
	vdev->num_queues = VSOCK_NR_QUEUES;
	vdev->msix_vectors = VSOCK_MSIX_VECTORS;
	vdev->queue_max_size = VV_QSIZE;
	vdev->ops = &vv_ops;
	vdev->priv = v;
	poll_policy_default(&vdev->poll);
	pthread_mutex_init(&vdev->lock, NULL);
	*ops = &vv_dev_ops;
	return vdev;
}
