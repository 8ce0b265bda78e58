// SPDX-License-Identifier: Apache-2.0
/* virtio-net with vhost=on: at activate each pair's rings, the guest
 * memory table and the eventfds KVM already uses (ioeventfd kicks, irqfd
 * interrupts) go to that pair's /dev/vhost-net, with the pair's tap queue
 * as its backend, and the tap queues leave the I/O thread's epoll set, so
 * no packet wakes skiff. The control queue stays with skiff: enabling
 * pairs only attaches and detaches tap queues. At reset everything comes
 * back. */
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>

#include "core/log.h"
#include "devices/virtio-net/virtio_net_priv.h"
#include "iothread/iothread.h"

/* The guest decides when activate runs (every DRIVER_OK), so a fallback is
 * reported once per device, not once per activate. */
static bool vhost_log_once(struct virtio_net *n)
{
	if (n->vhost_fallback_logged)
		return false;
	n->vhost_fallback_logged = true;
	return true;
}

/* Gives back the data queues [0, nq) (a queue never handed off: no-op). */
static void vhost_takeback(struct virtio_net *n, unsigned int nq)
{
	for (unsigned int q = 0; q < nq; q++)
		n->vdev.transport->queue_takeback(&n->vdev, q);
}

/* Pair i goes to vhost if the driver enabled both its queues; pair 0
 * always (a missing queue then fails the handoff: the built-in path).
 * Without MQ there is no pair but 0: q2 is then the control queue
 * (5.1.2), which stays with skiff whatever else the driver set up. */
static bool vhost_pair_ready(const struct virtio_net *n, unsigned int i)
{
	const struct virtio_dev *v = &n->vdev;
	return i == 0 || (virtio_has_feature(v, VIRTIO_NET_F_MQ) && v->vqs[2 * i].enabled &&
			  v->vqs[2 * i + 1].enabled);
}

/* Starts pair p's vhost with its two rings (virtqueues 2i, 2i + 1). The
 * memory table goes before the features: during a migration those ask
 * for the dirty log, which the kernel checks against the table. */
static int vhost_pair_start(struct virtio_net *n, struct virtio_net_pair *p, const int *kick,
			    const int *call)
{
	struct virtio_dev *vdev = &n->vdev;
	unsigned int base = 2 * p->index;
	int r = vhost_set_mem(&p->vhost, vdev->gm);
	if (r == 0)
		r = vhost_set_features(&p->vhost, vdev->driver_features);
	for (unsigned int q = 0; q < 2 && r == 0; q++)
		r = vhost_net_start_ring(&p->vhost, q, &vdev->vqs[base + q], kick[base + q],
					 call[base + q], p->tap.fd);
	for (unsigned int q = 0; q < 2 && r == 0 && n->vhost_busyloop_us; q++)
		r = vhost_set_busyloop(&p->vhost, q, n->vhost_busyloop_us);
	return r;
}

static int vhost_start_locked(struct virtio_net *n)
{
	struct virtio_dev *vdev = &n->vdev;
	const struct virtio_transport_ops *t = vdev->transport;
	int kick[2 * VIRTIO_NET_PAIRS_MAX], call[2 * VIRTIO_NET_PAIRS_MAX];
	unsigned int nq = 2 * n->npairs;
	if (!t->queue_handoff)
		return -1;
	for (unsigned int q = 0; q < nq; q++) {
		/* A pair the driver did not set up (a driver without MQ uses
		 * only the first) stays idle: vhost gets the others. */
		if (!vhost_pair_ready(n, q / 2))
			continue;
		if (t->queue_handoff(vdev, q, &kick[q], &call[q]) < 0) {
			if (vhost_log_once(n))
				log_warn("%s: vhost needs MSI-X and ioeventfd; using the built-in "
					 "data path",
					 n->name);
			vhost_takeback(n, q + 1);
			return -1;
		}
	}
	int r = 0;
	for (unsigned int i = 0; i < n->npairs && r == 0; i++)
		if (vhost_pair_ready(n, i))
			r = vhost_pair_start(n, &n->pairs[i], kick, call);
	if (r < 0) {
		if (vhost_log_once(n))
			log_warn(
			    "%s: vhost-net refused the rings (%s); using the built-in data path",
			    n->name, strerror(-r));
		/* vhost may have run a pair started before the one that
		 * failed: the built-in path goes on where it stopped. */
		for (unsigned int i = 0; i < n->npairs; i++)
			vhost_net_stop(&n->pairs[i].vhost, &vdev->vqs[2 * i]);
		vhost_takeback(n, nq);
		return -1;
	}
	/* The tap queues now belong to vhost: stop watching them. */
	for (unsigned int i = 0; i < n->npairs; i++) {
		if (!vhost_pair_ready(n, i))
			continue;
		iothread_del_fd(n->io, n->pairs[i].tap.fd);
		n->pairs[i].vhost_running = true;
	}
	n->vhost_running = true;
	return 0;
}

int virtio_net_vhost_start(struct virtio_net *n)
{
	pthread_mutex_lock(&n->vhost_lock);
	int r = vhost_start_locked(n);
	pthread_mutex_unlock(&n->vhost_lock);
	return r;
}

static void vhost_stop_locked(struct virtio_net *n)
{
	if (!n->vhost_running)
		return;
	for (unsigned int i = 0; i < n->npairs; i++)
		vhost_net_stop(&n->pairs[i].vhost, NULL); /* the rings reset next */
	vhost_takeback(n, 2 * n->npairs);
	for (unsigned int i = 0; i < n->npairs; i++) {
		struct virtio_net_pair *p = &n->pairs[i];
		if (!p->vhost_running)
			continue;
		int r = iothread_add_fd(n->io, p->tap.fd, EPOLLIN | EPOLLOUT | EPOLLET,
					virtio_net_tap_event, p);
		if (r < 0)
			log_err("%s: pair %u: tap unwatched, no receive: %s", n->name, i,
				strerror(-r));
		p->vhost_running = false;
	}
	n->vhost_running = false;
}

void virtio_net_vhost_stop(struct virtio_net *n)
{
	pthread_mutex_lock(&n->vhost_lock);
	vhost_stop_locked(n);
	pthread_mutex_unlock(&n->vhost_lock);
}

void virtio_net_vhost_park(struct virtio_net *n)
{
	/* VHOST_GET_VRING_BASE stops each ring and says where it stands:
	 * the virtqs take that position (virtq_resume_at) for the
	 * transport's save; the load's activate hands it back with
	 * VHOST_SET_VRING_BASE (vhost_net_start_ring). */
	pthread_mutex_lock(&n->vhost_lock);
	bool was = n->vhost_running;
	if (was) {
		for (unsigned int i = 0; i < n->npairs; i++)
			vhost_net_stop(&n->pairs[i].vhost, &n->vdev.vqs[2 * i]);
		vhost_stop_locked(n);
	}
	pthread_mutex_unlock(&n->vhost_lock);
	if (!was)
		return;
	/* This process goes on with the built-in path from there, on the
	 * I/O thread the save holds until the files are written: vhost's
	 * kernel worker would move packets into a paused guest's memory
	 * while it is written. The driver's next reset starts vhost again. */
	atomic_store(&n->active, true);
	/* Every enabled pair: a TX chain queued on pair 1 while vhost ran
	 * gets no kick here (its ioeventfd was vhost's). */
	unsigned int on = atomic_load(&n->curr_pairs);
	for (unsigned int i = 0; i < on && i < n->npairs; i++)
		virtio_net_schedule(&n->pairs[i], VIRTIO_NET_SCHED_RX | VIRTIO_NET_SCHED_TX);
	log_info("%s: vhost stopped for a snapshot; the built-in data path goes on", n->name);
}

/* A migration's pre-copy, or track_dirty_pages for Diff snapshots
 * (docs/MIGRATION.md, "vhost=on"): vhost's kernel worker writes received
 * frames and used rings into guest memory where neither KVM's log nor
 * skiff's marks see them, so it logs them itself (QEMU's vhost log). Once
 * a switch or a snapshot parks vhost (virtio_net_vhost_park), the
 * built-in path marks skiff's own log. */
int virtio_net_vhost_log(void *dev, _Atomic uint64_t *log, char *err, size_t errlen)
{
	struct virtio_net *n = dev;
	int r = 0;
	if (!n->vhost_on)
		return 0; /* closed (a released card): nothing writes */
	pthread_mutex_lock(&n->vhost_lock);
	for (unsigned int i = 0; i < n->npairs && r == 0; i++)
		r = vhost_set_log(&n->pairs[i].vhost, log, &n->vdev.vqs[2 * i]);
	/* Half on is off: a pair that could not log fails the migration, and
	 * those that took the log (the failed one too, perhaps half) stop. */
	for (unsigned int i = 0; r < 0 && log && i < n->npairs; i++)
		if (n->pairs[i].vhost.log)
			vhost_set_log(&n->pairs[i].vhost, NULL, &n->vdev.vqs[2 * i]);
	pthread_mutex_unlock(&n->vhost_lock);
	if (r == 0)
		return 0;
	snprintf(err, errlen, "vhost-net cannot %s its dirty log: %s", log ? "start" : "stop",
		 strerror(-r));
	return -1;
}
