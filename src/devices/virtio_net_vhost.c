/* virtio-net with vhost=on: at activate the rings, the guest memory table
 * and the eventfds KVM already uses (ioeventfd kicks, irqfd interrupts) go
 * to /dev/vhost-net, and the tap leaves the I/O thread's epoll set, so no
 * packet wakes skiff. At reset everything comes back. */
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>

#include "devices/virtio_net_priv.h"
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

int virtio_net_vhost_start(struct virtio_net *n)
{
	struct virtio_dev *vdev = &n->vdev;
	const struct virtio_transport_ops *t = vdev->transport;
	int kick[2], call[2];
	if (!t->queue_handoff)
		return -1;
	for (unsigned int q = 0; q < 2; q++) {
		if (t->queue_handoff(vdev, q, &kick[q], &call[q]) < 0) {
			if (vhost_log_once(n))
				fprintf(stderr,
					"skiff: %s: vhost needs MSI-X and ioeventfd; using the "
					"built-in data path\n",
					n->name);
			for (unsigned int i = 0; i <= q; i++)
				t->queue_takeback(vdev, i);
			return -1;
		}
	}
	int r = vhost_net_set_features(&n->vhost, vdev->driver_features);
	if (r == 0)
		r = vhost_net_set_mem(&n->vhost, vdev->gm);
	for (unsigned int q = 0; q < 2 && r == 0; q++)
		r = vhost_net_start_ring(&n->vhost, q, &vdev->vqs[q], kick[q], call[q], n->tap.fd);
	for (unsigned int q = 0; q < 2 && r == 0 && n->vhost_busyloop_us; q++)
		r = vhost_net_set_busyloop(&n->vhost, q, n->vhost_busyloop_us);
	if (r < 0) {
		if (vhost_log_once(n))
			fprintf(stderr,
				"skiff: %s: vhost-net refused the rings (%s); using the built-in "
				"data path\n",
				n->name, strerror(-r));
		vhost_net_stop(&n->vhost);
		for (unsigned int q = 0; q < 2; q++)
			t->queue_takeback(vdev, q);
		return -1;
	}
	/* The tap now belongs to vhost: stop watching it. */
	iothread_del_fd(n->io, n->tap.fd);
	n->vhost_running = true;
	return 0;
}

void virtio_net_vhost_stop(struct virtio_net *n)
{
	if (!n->vhost_running)
		return;
	vhost_net_stop(&n->vhost);
	for (unsigned int q = 0; q < 2; q++)
		n->vdev.transport->queue_takeback(&n->vdev, q);
	iothread_add_fd(n->io, n->tap.fd, EPOLLIN | EPOLLOUT | EPOLLET, virtio_net_tap_event, n);
	n->vhost_running = false;
}
