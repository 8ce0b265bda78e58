// SPDX-License-Identifier: Apache-2.0
/* virtio-balloon's state in a snapshot (docs/SNAPSHOT.md): its queues are
 * the transport's; what is the balloon's is its config space (the target
 * num_pages and the driver's actual), the target and stats interval as
 * the API last set them (the device list has the ones given at boot), the
 * stats buffer it holds (a head the driver popped to it and waits to get
 * back) and the last statistics read. Inflated pages need nothing: they
 * are holes in the memory file, and deflate and free page reporting keep
 * no state between chains. */
#include <stdio.h>
#include <string.h>

#include "core/snap.h"
#include "devices/virtio-balloon/virtio_balloon_priv.h"

#define BALLOON_SNAP_LAYOUT 1u
#define BALLOON_SNAP_STATS  16 /* room for tags; the kernel's header has fewer */
#define BALLOON_F_DOO	    1u /* flags: deflate-on-oom */
#define BALLOON_F_REPORTING 2u

_Static_assert(VIRTIO_BALLOON_S_NR <= BALLOON_SNAP_STATS, "a saved tag per statistic");

struct balloon_snap {
	uint32_t layout, num_pages, actual, amount_mib, stats_s, flags;
	int32_t stats_head; /* -1: none held */
	uint32_t have;
	uint64_t val[BALLOON_SNAP_STATS];
};

_Static_assert(sizeof(struct balloon_snap) == 32 + 8 * BALLOON_SNAP_STATS, "no padding");

static uint32_t balloon_snap_flags(const struct balloon_spec *s)
{
	return (s->deflate_on_oom ? BALLOON_F_DOO : 0) | (s->reporting ? BALLOON_F_REPORTING : 0);
}

int virtio_balloon_save(void *dev, struct snap_writer *w, uint32_t id, uint32_t instance, char *err,
			size_t errlen)
{
	struct virtio_balloon *b = ((struct virtio_dev *)dev)->priv;
	struct balloon_snap s = {.layout = BALLOON_SNAP_LAYOUT};
	pthread_mutex_lock(&b->mu);
	s.num_pages = atomic_load(&b->num_pages);
	s.actual = atomic_load(&b->actual);
	s.amount_mib = b->spec.amount_mib;
	s.stats_s = b->spec.stats_s;
	s.flags = balloon_snap_flags(&b->spec);
	s.stats_head = b->active ? b->stats_head : -1;
	s.have = b->gstats.have;
	memcpy(s.val, b->gstats.val, sizeof(b->gstats.val));
	pthread_mutex_unlock(&b->mu);
	if (snap_put(w, id, instance, &s, sizeof(s)) == 0)
		return 0;
	snprintf(err, errlen, "out of memory");
	return -1;
}

static const char *balloon_snap_odd(const struct virtio_balloon *b, const struct balloon_snap *s)
{
	if (s->layout != BALLOON_SNAP_LAYOUT)
		return "its layout is unknown";
	if (s->flags != balloon_snap_flags(&b->spec) || !s->stats_s != !b->spec.stats_s ||
	    s->stats_s > BALLOON_STATS_S_MAX)
		return "its options differ";
	if ((uint64_t)s->amount_mib * BALLOON_PAGES_PER_MIB > b->ram_pages ||
	    s->num_pages != s->amount_mib * BALLOON_PAGES_PER_MIB)
		return "its target does not fit this VM's memory";
	if (s->stats_head < -1 || s->stats_head >= b->vdev.queue_max_size ||
	    (s->stats_head >= 0 && !s->stats_s))
		return "its held stats buffer is out of range";
	if (s->have >> VIRTIO_BALLOON_S_NR)
		return "it has statistics of unknown tags";
	for (unsigned int t = VIRTIO_BALLOON_S_NR; t < BALLOON_SNAP_STATS; t++)
		if (s->val[t])
			return "it has statistics of unknown tags";
	return NULL;
}

int virtio_balloon_restore(void *dev, const void *data, size_t len, char *err, size_t errlen)
{
	struct virtio_balloon *b = ((struct virtio_dev *)dev)->priv;
	struct balloon_snap s;
	const char *why = len != sizeof(s) ? "its size is wrong" : NULL;
	if (!why) {
		memcpy(&s, data, sizeof(s)); /* copied once, then checked */
		why = balloon_snap_odd(b, &s);
	}
	if (why) {
		snprintf(err, errlen, "%s: saved state refused: %s", b->name, why);
		return -1;
	}
	pthread_mutex_lock(&b->mu);
	atomic_store(&b->num_pages, s.num_pages);
	atomic_store(&b->actual, s.actual);
	b->spec.amount_mib = s.amount_mib;
	b->spec.stats_s = s.stats_s;
	/* The transport's activate follows (at DRIVER_OK): it keeps this
	 * buffer held, to be given back on the next tick as before. */
	b->restored_head = s.stats_head;
	b->gstats.have = s.have;
	memcpy(b->gstats.val, s.val, sizeof(b->gstats.val));
	pthread_mutex_unlock(&b->mu);
	return 0;
}
