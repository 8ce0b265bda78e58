// SPDX-License-Identifier: Apache-2.0
/* virtio-balloon's statistics (virtio 1.2 §5.5.6.3) and the device kind.
 *
 * The driver puts one device-readable buffer of (le16 tag, le64 value)
 * entries, 10 bytes each, on the stats queue; the device keeps it, and
 * every interval gives it back (used, 0 bytes): the driver then fills it
 * afresh and puts it back. The values are kept under Firecracker's names
 * for GET /balloon/statistics. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "core/dma.h"
#include "devices/virtio-balloon/virtio_balloon_priv.h"
#include "iothread/iothread.h"

#define STAT_SIZE sizeof(struct virtio_balloon_stat)

/* Firecracker's BalloonStats names, by tag. */
static const char *const stat_names[VIRTIO_BALLOON_S_NR] = {
    [VIRTIO_BALLOON_S_SWAP_IN] = "swap_in",
    [VIRTIO_BALLOON_S_SWAP_OUT] = "swap_out",
    [VIRTIO_BALLOON_S_MAJFLT] = "major_faults",
    [VIRTIO_BALLOON_S_MINFLT] = "minor_faults",
    [VIRTIO_BALLOON_S_MEMFREE] = "free_memory",
    [VIRTIO_BALLOON_S_MEMTOT] = "total_memory",
    [VIRTIO_BALLOON_S_AVAIL] = "available_memory",
    [VIRTIO_BALLOON_S_CACHES] = "disk_caches",
    [VIRTIO_BALLOON_S_HTLB_PGALLOC] = "hugetlb_allocations",
    [VIRTIO_BALLOON_S_HTLB_PGFAIL] = "hugetlb_failures",
};

static unsigned int stats_queue(const struct virtio_balloon *b)
{
	for (unsigned int q = 0; q < b->vdev.num_queues; q++)
		if (b->role[q] == BQ_STATS)
			return q;
	return 0;
}

/* Reads one buffer's entries: whole ones up to BALLOON_STATS_MAX; a
 * partial one at the end, an unknown tag or a device-writable part is a
 * failed update (the good entries still count, as the rest of the
 * buffer's are independent). */
static void stats_parse(struct virtio_balloon *b, const struct virtq_elem *e)
{
	uint8_t buf[BALLOON_STATS_MAX * STAT_SIZE];
	size_t len = e->out_len < sizeof(buf) ? e->out_len : sizeof(buf);
	bool bad = e->in_num || e->out_len % STAT_SIZE || e->out_len > sizeof(buf);
	/* Relaxed: virtq_pop's acquire fence orders it after the avail index. */
	len = dma_sg_read_relaxed(e->iov, e->out_num, 0, buf, len);
	for (size_t off = 0; off + STAT_SIZE <= len; off += STAT_SIZE) {
		struct virtio_balloon_stat st;
		memcpy(&st, buf + off, sizeof(st)); /* packed, LE host */
		if (st.tag >= VIRTIO_BALLOON_S_NR) {
			bad = true;
			continue;
		}
		b->gstats.val[st.tag] = st.val;
		b->gstats.have |= 1u << st.tag;
	}
	counter_add(bad ? &b->stats.stats_fails : &b->stats.stats_updates, 1);
}

void balloon_stats_take(struct virtio_balloon *b, struct virtq *vq)
{
	const struct guest_mem *gm = b->vdev.gm;
	bool pushed = false;
	for (unsigned int budget = BALLOON_POP_BUDGET; b->active && budget; budget--) {
		if (virtq_pop(vq, gm, &b->elem) <= 0)
			break;
		/* A driver keeps one buffer here; a second gives the first back. */
		if (b->stats_head >= 0 && virtq_push(vq, gm, (uint16_t)b->stats_head, 0) == 0)
			pushed = true;
		b->stats_head = b->elem.head;
		stats_parse(b, &b->elem);
	}
	if (pushed)
		virtio_notify_if_needed(&b->vdev, stats_queue(b));
}

int balloon_stats_held(const struct virtio_balloon *b)
{
	unsigned int q = stats_queue(b);
	const struct virtq *vq = &b->vdev.vqs[q];
	/* The save's head is held only with its chain in flight, alone: a
	 * load whose transport was not at DRIVER_OK has none there, and the
	 * head would go back to a driver that never gave it. */
	if (b->restored_head < 0 || b->role[q] != BQ_STATS || !vq->enabled ||
	    (uint16_t)(vq->last_avail_idx - vq->used_idx) != 1 || b->restored_head >= vq->size)
		return -1;
	return b->restored_head;
}

void balloon_stats_give_back(struct virtio_balloon *b)
{
	if (!b->active || b->role[stats_queue(b)] != BQ_STATS)
		return;
	if (b->stats_head < 0) {
		counter_add(&b->stats.stats_missed, 1); /* the guest has not answered */
		return;
	}
	unsigned int q = stats_queue(b);
	if (virtq_push(&b->vdev.vqs[q], b->vdev.gm, (uint16_t)b->stats_head, 0) == 0)
		virtio_notify_if_needed(&b->vdev, q);
	b->stats_head = -1;
}

void balloon_stats_arm(struct virtio_balloon *b, bool now)
{
	uint64_t s = b->active ? b->spec.stats_s : 0;
	struct itimerspec its = {.it_interval = {.tv_sec = (time_t)s},
				 .it_value = {.tv_sec = now ? 0 : (time_t)s, .tv_nsec = now && s}};
	if (b->tfd >= 0)
		timerfd_settime(b->tfd, 0, &its, NULL);
}

void virtio_balloon_stats_tick(void *opaque, uint32_t events)
{
	struct virtio_balloon *b = opaque;
	uint64_t n;
	(void)events;
	/* Nothing to read (re-armed meanwhile): the guest only gets asked
	 * for fresh numbers a little early. */
	if (read(b->tfd, &n, sizeof(n)) < 0)
		n = 0;
	pthread_mutex_lock(&b->mu);
	balloon_stats_give_back(b);
	pthread_mutex_unlock(&b->mu);
}

void balloon_guest_stats_emit(const char *owner, const struct balloon_guest_stats *g,
			      counter_emit_fn emit, void *ctx)
{
	char what[40];
	for (unsigned int t = 0; t < VIRTIO_BALLOON_S_NR; t++) {
		if (!(g->have & (1u << t)))
			continue;
		snprintf(what, sizeof(what), "stat %s", stat_names[t]);
		emit(ctx, owner, what, g->val[t]);
	}
}

void virtio_balloon_counters(struct virtio_dev *vdev, counter_emit_fn emit, void *ctx)
{
	static const struct counter_field c[] = {
	    {"kicks", offsetof(struct virtio_balloon_stats, kicks)},
	    {"inflates", offsetof(struct virtio_balloon_stats, inflates)},
	    {"inflated pages", offsetof(struct virtio_balloon_stats, inflated)},
	    {"deflates", offsetof(struct virtio_balloon_stats, deflates)},
	    {"deflated pages", offsetof(struct virtio_balloon_stats, deflated)},
	    {"bad pfns", offsetof(struct virtio_balloon_stats, bad_pfns)},
	    {"bad chains", offsetof(struct virtio_balloon_stats, bad_chains)},
	    {"discard fails", offsetof(struct virtio_balloon_stats, discard_fails)},
	    {"stats updates", offsetof(struct virtio_balloon_stats, stats_updates)},
	    {"stats update fails", offsetof(struct virtio_balloon_stats, stats_fails)},
	    {"stats missed", offsetof(struct virtio_balloon_stats, stats_missed)},
	    {"reports", offsetof(struct virtio_balloon_stats, reports)},
	    {"reported bytes", offsetof(struct virtio_balloon_stats, reported)},
	    {"config updates", offsetof(struct virtio_balloon_stats, config_updates)},
	};
	struct virtio_balloon *b = vdev->priv;
	counter_emit_fields(emit, ctx, b->name, &b->stats, c, sizeof(c) / sizeof(c[0]));
	emit(ctx, b->name, "target pages", atomic_load(&b->num_pages));
	emit(ctx, b->name, "actual pages", atomic_load(&b->actual));
	pthread_mutex_lock(&b->mu);
	struct balloon_guest_stats g = b->gstats;
	pthread_mutex_unlock(&b->mu);
	balloon_guest_stats_emit(b->name, &g, emit, ctx);
}

/* ---- the device kind ---- */

static struct virtio_balloon *balloon_dev(void *dev)
{
	return ((struct virtio_dev *)dev)->priv;
}

static int balloon_dev_start(void *dev, char *err, size_t errlen)
{
	struct virtio_balloon *b = balloon_dev(dev);
	if (!b->io)
		return 0;
	int e = iothread_add_fd(b->io, b->tfd, EPOLLIN, virtio_balloon_stats_tick, b);
	if (e < 0) {
		snprintf(err, errlen, "cannot watch the balloon's stats timer: %s", strerror(-e));
		b->io = NULL;
		return -1;
	}
	return 0;
}

/* The I/O thread and the vCPUs have stopped: nothing runs the queues. */
static void balloon_dev_stop(void *dev)
{
	struct virtio_balloon *b = balloon_dev(dev);
	if (b->io)
		iothread_del_fd(b->io, b->tfd);
	b->io = NULL;
}

static void balloon_dev_destroy(void *dev)
{
	virtio_balloon_destroy(dev);
}

static void balloon_dev_counters(void *dev, counter_emit_fn emit, void *ctx)
{
	virtio_balloon_counters(dev, emit, ctx);
}

static int balloon_dev_update(void *dev, const char *spec, char *err, size_t errlen)
{
	return virtio_balloon_update(dev, spec, err, errlen);
}

static const struct dev_ops balloon_dev_ops = {
    .start = balloon_dev_start,
    .stop = balloon_dev_stop,
    .destroy = balloon_dev_destroy,
    .counters = balloon_dev_counters,
    .update = balloon_dev_update,
    .save = virtio_balloon_save,
    .restore = virtio_balloon_restore,
};

int virtio_balloon_new_device(const struct dev_ctx *ctx, const void *spec, struct device *out,
			      char *err, size_t errlen)
{
	if (ctx->index > 0) {
		snprintf(err, errlen, "a VM has one balloon device");
		return -1;
	}
	struct virtio_dev *vdev = virtio_balloon_create(ctx->name, spec, ctx->gm, err, errlen);
	if (!vdev)
		return -1;
	balloon_dev(vdev)->io = ctx->io;
	*out = (struct device){.dev = vdev, .ops = &balloon_dev_ops, .vdev = vdev};
	return 0;
}
