// SPDX-License-Identifier: Apache-2.0
#include "devices/virtio-balloon/virtio_balloon.h"

#include <errno.h>
#include <limits.h>
#include <linux/virtio_ids.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "core/dma.h"
#include "devices/virtio-balloon/virtio_balloon_priv.h"

#define BALLOON_QSIZE 256
#define PAGE_4K	      (1ull << VIRTIO_BALLOON_PFN_SHIFT)
/* 16 TiB: num_pages stays a 32-bit count of 4 KiB pages. */
#define BALLOON_MIB_MAX ((1u << 24) - 1)
/* Config space: num_pages and actual; hinting's command id and the poison
 * value belong to features not offered. */
#define BALLOON_CONFIG_LEN offsetof(struct virtio_balloon_config, free_page_hint_cmd_id)

static struct virtio_balloon *balloon_of(struct virtio_dev *vdev)
{
	return vdev->priv;
}

/* ---- the option tables ---- */

static const struct opt balloon_opts[] = {
    {.name = "amount",
     .type = OPT_UINT,
     .off = offsetof(struct balloon_spec, amount_mib),
     .flags = OPT_ONCE,
     .max = BALLOON_MIB_MAX,
     .hint = "a target in MiB",
     .metavar = "MIB",
     .help = "memory to take back from the guest, MiB (0: none yet)"},
    {.name = "deflate-on-oom",
     .type = OPT_ONOFF,
     .off = offsetof(struct balloon_spec, deflate_on_oom),
     .flags = OPT_ONCE,
     .help = "the guest may deflate when it runs out of memory"},
    {.name = "stats",
     .type = OPT_UINT,
     .off = offsetof(struct balloon_spec, stats_s),
     .flags = OPT_ONCE,
     .max = BALLOON_STATS_S_MAX,
     .hint = "seconds between statistics, 0 for none",
     .metavar = "SECS",
     .help = "guest memory statistics every SECS seconds (0: off)"},
    {.name = "reporting",
     .type = OPT_ONOFF,
     .off = offsetof(struct balloon_spec, reporting),
     .flags = OPT_ONCE,
     .help = "free page reporting: the guest's free memory goes back"},
};
const struct opt_table balloon_spec_table = OPT_TABLE(balloon_opts, "balloon option", NULL);

void balloon_spec_init(void *spec)
{
	memset(spec, 0, sizeof(struct balloon_spec));
}

/* What may change while the guest runs; UINT_MAX: not given. */
struct balloon_update {
	unsigned int amount_mib, stats_s;
};
static const struct opt update_opts[] = {
    {.name = "amount",
     .type = OPT_UINT,
     .off = offsetof(struct balloon_update, amount_mib),
     .flags = OPT_ONCE,
     .max = BALLOON_MIB_MAX,
     .hint = "a target in MiB"},
    {.name = "stats",
     .type = OPT_UINT,
     .off = offsetof(struct balloon_update, stats_s),
     .flags = OPT_ONCE,
     .max = BALLOON_STATS_S_MAX,
     .hint = "seconds between statistics"},
};
static const struct opt_table update_table = OPT_TABLE(update_opts, "balloon update", NULL);

/* ---- giving memory back ---- */

static int discard_host(void *host, size_t len)
{
	/* Guest RAM is private: anonymous (guest_mem_alloc, a migration
	 * target's) or, after PUT /snapshot/load, the memory file mapped
	 * MAP_PRIVATE. DONTNEED frees the page either way; a later touch gets
	 * a zero page, or the snapshot's copy of that page from the file
	 * (its page cache, reclaimable). The guest gave the page up, so what
	 * it reads back is unspecified to it (skiff does not offer
	 * VIRTIO_BALLOON_F_PAGE_POISON). A shared mapping would need
	 * MADV_REMOVE; skiff makes none. */
	return madvise(host, len, MADV_DONTNEED);
}

/* [host, host + len) came from guest_mem_ptr or a popped chain; checked
 * again against the one mapping, because madvise outside it would free
 * skiff's own memory. */
static void balloon_discard(struct virtio_balloon *b, uint8_t *host, size_t len)
{
	const struct guest_mem *gm = b->vdev.gm;
	if (!len || host < gm->host || (uint64_t)(host - gm->host) > gm->size ||
	    len > gm->size - (uint64_t)(host - gm->host) || b->discard(host, len) < 0)
		counter_add(&b->stats.discard_fails, 1);
}

/* One inflate chain: its PFNs, each checked against guest RAM, discarded
 * in runs of host-contiguous pages. */
static void inflate_chain(struct virtio_balloon *b, const struct virtq_elem *e)
{
	uint32_t pfn[BALLOON_PFNS_MAX];
	uint32_t n = e->out_len / sizeof(uint32_t);
	if (e->in_num || e->out_len % sizeof(uint32_t) || n > BALLOON_PFNS_MAX) {
		counter_add(&b->stats.bad_chains, 1);
		return;
	}
	/* Relaxed: virtq_pop's acquire fence orders it after the avail index. */
	dma_sg_read_relaxed(e->iov, e->out_num, 0, pfn, n * sizeof(uint32_t));
	uint8_t *run = NULL;
	size_t run_len = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *p = guest_mem_ptr(b->vdev.gm, (uint64_t)pfn[i] << VIRTIO_BALLOON_PFN_SHIFT,
					   PAGE_4K);
		if (!p) {
			counter_add(&b->stats.bad_pfns, 1);
			continue;
		}
		counter_add(&b->stats.inflated, 1);
		if (run && p == run + run_len) {
			run_len += PAGE_4K;
			continue;
		}
		if (run)
			balloon_discard(b, run, run_len);
		run = p;
		run_len = PAGE_4K;
	}
	if (run)
		balloon_discard(b, run, run_len);
}

/* Deflate: the pages fault back in when the guest touches them. */
static void deflate_chain(struct virtio_balloon *b, const struct virtq_elem *e)
{
	if (e->in_num || e->out_len % sizeof(uint32_t) ||
	    e->out_len / sizeof(uint32_t) > BALLOON_PFNS_MAX) {
		counter_add(&b->stats.bad_chains, 1);
		return;
	}
	counter_add(&b->stats.deflated, e->out_len / sizeof(uint32_t));
}

/* Free page reporting: each buffer is free guest memory (its content is
 * not read); the whole 4 KiB pages inside it go back. */
static void report_chain(struct virtio_balloon *b, const struct virtq_elem *e)
{
	uint8_t *base = b->vdev.gm->host; /* pages are aligned from it, as in the guest */
	for (unsigned int i = 0; i < e->out_num + e->in_num; i++) {
		uint64_t s = (uint64_t)((uint8_t *)e->iov[i].iov_base - base);
		uint64_t end = s + e->iov[i].iov_len;
		s = (s + PAGE_4K - 1) & ~(PAGE_4K - 1);
		end &= ~(PAGE_4K - 1);
		if (end <= s)
			continue;
		balloon_discard(b, base + s, end - s);
		counter_add(&b->stats.reported, end - s);
	}
}

/* Runs queue q to empty or to its budget, then the transport calls again
 * or, without a kick eventfd, the guest's next kick does (Linux's driver
 * keeps one chain in flight per queue and kicks it). Never on past the
 * budget: a guest re-posting from another vCPU would hold mu, and the
 * stats timer's I/O thread, the API's update and the stop behind it, for
 * as long as it liked. mu held. */
static void balloon_run(struct virtio_balloon *b, unsigned int q)
{
	struct virtq *vq = &b->vdev.vqs[q];
	const struct guest_mem *gm = b->vdev.gm;
	const struct virtio_transport_ops *t = b->vdev.transport;
	enum balloon_role role = b->role[q];
	if (role == BQ_STATS)
		return balloon_stats_take(b, vq);
	unsigned int budget = BALLOON_POP_BUDGET;
	bool pushed = false;
	while (b->active) {
		if (!budget--) {
			if (t->queue_resched)
				t->queue_resched(&b->vdev, q);
			break;
		}
		if (virtq_pop(vq, gm, &b->elem) <= 0)
			break;
		if (role == BQ_INFLATE) {
			counter_add(&b->stats.inflates, 1);
			inflate_chain(b, &b->elem);
		} else if (role == BQ_DEFLATE) {
			counter_add(&b->stats.deflates, 1);
			deflate_chain(b, &b->elem);
		} else {
			counter_add(&b->stats.reports, 1);
			report_chain(b, &b->elem);
		}
		if (virtq_push(vq, gm, b->elem.head, 0) < 0)
			break;
		pushed = true;
	}
	if (pushed)
		virtio_notify_if_needed(&b->vdev, q);
}

/* ---- virtio_dev_ops ---- */

static void balloon_config_read(struct virtio_dev *vdev, uint32_t offset, void *buf, uint32_t len)
{
	struct virtio_balloon *b = balloon_of(vdev);
	uint32_t cfg[2] = {atomic_load(&b->num_pages), atomic_load(&b->actual)}; /* LE host */
	memset(buf, 0, len);
	if (offset < sizeof(cfg))
		memcpy(buf, (uint8_t *)cfg + offset,
		       len < sizeof(cfg) - offset ? len : sizeof(cfg) - offset);
}

/* The driver writes actual, the pages it holds; num_pages is the host's. */
static void balloon_config_write(struct virtio_dev *vdev, uint32_t offset, const void *buf,
				 uint32_t len)
{
	struct virtio_balloon *b = balloon_of(vdev);
	uint32_t at = offsetof(struct virtio_balloon_config, actual);
	if (offset < at || offset >= at + sizeof(uint32_t) || len > at + sizeof(uint32_t) - offset)
		return;
	uint32_t actual = atomic_load(&b->actual);
	memcpy((uint8_t *)&actual + (offset - at), buf, len);
	atomic_store(&b->actual, actual);
}

/* Queue q's job: the present queues in the driver's order. */
static void balloon_roles(struct virtio_balloon *b)
{
	unsigned int q = 0;
	b->role[q++] = BQ_INFLATE;
	b->role[q++] = BQ_DEFLATE;
	if (virtio_has_feature(&b->vdev, VIRTIO_BALLOON_F_STATS_VQ))
		b->role[q++] = BQ_STATS;
	if (virtio_has_feature(&b->vdev, VIRTIO_BALLOON_F_REPORTING))
		b->role[q++] = BQ_REPORT;
	while (q < 4)
		b->role[q++] = BQ_NONE;
}

static int balloon_activate(struct virtio_dev *vdev)
{
	struct virtio_balloon *b = balloon_of(vdev);
	pthread_mutex_lock(&b->mu);
	balloon_roles(b);
	b->active = true;
	b->stats_head = balloon_stats_held(b);
	b->restored_head = -1;
	for (unsigned int q = 0; q < vdev->num_queues; q++)
		if (b->role[q] != BQ_NONE)
			balloon_run(b, q); /* posted before DRIVER_OK: no kick came */
	balloon_stats_arm(b, false);
	pthread_mutex_unlock(&b->mu);
	return 0;
}

/* Nothing is in flight outside mu: once it is held, the rings may go (a
 * held stats buffer goes with them). */
static void balloon_reset(struct virtio_dev *vdev)
{
	struct virtio_balloon *b = balloon_of(vdev);
	pthread_mutex_lock(&b->mu);
	b->active = false;
	b->stats_head = b->restored_head = -1;
	atomic_store(&b->actual, 0);
	balloon_stats_arm(b, false);
	pthread_mutex_unlock(&b->mu);
}

static void balloon_queue_notify(struct virtio_dev *vdev, unsigned int q)
{
	struct virtio_balloon *b = balloon_of(vdev);
	if (q >= vdev->num_queues)
		return;
	counter_add(&b->stats.kicks, 1);
	pthread_mutex_lock(&b->mu);
	if (b->role[q] != BQ_NONE)
		balloon_run(b, q);
	pthread_mutex_unlock(&b->mu);
}

static const struct virtio_dev_ops balloon_ops = {
    .config_read = balloon_config_read,
    .config_write = balloon_config_write,
    .activate = balloon_activate,
    .reset = balloon_reset,
    .queue_notify = balloon_queue_notify,
};

/* ---- creation, updates ---- */

static bool amount_fits(const struct virtio_balloon *b, unsigned int mib)
{
	return (uint64_t)mib * BALLOON_PAGES_PER_MIB <= b->ram_pages;
}

struct virtio_dev *virtio_balloon_create(const char *name, const struct balloon_spec *s,
					 const struct guest_mem *gm, char *err, size_t errlen)
{
	struct virtio_balloon *b = calloc(1, sizeof(*b));
	if (!b) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snprintf(b->name, sizeof(b->name), "%s", name);
	b->spec = *s;
	b->ram_pages = gm->size >> VIRTIO_BALLOON_PFN_SHIFT;
	b->stats_head = b->restored_head = -1;
	b->discard = discard_host;
	atomic_store(&b->num_pages, s->amount_mib * BALLOON_PAGES_PER_MIB);
	struct virtio_dev *vdev = &b->vdev;
	vdev->name = b->name;
	vdev->device_id = VIRTIO_ID_BALLOON;
	vdev->host_features = (s->deflate_on_oom ? 1ull << VIRTIO_BALLOON_F_DEFLATE_ON_OOM : 0) |
			      (s->stats_s ? 1ull << VIRTIO_BALLOON_F_STATS_VQ : 0) |
			      (s->reporting ? 1ull << VIRTIO_BALLOON_F_REPORTING : 0);
	vdev->config_len = BALLOON_CONFIG_LEN;
	vdev->num_queues = 2 + (s->stats_s != 0) + s->reporting;
	vdev->queue_max_size = BALLOON_QSIZE;
	/* Inflating discards with madvise: on the vCPU, no IPIs into a
	 * running guest (docs/bench/2026-12-06-irqdiag). */
	vdev->kicks_on_vcpu = true;
	vdev->ops = &balloon_ops;
	vdev->priv = b;
	vdev->gm = gm;
	for (unsigned int q = 0; q < vdev->num_queues; q++)
		vdev->queue_lock[q] = &b->mu;
	poll_policy_default(&vdev->poll);
	pthread_mutex_init(&vdev->lock, NULL);
	pthread_mutex_init(&b->mu, NULL);
	b->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (!amount_fits(b, s->amount_mib) || b->tfd < 0) {
		snprintf(err, errlen, "%s",
			 b->tfd < 0 ? "cannot create the stats timer"
				    : "Amount of pages requested is too large.");
		virtio_balloon_destroy(vdev);
		return NULL;
	}
	return vdev;
}

void virtio_balloon_destroy(struct virtio_dev *vdev)
{
	struct virtio_balloon *b = balloon_of(vdev);
	if (b->tfd >= 0)
		close(b->tfd);
	pthread_mutex_destroy(&b->mu);
	pthread_mutex_destroy(&vdev->lock);
	free(b);
}

int virtio_balloon_update(struct virtio_dev *vdev, const char *spec, char *err, size_t errlen)
{
	struct virtio_balloon *b = balloon_of(vdev);
	struct balloon_update u = {UINT_MAX, UINT_MAX};
	if (opt_parse_spec(&update_table, spec, &u, err, errlen) < 0)
		return -1;
	int r = 0;
	pthread_mutex_lock(&b->mu);
	if (!b->active) {
		snprintf(err, errlen,
			 "Device is inactive, check if balloon driver is enabled in guest kernel.");
		r = -1;
	} else if (u.amount_mib != UINT_MAX && !amount_fits(b, u.amount_mib)) {
		snprintf(err, errlen, "Amount of pages requested is too large.");
		r = -1;
	} else if (u.stats_s != UINT_MAX && (u.stats_s == 0) != (b->spec.stats_s == 0)) {
		snprintf(err, errlen, "Cannot enable/disable the statistics after boot.");
		r = -1;
	}
	if (!r && u.amount_mib != UINT_MAX) {
		b->spec.amount_mib = u.amount_mib;
		atomic_store(&b->num_pages, u.amount_mib * BALLOON_PAGES_PER_MIB);
		atomic_fetch_add(&vdev->config_generation, 1);
		counter_add(&b->stats.config_updates, 1);
	}
	if (!r && u.stats_s != UINT_MAX) {
		b->spec.stats_s = u.stats_s;
		balloon_stats_arm(b, true); /* the first update at once */
	}
	pthread_mutex_unlock(&b->mu);
	/* Outside mu: the interrupt takes the transport's own lock. */
	if (!r && u.amount_mib != UINT_MAX && vdev->transport && vdev->transport->notify_config)
		vdev->transport->notify_config(vdev);
	return r;
}
