// SPDX-License-Identifier: Apache-2.0
/* Split virtqueues (virtio 1.2 §2.7), device side: the one ring layer every
 * virtio device uses over any transport.
 *
 * Trust model: everything in guest memory is hostile and may change under
 * us at any time. Each guest-shared field is read once into a local, then
 * checked; the host keeps its own copy of every index it owns (last_avail_idx,
 * used_idx) and never reads those back from the guest. Any violation marks
 * the queue broken (the virtio answer: DEVICE_NEEDS_RESET, config interrupt,
 * stop using the queue); from then on nothing here touches guest memory
 * until virtq_reset().
 *
 * Threads: configuration (virtq_set_*, virtq_activate, virtq_reset) runs
 * while the device's I/O thread is not using the queue (the transport
 * ensures that); everything else runs on one I/O thread per queue.
 *
 * Byte order: virtio 1.x rings are little-endian and so is the host (x86);
 * fields are used as-is (a static assertion in virtq.c checks it). Legacy
 * (pre-1.0) guests are not supported. */
#ifndef SKIFF_VIRTQ_H
#define SKIFF_VIRTQ_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "core/counter.h"
#include "core/guest_mem.h"
#include "core/log.h"

#define VIRTQ_MAX_SIZE 32768 /* spec limit for a split queue */
/* Segments one element may have (direct + indirect). Devices must advertise
 * queue sizes and seg_max within it; QEMU uses the same bound (1024). */
#define VIRTQ_MAX_SEGS 1024
/* Spec: a chain is at most 2^32 - 1 bytes in total (used.len is 32 bits). */
#define VIRTQ_MAX_TOTAL_LEN 0xFFFFFFFFULL

/* Descriptor flags, ring flags (spec values). */
#define VIRTQ_DESC_F_NEXT	   1
#define VIRTQ_DESC_F_WRITE	   2
#define VIRTQ_DESC_F_INDIRECT	   4
#define VIRTQ_AVAIL_F_NO_INTERRUPT 1
#define VIRTQ_USED_F_NO_NOTIFY	   1
/* Feature bit numbers that change ring handling. */
#define VIRTQ_F_INDIRECT_DESC 28
#define VIRTQ_F_EVENT_IDX     29

struct virtq_desc { /* guest layout */
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

struct virtq_used_elem { /* guest layout */
	uint32_t id;	 /* head index of the completed chain */
	uint32_t len;	 /* bytes the device wrote */
};

/* Reasons a queue breaks or a configuration write is refused; counted in
 * vq->stats.err[]. virtq_err_str() gives the log text. */
enum virtq_err {
	VIRTQ_ERR_AVAIL_AHEAD,	    /* avail idx > queue size ahead */
	VIRTQ_ERR_INFLIGHT,	    /* more chains in flight than queue size */
	VIRTQ_ERR_HEAD_RANGE,	    /* head index >= queue size */
	VIRTQ_ERR_NEXT_RANGE,	    /* next index >= table size */
	VIRTQ_ERR_CHAIN_LOOP,	    /* chain loops / longer than queue size */
	VIRTQ_ERR_BUF_RANGE,	    /* buffer not inside guest RAM */
	VIRTQ_ERR_TOTAL_LEN,	    /* chain longer than 4 GiB - 1 in total */
	VIRTQ_ERR_TOO_MANY_SEGS,    /* more than VIRTQ_MAX_SEGS buffers */
	VIRTQ_ERR_WRITE_ORDER,	    /* readable buffer after a writable one */
	VIRTQ_ERR_INDIRECT_FEATURE, /* INDIRECT without the feature */
	VIRTQ_ERR_INDIRECT_NEXT,    /* INDIRECT together with NEXT */
	VIRTQ_ERR_INDIRECT_NESTED,  /* INDIRECT inside an indirect table */
	VIRTQ_ERR_INDIRECT_LEN,	    /* table len 0 or not a multiple of 16 */
	VIRTQ_ERR_INDIRECT_SIZE,    /* table has more than VIRTQ_MAX_SEGS entries */
	VIRTQ_ERR_INDIRECT_RANGE,   /* table not inside guest RAM */
	VIRTQ_ERR_INDIRECT_LOOP,    /* chain inside a table loops */
	VIRTQ_ERR_RING_RANGE,	    /* a ring not inside guest RAM at activation */
	VIRTQ_ERR_RING_ALIGN,	    /* a ring misaligned at activation */
	VIRTQ_ERR_FROZEN,	    /* config write after activation: refused */
	VIRTQ_ERR_BAD_SIZE,	    /* size not a power of 2 in 1..max: refused */
	VIRTQ_ERR_BAD_PUSH,	    /* device bug: push of an unknown head: refused */
	VIRTQ_ERR_DEVICE,	    /* device model found a protocol violation */
	VIRTQ_ERR_NR
};

struct virtq_stats {
	counter_t popped, pushed;
	counter_t notified, suppressed; /* virtq_should_notify() true / false */
	counter_t err[VIRTQ_ERR_NR];
};

/* One popped chain. iov[0, out_num) are device-readable, then
 * iov[out_num, out_num + in_num) device-writable: the spec orders them so,
 * and virtq_pop enforces it. iov_base points into guest RAM (already
 * range-checked): devices access it only through core/dma.h. out_len and
 * in_len are byte totals. ~16 KiB: keep off small stacks. */
struct virtq_elem {
	uint16_t head;
	unsigned int out_num, in_num;
	uint32_t out_len, in_len;
	struct iovec iov[VIRTQ_MAX_SEGS];
};

struct virtq;
/* Called once when the queue breaks; the transport sets DEVICE_NEEDS_RESET
 * and raises a config interrupt. */
typedef void (*virtq_broken_fn)(struct virtq *vq, void *opaque);

enum virtq_ring { VIRTQ_RING_DESC, VIRTQ_RING_AVAIL, VIRTQ_RING_USED };

struct virtq {
	/* Set by virtq_init, kept across reset. */
	char name[40]; /* for logs: "virtio-net0 q1" */
	uint16_t max_size;
	virtq_broken_fn on_broken;
	void *opaque;
	struct virtq_stats stats; /* cumulative across resets */
	struct log_rl log_rl;	  /* its lines, rate-limited (a guest could loop resets) */

	/* Driver configuration; frozen once enabled. */
	uint16_t size; /* power of 2, <= max_size */
	uint64_t desc_gpa, avail_gpa, used_gpa;
	bool event_idx, indirect; /* negotiated features */
	bool enabled;		  /* activated: rings checked and mapped */

	/* Host-side state, never read back from the guest. */
	uint8_t *desc, *avail, *used; /* host pointers, set at activation */
	uint16_t last_avail_idx;      /* next avail ring slot to consume */
	uint16_t used_idx;	      /* shadow of used->idx */
	uint16_t signalled_used;      /* used_idx at the last notify decision */
	bool signalled_used_valid;
	bool notify_enabled; /* guest kicks wanted (see virtq_disable_notify) */
	bool poll_held;	     /* a poller holds kicks off (virtq_poll_hold) */
	uint16_t used_flags; /* shadow of used->flags */
	bool broken;
	enum virtq_err broken_reason;
};

/* max_size: power of 2 in 1..VIRTQ_MAX_SIZE. Returns 0, or -1 if invalid. */
int virtq_init(struct virtq *vq, const char *name, uint16_t max_size, virtq_broken_fn on_broken,
	       void *opaque);
/* Device reset: everything but name, max_size, callback and stats back to
 * the initial state (size = max_size, not enabled, not broken). */
void virtq_reset(struct virtq *vq);

/* Configuration from the transport. Each returns 0, or -1 (counted in
 * stats, value unchanged) if the queue is enabled or broken, or the value is
 * invalid. size is u32 so a bogus 65536 is not truncated. */
int virtq_set_size(struct virtq *vq, uint32_t size);
int virtq_set_addr(struct virtq *vq, enum virtq_ring ring, uint64_t gpa);
int virtq_set_features(struct virtq *vq, uint64_t features); /* negotiated bits */

/* Checks ring alignment (16/2/4) and that all three rings lie in RAM, then
 * enables the queue; from here size, addresses and features are frozen.
 * Returns 0, or -1 with the queue broken. Calling it again is a no-op. */
int virtq_activate(struct virtq *vq, const struct guest_mem *gm);

/* Pops the next available chain into elem. Returns 1 if popped, 0 if the
 * ring is empty (or the queue not enabled), -1 if the queue is broken.
 * Every popped chain must later be pushed (len 0 if nothing was written) or
 * unpopped: more than size chains in flight breaks the queue.
 * With EVENT_IDX and kicks enabled, avail_event moves only when a pop finds
 * the ring empty (or in virtq_enable_notify), so the guest kicks once per
 * batch: a device that stops popping early must resume on its own. */
int virtq_pop(struct virtq *vq, const struct guest_mem *gm, struct virtq_elem *elem);
/* Gives back the most recently popped, not yet pushed chain; the next pop
 * returns it again. Returns 0, or -1 if nothing is in flight. */
int virtq_unpop(struct virtq *vq);
/* Another consumer (vhost) ran the ring and stopped: continue at its
 * next avail index and at the used index it published, read back from the
 * ring (the one index taken from guest memory; checked: at most size in
 * flight, or the queue breaks). Returns 0 or -1. */
int virtq_resume_at(struct virtq *vq, uint16_t last_avail);

/* Publishes completed chains: used elements, release fence, then used idx.
 * Chains may complete in any order. Returns 0, or -1 if the queue is broken
 * or not enabled, a head is out of range, or more are pushed than are in
 * flight (nothing is written then). gm is unused today (rings are mapped at
 * activation) and kept so callers do not change if that does. */
int virtq_push(struct virtq *vq, const struct guest_mem *gm, uint16_t head, uint32_t written_len);
int virtq_push_batch(struct virtq *vq, const struct guest_mem *gm,
		     const struct virtq_used_elem *elems, unsigned int n);

/* After pushing: true if the guest wants an interrupt now (used_event with
 * EVENT_IDX, else the avail NO_INTERRUPT flag). False when broken. */
bool virtq_should_notify(struct virtq *vq, const struct guest_mem *gm);

/* Kick suppression for a polling I/O thread:
 *   virtq_disable_notify(); while (pop) ...; if (!virtq_enable_notify()) sleep;
 * virtq_enable_notify re-arms kicks, fences, and re-checks the avail index:
 * true means work arrived meanwhile (a kick may not come): poll again. */
void virtq_disable_notify(struct virtq *vq, const struct guest_mem *gm);
bool virtq_enable_notify(struct virtq *vq, const struct guest_mem *gm);
/* True if the avail index is ahead of what we consumed (not validated:
 * virtq_pop does that). False when broken or not enabled. */
bool virtq_has_work(struct virtq *vq, const struct guest_mem *gm);
/* For an I/O-thread poller: hold=true turns kicks off and keeps them off
 * even when the device calls virtq_enable_notify (which then only
 * re-checks the ring); hold=false turns them back on and, like
 * virtq_enable_notify, returns true if work arrived meanwhile. */
bool virtq_poll_hold(struct virtq *vq, const struct guest_mem *gm, bool hold);

/* For device models that find a protocol violation (e.g. a request header
 * too short): breaks the queue like a ring violation. Returns -1. */
int virtq_mark_broken(struct virtq *vq, enum virtq_err reason);
const char *virtq_err_str(enum virtq_err err);
/* Lists the queue's counters (popped, pushed, guest errors) for stats. */
void virtq_counters(const struct virtq *vq, counter_emit_fn emit, void *ctx);

#endif
