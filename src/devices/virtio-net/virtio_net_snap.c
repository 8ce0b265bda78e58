// SPDX-License-Identifier: Apache-2.0
/* virtio-net's state in a snapshot: its rx/tx positions are the
 * transport's (the queues, virtio_pci_save); what is the card's is which
 * card it is (its MAC, its pairs). */
#include <stdio.h>
#include <string.h>

#include "core/snap.h"
#include "devices/virtio-net/virtio_net_priv.h"

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
