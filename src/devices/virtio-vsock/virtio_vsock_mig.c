// SPDX-License-Identifier: Apache-2.0
/* virtio-vsock in a live migration on one host (docs/MIGRATION.md): the
 * target listens on the same uds path, which cannot be while the source
 * holds it (EADDRINUSE). At the switch (dev_ops.handover, on the
 * controller, VM paused) the source lets go: its host streams are closed
 * (the guest gets a TRANSPORT_RESET on the target, as after a snapshot
 * load, virtio_vsock_snap.c), its listener closed and the socket file
 * unlinked if it is still the one its bind made. The target builds its
 * devices only after the source's RELEASED, so its bind finds the path
 * free. A failed switch's take-back listens again (the controller's
 * filter has the calls for it: virtio_vsock_sandbox.c) and owes the
 * guest a TRANSPORT_RESET, since its streams' host ends are gone. */
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "devices/virtio-vsock/virtio_vsock_priv.h"

void vsock_host_unlisten(struct virtio_vsock *v)
{
	if (v->listen_fd >= 0) {
		epoll_ctl(v->epfd, EPOLL_CTL_DEL, v->listen_fd, NULL);
		close(v->listen_fd);
		v->listen_fd = -1;
	}
	struct stat st;
	/* Another file at the path (someone replaced ours, a symlink to it
	 * too: lstat) is not ours to remove: the target's bind then fails
	 * with a reason, nothing lost. */
	if (v->uds_ino && lstat(v->uds, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    (uint64_t)st.st_dev == v->uds_dev && (uint64_t)st.st_ino == v->uds_ino)
		unlink(v->uds);
	v->uds_dev = v->uds_ino = 0;
}

int virtio_vsock_handover(void *dev, bool release, char *err, size_t errlen)
{
	struct virtio_vsock *v = ((struct virtio_dev *)dev)->priv;
	int r = 0;
	pthread_mutex_lock(&v->mu);
	if (release) {
		/* The device's thread may be in epoll_wait: a stale event of
		 * a closed stream is told apart by its slot's state, the
		 * listener's finds listen_fd -1 (accept4 fails). */
		vsock_conn_reset_all(v);
		vsock_host_unlisten(v);
		v->released = true;
	} else if (v->released) {
		r = vsock_host_listen(v, err, errlen);
		if (r == 0) {
			v->released = false;
			/* Sent by the device's thread on its next turn. */
			v->reset_owed = v->active;
			uint64_t one = 1;
			if (write(v->wake_fd, &one, sizeof(one)) < 0)
				counter_add(&v->stats.conn_event_fails, 1);
		}
	}
	pthread_mutex_unlock(&v->mu);
	return r;
}
