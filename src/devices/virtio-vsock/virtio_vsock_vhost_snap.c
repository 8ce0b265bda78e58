// SPDX-License-Identifier: Apache-2.0
/* backend=vhost in a snapshot and a live migration (docs/SNAPSHOT.md,
 * docs/MIGRATION.md), as QEMU's vhost-vsock: the guest's streams are the
 * host kernel's and cannot move, so the state is the hybrid's (the guest
 * CID: vsock_snap_put) and after a load the guest gets a
 * TRANSPORT_RESET (vsock_evq_reset; QEMU's
 * vhost_vsock_common_post_load), drops its connections and reads its CID
 * again (Linux's virtio_vsock_event_handle).
 *
 *  - Save (controller, VM paused, I/O threads held): as QEMU's pre_save
 *    wants the backend stopped, the rings are stopped and their positions
 *    taken into the virtqs for the transport's save (virtio-net's
 *    vhost_park does the same); their kicks come back to skiff, and one
 *    is signalled, so that the I/O thread, once the save lets it go,
 *    hands the rings back to the kernel where they stopped
 *    (vv_queue_notify). The kernel writes nothing in between: the state
 *    and the memory agree.
 *  - Load: the device is made afresh (a new /dev/vhost-vsock, the CID set
 *    there), and the transport's restore activates it at the saved
 *    positions; the restore owes the reset, sent at that activate.
 *  - Dirty pages: the kernel writes received packets into guest memory
 *    and logs none of them, whatever the log base and VHOST_F_LOG_ALL
 *    (Linux's drivers/vhost/vsock.c fetches rx buffers with no log and
 *    never calls vhost_log_write; vhost-net does both: review8's finding,
 *    shown by the testbed's vhost-vsock-diff). So a Diff snapshot is
 *    refused (tracking lasts the VM's life), and a migration's pre-copy
 *    stops the rings instead (dirty_stop): the guest's vsock traffic
 *    waits until the switch, whose reset ends its streams anyway, or,
 *    if the migration fails, goes on.
 *  - Switch (one host: the target cannot take the CID while the source
 *    holds it: EADDRINUSE in Linux's vhost_vsock_set_cid): the source,
 *    paused and saved, closes its /dev/vhost-vsock; the kernel resets the
 *    host's streams to this CID and frees it (vhost_vsock_dev_release),
 *    and the target, which builds its devices after RELEASED, sets it. A
 *    failed switch reopens the node, sets the CID again (a few tries
 *    while the target's process lets go: vmm_mig_send.c's take_back),
 *    restarts the rings and owes the guest a reset: its host streams are
 *    gone. */
#include <errno.h>
#include <linux/vhost.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "devices/virtio-vsock/virtio_vsock_priv.h"

int vsock_vhost_open(struct vsock_vhost *v, char *err, size_t errlen)
{
	if (vhost_open(&v->vh, v->path, "vhost_vsock", err, errlen) < 0)
		return -1;
	uint64_t cid = v->cid;
	if (ioctl(v->vh.fd, VHOST_VSOCK_SET_GUEST_CID, &cid) == 0)
		return 0;
	if (errno == EADDRINUSE)
		snprintf(err, errlen, "guest CID %llu is in use on this host (another VM has it)",
			 (unsigned long long)cid);
	else
		snprintf(err, errlen, "vhost-vsock refused guest CID %llu: %s",
			 (unsigned long long)cid, strerror(errno));
	vhost_close(&v->vh);
	return -1;
}

/* The rx queue's kick, as if the guest had kicked: the I/O thread's
 * queue_notify restarts the rings once it runs (a test's transport may
 * have none: then its kick does). */
static void vv_resched(struct vsock_vhost *v)
{
	const struct virtio_transport_ops *t = v->vdev.transport;
	if (t->queue_resched)
		t->queue_resched(&v->vdev, VSOCK_RXQ);
}

int vsock_vhost_save(void *dev, struct snap_writer *w, uint32_t id, uint32_t instance, char *err,
		     size_t errlen)
{
	struct vsock_vhost *v = ((struct virtio_dev *)dev)->priv;
	pthread_mutex_lock(&v->mu);
	if (v->running) {
		vsock_vhost_halt(v, true);
		v->parked = true;
		vv_resched(v);
	}
	pthread_mutex_unlock(&v->mu);
	return vsock_snap_put(v->cid, w, id, instance, err, errlen);
}

int vsock_vhost_restore(void *dev, const void *data, size_t len, char *err, size_t errlen)
{
	struct vsock_vhost *v = ((struct virtio_dev *)dev)->priv;
	return vsock_snap_restore(v->name, v->cid, &v->mu, &v->reset_owed, data, len, err, errlen);
}

static int vv_take_back(struct vsock_vhost *v, char *err, size_t errlen)
{
	char why[200];
	if (vsock_vhost_open(v, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s: %s", v->name, why);
		return -1;
	}
	v->released = false;
	v->reset_owed = v->active;
	/* The rings the save parked go back to the kernel, and the reset to
	 * the guest, on the I/O thread once the switch lets it go. */
	if (v->parked)
		vv_resched(v);
	return 0;
}

int vsock_vhost_handover(void *dev, bool release, char *err, size_t errlen)
{
	struct vsock_vhost *v = ((struct virtio_dev *)dev)->priv;
	int r = 0;
	pthread_mutex_lock(&v->mu);
	if (release && !v->released) {
		/* The save parked the rings; a device that never ran has
		 * none to stop. */
		if (v->running) {
			vsock_vhost_halt(v, true);
			v->parked = true;
		}
		vhost_close(&v->vh);
		v->released = true;
	} else if (!release && v->released) {
		r = vv_take_back(v, err, errlen);
	}
	pthread_mutex_unlock(&v->mu);
	return r;
}

/* A released device (its node closed) writes nothing. */
const char *vsock_vhost_dirty_blind(const void *dev)
{
	const struct vsock_vhost *v = ((const struct virtio_dev *)dev)->priv;
	return v->vh.fd >= 0 ? "the kernel's vhost-vsock writes received packets into guest "
			       "memory and logs none of them (drivers/vhost/vsock.c)"
			     : NULL;
}

/* The rings parked as a save parks them, and kept so (vv_queue_notify,
 * vv_activate look at quiet) until !stop hands them back on the I/O
 * thread. A device released by the switch or never started has nothing
 * to stop. */
int vsock_vhost_dirty_stop(void *dev, bool stop, char *err, size_t errlen)
{
	struct vsock_vhost *v = ((struct virtio_dev *)dev)->priv;
	(void)err, (void)errlen;
	pthread_mutex_lock(&v->mu);
	v->quiet = stop;
	if (stop && v->running) {
		vsock_vhost_halt(v, true);
		v->parked = true;
	} else if (!stop && v->parked) {
		vv_resched(v);
	}
	pthread_mutex_unlock(&v->mu);
	return 0;
}
