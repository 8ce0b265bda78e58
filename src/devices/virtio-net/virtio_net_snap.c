// SPDX-License-Identifier: Apache-2.0
/* virtio-net's state in a snapshot (docs/SNAPSHOT.md): its rx/tx
 * positions are the transport's (the queues, virtio_pci_save); what is
 * the card's is which card it is (its MAC, its pairs) and what the driver
 * set through the control queue (virtio_net_ctrl.c's commands: the pairs
 * enabled, the coalescing parameters), and the notifications coalescing
 * held back at the save. Receive modes and MAC filters are not saved: no
 * control feature that sets them is offered, so the driver sets none.
 *
 * A frame the device holds half-placed is dropped, as a real NIC may drop
 * one: its chains stay consumed. vhost keeps its ring positions in the
 * kernel: they are fetched into the queues first (virtio_net_vhost_park),
 * and the load's activate gives them back to its vhost, for every pair
 * whose queues the driver set up. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sys/epoll.h>

#include "core/snap.h"
#include "devices/virtio-net/virtio_net_priv.h"
#include "iothread/iothread.h"

/* Layout 1 had no layout field: MAC, zero, pairs, pairs enabled (16
 * bytes), and its load refused more than one enabled pair. Layout 2 had
 * no NET_SNAP_TX_OWN: its TX coalescing is read as the driver's. */
#define NET_SNAP_LAYOUT	     3u
#define NET_SNAP_LAYOUT1_LEN 16u
/* In held, above the queues' bits: the TX coalescing saved is the card's
 * own hold (virtio_net_coal_defaults), not the driver's; the load sets
 * its own card's instead. */
#define NET_SNAP_TX_OWN (1u << 31)

struct net_snap {
	uint32_t layout;
	uint8_t mac[NET_MAC_LEN], zero[2];
	uint32_t npairs, curr_pairs;
	/* [VIRTIO_NET_RXQ], [VIRTIO_NET_TXQ]: as the command lays them out
	 * (struct virtio_net_ctrl_coal_{rx,tx}). */
	struct {
		uint32_t max_packets, usecs;
	} coal[2];
	uint32_t held; /* data queue q's notification held: bit q */
};

_Static_assert(sizeof(struct net_snap) == 40, "no padding");
_Static_assert(2 * VIRTIO_NET_PAIRS_MAX < 32, "a held bit per data queue, and NET_SNAP_TX_OWN");

/* Whether queue dir of pair p holds a notification (under its lock). */
static bool net_held(struct virtio_net_pair *p, unsigned int dir)
{
	struct virtio_net_coal *c = dir == VIRTIO_NET_RXQ ? &p->rx_coal : &p->tx_coal;
	pthread_mutex_t *mu = dir == VIRTIO_NET_RXQ ? &p->rx_lock : &p->tx_lock;
	pthread_mutex_lock(mu);
	bool armed = c->armed;
	pthread_mutex_unlock(mu);
	return armed;
}

int virtio_net_save(void *dev, struct snap_writer *w, uint32_t id, uint32_t instance, char *err,
		    size_t errlen)
{
	struct virtio_net *n = dev;
	virtio_net_vhost_park(n);
	struct net_snap s = {.layout = NET_SNAP_LAYOUT, .npairs = n->npairs};
	memcpy(s.mac, n->mac, sizeof(s.mac));
	/* ctrl_lock first, a queue's lock after it (the lock order). */
	pthread_mutex_lock(&n->ctrl_lock);
	s.curr_pairs = atomic_load(&n->curr_pairs);
	for (unsigned int d = 0; d < 2; d++) {
		s.coal[d].max_packets = atomic_load(&n->coal_max[d]);
		s.coal[d].usecs = atomic_load(&n->coal_usecs[d]);
	}
	for (unsigned int i = 0; i < n->npairs; i++)
		for (unsigned int d = 0; d < 2; d++)
			s.held |= (uint32_t)net_held(&n->pairs[i], d) << (2 * i + d);
	if (n->coal_tx_own)
		s.held |= NET_SNAP_TX_OWN;
	pthread_mutex_unlock(&n->ctrl_lock);
	if (snap_put(w, id, instance, &s, sizeof(s)) == 0)
		return 0;
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* The TX coalescing saved is the card's own (layout 3 and later). */
static bool net_snap_tx_own(const struct net_snap *s)
{
	return s->layout >= 3 && s->held & NET_SNAP_TX_OWN;
}

/* What the control queue would have refused, or no card leaves. The
 * card's own hold is not the driver's state: any card may load it. */
static const char *net_snap_odd(const struct virtio_net *n, const struct net_snap *s)
{
	uint32_t held = net_snap_tx_own(s) ? s->held & ~NET_SNAP_TX_OWN : s->held;
	bool coal = s->coal[0].max_packets | s->coal[0].usecs | held;
	if (!net_snap_tx_own(s))
		coal |= s->coal[1].max_packets | s->coal[1].usecs;
	if (s->layout != 2 && s->layout != NET_SNAP_LAYOUT)
		return "its layout is unknown";
	if (memcmp(s->mac, n->mac, sizeof(s->mac)) || s->zero[0] | s->zero[1])
		return "its MAC differs";
	if (s->npairs != n->npairs)
		return "its queue pair count differs";
	if (s->curr_pairs < 1 || s->curr_pairs > n->npairs)
		return "its enabled queue pair count is out of range";
	if (s->coal[0].usecs > VIRTIO_NET_COAL_USECS_MAX ||
	    s->coal[1].usecs > VIRTIO_NET_COAL_USECS_MAX)
		return "its coalescing usecs are out of range";
	/* vhost=on: not offered (virtio_net_new_device). */
	if (coal && !(n->vdev.host_features >> VIRTIO_NET_F_NOTF_COAL & 1))
		return "it has coalescing state, and this card offers no coalescing";
	if (held >> (2 * n->npairs))
		return "it holds a notification for a queue it does not have";
	return NULL;
}

/* The enabled pairs (their tap queues attached) first: the only step that
 * can fail, and it leaves the card as it was when it does. */
static int net_snap_apply(struct virtio_net *n, const struct net_snap *s)
{
	pthread_mutex_lock(&n->ctrl_lock);
	int r = virtio_net_set_pairs(n, s->curr_pairs);
	for (unsigned int d = 0; r == 0 && d < 2; d++) {
		atomic_store(&n->coal_max[d], s->coal[d].max_packets);
		atomic_store(&n->coal_usecs[d], s->coal[d].usecs);
	}
	if (r == 0 && net_snap_tx_own(s))
		virtio_net_coal_tx_own(n);
	else if (r == 0)
		n->coal_tx_own = false;
	pthread_mutex_unlock(&n->ctrl_lock);
	for (unsigned int q = 0; r == 0 && q < 2 * n->npairs; q++) {
		if (!(s->held >> q & 1))
			continue;
		struct virtio_net_pair *p = &n->pairs[q / 2];
		pthread_mutex_t *mu = q % 2 == VIRTIO_NET_RXQ ? &p->rx_lock : &p->tx_lock;
		pthread_mutex_lock(mu);
		virtio_net_coal_restore_held(q % 2 == VIRTIO_NET_RXQ ? &p->rx_coal : &p->tx_coal);
		pthread_mutex_unlock(mu);
	}
	return r;
}

int virtio_net_restore(void *dev, const void *data, size_t len, char *err, size_t errlen)
{
	struct virtio_net *n = dev;
	struct net_snap s;
	const char *why = len == NET_SNAP_LAYOUT1_LEN
			      ? "its layout is an older skiff's, without the control queue's state"
			  : len != sizeof(s) ? "its size is wrong"
					     : NULL;
	if (!why) {
		memcpy(&s, data, sizeof(s)); /* copied once, then checked */
		why = net_snap_odd(n, &s);
	}
	if (why) {
		snprintf(err, errlen, "%s: saved state refused: %s", n->name, why);
		return -1;
	}
	int r = net_snap_apply(n, &s);
	if (r < 0)
		snprintf(err, errlen,
			 "%s: cannot enable %u queue pairs: tap '%s' refused a queue: %s", n->name,
			 s.curr_pairs, n->pairs[0].tap.name, strerror(-r));
	return r < 0 ? -1 : 0;
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
 * memory without KVM's dirty log or skiff's marks: vhost's own log
 * (virtio_net_vhost_log) must be on, as a migration's pre-copy and
 * track_dirty_pages turn it on. */
const char *virtio_net_dirty_blind(const void *dev)
{
	const struct virtio_net *n = dev;
	return n->vhost_on ? "vhost=on writes guest memory outside the dirty log unless vhost "
			     "logs it"
			   : NULL;
}

int virtio_net_handover(void *dev, bool release, char *err, size_t errlen)
{
	struct virtio_net *n = dev;
	return release ? net_release(n) : net_take_back(n, err, errlen);
}
