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
 * TRANSPORT_RESET, follows a snapshot load or a migration, as QEMU's
 * vhost-vsock-common.c sends it after a load (post_load's timer): the
 * streams live in the host kernel, which cannot hand them over, so the
 * guest drops them and reads its CID again. Save, restore, dirty pages
 * and a migration's hand-over: virtio_vsock_vhost_snap.c.
 *
 * Threads: activate and reset on the vCPU that writes the status (the
 * transport serializes them; the ioctls are the kind's vCPU rules,
 * virtio_vsock_sandbox.c), a restart after a save on the I/O thread, the
 * stop on the main thread once the vCPUs have stopped. No thread of its
 * own. */
#include <errno.h>
#include <stdatomic.h>
#include <linux/vhost.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "core/log.h"
#include "devices/virtio-vsock/virtio_vsock_priv.h"
#include "virtio/vhost.h"

#define VV_QSIZE 256 /* as the hybrid's */
#define VV_RINGS 2   /* rx and tx: the kernel's */

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

/* SET_RUNNING 0 first: Linux's vhost_vsock_stop takes each ring from the
 * worker (drivers/vhost/vsock.c), so the positions GET_VRING_BASE then
 * reads are final. */
void vsock_vhost_halt(struct vsock_vhost *v, bool keep)
{
	const struct virtio_transport_ops *t = v->vdev.transport;
	vv_set_running(v, 0);
	for (unsigned int q = 0; q < VV_RINGS; q++) {
		vhost_stop_ring(&v->vh, q, keep ? &v->vdev.vqs[q] : NULL);
		if (t->queue_takeback)
			t->queue_takeback(&v->vdev, q);
	}
	v->running = false;
}

/* The memory table, the features the guest took, the rings and kick_fd /
 * call_fd to the kernel; 0 or -errno. The table first: while vhost logs
 * (vhost.h's log, which vhost-vsock never is given) the features ask
 * for it, which the kernel checks against the table. A feature the kernel lacks (the
 * transport offers its own ring features) is refused rather than left
 * out: the guest would drive the rings by rules the kernel does not
 * follow. */
static int vv_start(struct vsock_vhost *v, const int *kick, const int *call, bool go)
{
	struct virtio_dev *vdev = &v->vdev;
	if (vdev->driver_features & ~v->vh.features)
		return -EOPNOTSUPP;
	int r = vhost_set_mem(&v->vh, vdev->gm);
	if (r == 0)
		r = vhost_set_features(&v->vh, vdev->driver_features);
	for (unsigned int q = 0; q < VV_RINGS && r == 0; q++)
		r = vhost_start_ring(&v->vh, q, &vdev->vqs[q], kick[q], call[q]);
	return r == 0 && go ? vv_set_running(v, 1) : r;
}

/* The rings to the kernel and, with go, running; without (a migration's
 * pre-copy: vv_activate), everything but the running switch, then the
 * rings taken back where skiff has them (the kernel moved nothing): what
 * the kernel would refuse is refused now, and not by the target's
 * restore, which does run them. */
static int vv_run(struct vsock_vhost *v, bool go)
{
	struct virtio_dev *vdev = &v->vdev;
	const struct virtio_transport_ops *t = vdev->transport;
	int kick[VV_RINGS], call[VV_RINGS], r = t->queue_handoff ? 0 : -ENODEV;
	/* A ring the driver did not set up has no addresses to give; a
	 * broken one no position the kernel could go on from (a save whose
	 * GET_VRING_BASE failed: from skiff's old one the guest would get
	 * its buffers twice). */
	for (unsigned int q = 0; q < VV_RINGS && r == 0; q++)
		r = !vdev->vqs[q].enabled || vdev->vqs[q].broken	? -ENXIO
		    : t->queue_handoff(vdev, q, &kick[q], &call[q]) < 0 ? -ENODEV
									: 0;
	if (r == 0)
		r = vv_start(v, kick, call, go);
	if (r < 0 || !go) {
		vsock_vhost_halt(v, false);
		return r;
	}
	v->running = true;
	v->parked = false;
	/* Kicks that came while skiff held the rings (a save's park) were
	 * skiff's: the kernel looks at both rings once now. */
	uint64_t one = 1;
	for (unsigned int q = 0; q < VV_RINGS; q++) {
		ssize_t n = write(kick[q], &one, sizeof(one));
		(void)n; /* fails only if 2^64 - 2 kicks wait: the kernel has one */
	}
	return 0;
}

int vsock_vhost_run(struct vsock_vhost *v)
{
	return vv_run(v, true);
}

void vsock_vhost_evq_run(struct vsock_vhost *v)
{
	if (v->active && v->reset_owed && vsock_evq_reset(&v->vdev, &v->elem, &v->bad_events))
		v->reset_owed = false;
}

static int vv_activate(struct virtio_dev *vdev)
{
	struct vsock_vhost *v = vv_of(vdev);
	pthread_mutex_lock(&v->mu);
	/* A ring broken at DRIVER_OK was restored so (DRIVER_OK itself
	 * activates no broken queue): the source had stopped the device
	 * (vv_queue_notify), and so does this one, until the driver's reset. */
	bool stopped = vdev->vqs[VSOCK_RXQ].broken || vdev->vqs[VSOCK_TXQ].broken;
	int r = v->released ? -EBADF : stopped ? 0 : vv_run(v, !v->quiet);
	v->active = r == 0;
	/* A driver that starts during a migration's pre-copy gets its rings
	 * at the switch's end, or when a failed one lets them go; checked
	 * now all the same (vv_run): an activation passed here is saved as
	 * such, and the target's restore runs it. */
	v->parked = r == 0 && v->quiet && !stopped;
	vsock_vhost_evq_run(v); /* a restored device's reset, at once */
	pthread_mutex_unlock(&v->mu);
	if (r == 0)
		return 0;
	log_once_at(&v->refusal_said, LOG_ERROR,
		    "%s: vhost-vsock cannot run the rings (%s); the device stops", v->name,
		    r == -ENODEV       ? "it needs MSI-X and ioeventfd kicks"
		    : r == -ENXIO      ? "the driver did not set up the rx and tx queues"
		    : r == -EOPNOTSUPP ? "the guest took features the host's vhost lacks"
				       : strerror(-r));
	return -1; /* the transport sets NEEDS_RESET */
}

static void vv_reset(struct virtio_dev *vdev)
{
	struct vsock_vhost *v = vv_of(vdev);
	pthread_mutex_lock(&v->mu);
	if (v->running)
		vsock_vhost_halt(v, false);
	v->active = v->parked = false;
	v->reset_owed = false; /* a driver that starts again has no streams */
	pthread_mutex_unlock(&v->mu);
}

/* Running, rx and tx kicks are the kernel's. Parked by a save, they come
 * here (the save signalled one too): the rings go back to the kernel
 * where they stopped, now that the I/O thread runs again (the save held
 * it until both files were written). The event queue's buffers wait for
 * an owed TRANSPORT_RESET. */
static void vv_queue_notify(struct virtio_dev *vdev, unsigned int q)
{
	struct vsock_vhost *v = vv_of(vdev);
	pthread_mutex_lock(&v->mu);
	if (q != VSOCK_EVQ && v->parked && !v->released && !v->quiet && vsock_vhost_run(v) < 0) {
		log_once_at(&v->refusal_said, LOG_ERROR,
			    "%s: vhost-vsock cannot run the rings again after a snapshot or a "
			    "migration's pre-copy; the device stops",
			    v->name);
		virtq_mark_broken(&vdev->vqs[VSOCK_RXQ], VIRTQ_ERR_DEVICE);
		v->parked = false;
	}
	vsock_vhost_evq_run(v);
	pthread_mutex_unlock(&v->mu);
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
	struct vsock_vhost *v = vv_of(dev);
	pthread_mutex_lock(&v->mu);
	vhost_close(&v->vh);
	pthread_mutex_unlock(&v->mu);
}

static void vv_dev_destroy(void *dev)
{
	struct vsock_vhost *v = vv_of(dev);
	vhost_close(&v->vh);
	pthread_mutex_destroy(&v->mu);
	pthread_mutex_destroy(&v->vdev.lock);
	free(v);
}

static const struct dev_ops vv_dev_ops = {
    .stop = vv_dev_stop,
    .destroy = vv_dev_destroy,
    .save = vsock_vhost_save,
    .restore = vsock_vhost_restore,
    .handover = vsock_vhost_handover,
    .dirty_blind = vsock_vhost_dirty_blind,
    .dirty_stop = vsock_vhost_dirty_stop,
};

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
	snprintf(v->path, sizeof(v->path), "%s", path);
	v->cid = s->cid;
	if (vsock_vhost_open(v, err, errlen) < 0) {
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
	vdev->queue_lock[VSOCK_EVQ] = &v->mu;
	poll_policy_default(&vdev->poll);
	pthread_mutex_init(&vdev->lock, NULL);
	pthread_mutex_init(&v->mu, NULL);
	*ops = &vv_dev_ops;
	return vdev;
}
