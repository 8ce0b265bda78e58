// SPDX-License-Identifier: Apache-2.0
/* virtio-net's state in a snapshot: its rx/tx positions are the
 * transport's (the queues, virtio_pci_save); what is the card's is which
 * card it is (its MAC, its pairs). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sys/epoll.h>

#include "core/snap.h"
#include "devices/virtio-net/virtio_net_priv.h"
#include "iothread/iothread.h"

/* Its rx/tx positions are the transport's (the queues); what is the
 * card's is which card (its MAC, its pairs). A frame the device holds
 * half-placed is dropped, as a real NIC may drop one: its chains stay
 * consumed. vhost keeps its ring positions in the kernel: they are
 * fetched into the queues first (virtio_net_vhost_park), and the load's
 * activate gives them back to its vhost. */
struct net_snap {
	uint8_t mac[NET_MAC_LEN], zero[2];
	uint32_t npairs, curr_pairs;
};

int virtio_net_save(void *dev, struct snap_writer *w, uint32_t id, uint32_t instance, char *err,
		    size_t errlen)
{
	struct virtio_net *n = dev;
	virtio_net_vhost_park(n);
	struct net_snap s = {.npairs = n->npairs, .curr_pairs = atomic_load(&n->curr_pairs)};
	memcpy(s.mac, n->mac, sizeof(s.mac));
	if (snap_put(w, id, instance, &s, sizeof(s)) == 0)
		return 0;
	snprintf(err, errlen, "out of memory");
	return -1;
}

int virtio_net_restore(void *dev, const void *data, size_t len, char *err, size_t errlen)
{
	const struct virtio_net *n = dev;
	struct net_snap s;
	const char *why = len != sizeof(s) ? "its size is wrong" : NULL;
	if (!why) {
		memcpy(&s, data, sizeof(s));
		why = memcmp(s.mac, n->mac, sizeof(s.mac)) || s.zero[0] | s.zero[1]
			  ? "its MAC differs"
		      : s.npairs != n->npairs ? "its queue pair count differs"
		      : s.curr_pairs != 1     ? "multi-queue pairs enabled: not restored yet"
					      : NULL;
	}
	if (!why)
		return 0;
	snprintf(err, errlen, "%s: saved state refused: %s", n->name, why);
	return -1;
}

/* A live migration's switch on one host: a single-queue tap takes one
 * process at a time (TUNSETIFF answers EBUSY), so the source lets go of
 * its queues once the target has the state, and takes them back by name
 * if the target then fails. A vhost worker holds the tap too: its fds go
 * first, and this card stays on the built-in data path from there (the
 * guest runs on the target; here only after a failed switch). */
static int net_release(struct virtio_net *n)
{
	for (unsigned int i = 0; i < n->npairs; i++) {
		struct virtio_net_pair *p = &n->pairs[i];
		if (n->vhost_on)
			vhost_close(&p->vhost);
		if (p->tap.fd < 0)
			continue;
		if (n->io)
			iothread_del_fd(n->io, p->tap.fd);
		close(p->tap.fd);
		p->tap.fd = -1;
	}
	n->vhost_on = false;
	return 0;
}

static int net_take_back(struct virtio_net *n, char *err, size_t errlen)
{
	struct tap t[TAP_QUEUES_MAX];
	if (n->pairs[0].tap.fd >= 0)
		return 0;
	if (tap_open_queues(t, n->npairs, n->pairs[0].tap.name, err, errlen) < 0)
		return -1;
	int r = 0;
	for (unsigned int i = 0; i < n->npairs; i++) {
		struct virtio_net_pair *p = &n->pairs[i];
		p->tap.fd = t[i].fd;
		if (r == 0)
			r = tap_set_offload(&p->tap, p->tap.offload);
		if (r == 0 && !p->tap_attached)
			r = tap_set_queue(&p->tap, false);
		if (r == 0 && n->io)
			r = iothread_add_fd(n->io, p->tap.fd, EPOLLIN | EPOLLOUT | EPOLLET,
					    virtio_net_tap_event, p);
	}
	if (r < 0) {
		/* As released again: a retry reopens them, never a tap left
		 * unwatched. */
		snprintf(err, errlen, "%s: tap '%s' reopened but not set up again: %s", n->name,
			 n->pairs[0].tap.name, strerror(-r));
		net_release(n);
		return -1;
	}
	return 0;
}

/* vhost's kernel worker writes received frames and used rings into guest
 * memory without KVM's dirty log or skiff's marks (QEMU gives vhost a
 * log of its own, VHOST_SET_LOG_BASE: not yet here). */
const char *virtio_net_dirty_blind(const void *dev)
{
	const struct virtio_net *n = dev;
	return n->vhost_on ? "vhost=on writes guest memory outside the dirty log (not yet tracked)"
			   : NULL;
}

int virtio_net_handover(void *dev, bool release, char *err, size_t errlen)
{
	struct virtio_net *n = dev;
	return release ? net_release(n) : net_take_back(n, err, errlen);
}
