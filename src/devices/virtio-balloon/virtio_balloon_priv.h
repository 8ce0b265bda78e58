// SPDX-License-Identifier: Apache-2.0
/* virtio-balloon's state, for its own files and its tests. */
#ifndef SKIFF_VIRTIO_BALLOON_PRIV_H
#define SKIFF_VIRTIO_BALLOON_PRIV_H

#include <linux/virtio_balloon.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/counter.h"
#include "devices/virtio-balloon/virtio_balloon.h"
#include "virtio/virtio_dev.h"

/* What a queue does; the driver numbers the present ones in this order. */
enum balloon_role { BQ_INFLATE, BQ_DEFLATE, BQ_STATS, BQ_REPORT, BQ_NONE };

/* Relaxed atomics: bumped under mu, read by stats from any thread. */
struct virtio_balloon_stats {
	counter_t kicks;
	counter_t inflates;	  /* inflate chains, Firecracker's inflate_count */
	counter_t inflated;	  /* pages discarded */
	counter_t deflates;	  /* deflate chains, deflate_count */
	counter_t deflated;	  /* pages the guest took back */
	counter_t bad_pfns;	  /* outside guest RAM: skipped */
	counter_t bad_chains;	  /* refused whole */
	counter_t discard_fails;  /* madvise said no */
	counter_t stats_updates;  /* buffers read, stats_updates_count */
	counter_t stats_fails;	  /* odd length, unknown tag: stats_update_fails */
	counter_t stats_missed;	  /* the timer found no buffer to give back */
	counter_t reports;	  /* reporting chains, free_page_report_count */
	counter_t reported;	  /* bytes discarded from them */
	counter_t config_updates; /* new targets sent */
};

/* Guest statistics by tag (VIRTIO_BALLOON_S_*), those seen in `have`. */
struct balloon_guest_stats {
	uint32_t have; /* bit per tag */
	uint64_t val[VIRTIO_BALLOON_S_NR];
};

struct virtio_balloon {
	struct virtio_dev vdev;
	char name[24];
	pthread_mutex_t mu; /* all below but stats; the queues */
	bool active;	    /* DRIVER_OK and not reset */
	struct balloon_spec spec;
	uint64_t ram_pages;			/* guest RAM, for the target's check */
	_Atomic uint32_t num_pages, actual;	/* the config space */
	enum balloon_role role[4];		/* per queue, from the negotiated features */
	int stats_head;				/* the held stats buffer, or -1 */
	int restored_head;			/* stats_head from a snapshot, for activate */
	struct balloon_guest_stats gstats;	/* the last complete read */
	int tfd;				/* the stats timer */
	struct iothread *io;			/* set by start */
	int (*discard)(void *host, size_t len); /* madvise DONTNEED; tests' stand-in */
	struct virtio_balloon_stats stats;
	struct virtq_elem elem;
};

/* virtio_balloon_stats.c: the stats queue and its timer. mu held. */
void balloon_stats_take(struct virtio_balloon *b, struct virtq *vq);
void balloon_stats_arm(struct virtio_balloon *b, bool now);
void balloon_stats_give_back(struct virtio_balloon *b);
/* At activate (roles set): the snapshot's held stats head if its queue
 * still holds that one chain, else -1. */
int balloon_stats_held(const struct virtio_balloon *b);
/* "stat NAME" for each statistic in g, under Firecracker's names. */
void balloon_guest_stats_emit(const char *owner, const struct balloon_guest_stats *g,
			      counter_emit_fn emit, void *ctx);

#endif
