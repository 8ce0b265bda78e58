// SPDX-License-Identifier: Apache-2.0
/* Split virtqueue, device side. See virtq.h for the trust model.
 *
 * Memory ordering follows the rule in core/dma.h: ring memory is
 * accessed without per-access fences, and each place where order matters has
 * one explicit fence with a comment naming the race it prevents. Ring index
 * fields are plain uint16_t in guest memory, accessed with __atomic builtins
 * (aligned: virtq_activate checks ring alignment). */
#include "virtio/virtq.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core/dirty.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "virtq uses little-endian virtio ring fields as-is");
_Static_assert(sizeof(struct virtq_desc) == 16, "descriptor layout");
_Static_assert(sizeof(struct virtq_used_elem) == 8, "used element layout");

#define VQ_OK VIRTQ_ERR_NR /* "no error" for the chain walker */

static const char *const vq_err_text[VIRTQ_ERR_NR] = {
    [VIRTQ_ERR_AVAIL_AHEAD] = "avail index more than queue size ahead",
    [VIRTQ_ERR_INFLIGHT] = "more chains in flight than queue size",
    [VIRTQ_ERR_HEAD_RANGE] = "head index out of range",
    [VIRTQ_ERR_NEXT_RANGE] = "next index out of range",
    [VIRTQ_ERR_CHAIN_LOOP] = "descriptor chain loops",
    [VIRTQ_ERR_BUF_RANGE] = "buffer outside guest RAM",
    [VIRTQ_ERR_TOTAL_LEN] = "chain longer than 4 GiB in total",
    [VIRTQ_ERR_TOO_MANY_SEGS] = "too many descriptors in chain",
    [VIRTQ_ERR_WRITE_ORDER] = "readable descriptor after writable one",
    [VIRTQ_ERR_INDIRECT_FEATURE] = "indirect descriptor not negotiated",
    [VIRTQ_ERR_INDIRECT_NEXT] = "indirect descriptor with NEXT flag",
    [VIRTQ_ERR_INDIRECT_NESTED] = "nested indirect table",
    [VIRTQ_ERR_INDIRECT_LEN] = "indirect table length not a multiple of 16",
    [VIRTQ_ERR_INDIRECT_SIZE] = "indirect table too large",
    [VIRTQ_ERR_INDIRECT_RANGE] = "indirect table outside guest RAM",
    [VIRTQ_ERR_INDIRECT_LOOP] = "indirect descriptor chain loops",
    [VIRTQ_ERR_RING_RANGE] = "ring outside guest RAM",
    [VIRTQ_ERR_RING_ALIGN] = "misaligned ring address",
    [VIRTQ_ERR_FROZEN] = "queue reconfigured after activation",
    [VIRTQ_ERR_BAD_SIZE] = "invalid queue size",
    [VIRTQ_ERR_BAD_PUSH] = "device pushed a chain it did not pop",
    [VIRTQ_ERR_DEVICE] = "device protocol violation",
};

const char *virtq_err_str(enum virtq_err err)
{
	return (unsigned int)err < VIRTQ_ERR_NR ? vq_err_text[err] : "unknown error";
}

/* Guest ring fields (spec layout; the event fields sit after the rings). */
static uint16_t *vq_avail_flags(const struct virtq *vq)
{
	return (uint16_t *)vq->avail;
}

static uint16_t *vq_avail_idx(const struct virtq *vq)
{
	return (uint16_t *)(vq->avail + 2);
}

static uint16_t *vq_avail_ring(const struct virtq *vq, uint32_t i)
{
	return (uint16_t *)(vq->avail + 4 + 2 * (size_t)i);
}

static uint16_t *vq_used_event(const struct virtq *vq)
{
	return vq_avail_ring(vq, vq->size);
}

static uint8_t *vq_used_ring(const struct virtq *vq, uint32_t i)
{
	return vq->used + 4 + 8 * (size_t)i;
}

static uint16_t *vq_avail_event(const struct virtq *vq)
{
	return (uint16_t *)vq_used_ring(vq, vq->size);
}

static void vq_log(struct virtq *vq, enum virtq_err err, const char *outcome)
{
	log_rl_at(&vq->log_rl, LOG_WARN, "%s: %s; %s", vq->name, virtq_err_str(err), outcome);
}

/* Counts the violation and breaks the queue; the first break logs and tells
 * the transport. Always returns -1. */
static int vq_fail(struct virtq *vq, enum virtq_err err)
{
	counter_add(&vq->stats.err[err], 1);
	if (vq->broken)
		return -1;
	vq->broken = true;
	vq->broken_reason = err;
	vq_log(vq, err, "queue stopped");
	if (vq->on_broken)
		vq->on_broken(vq, vq->opaque);
	return -1;
}

/* Counts a refused request that leaves the queue usable. Returns -1. */
static int vq_refuse(struct virtq *vq, enum virtq_err err)
{
	counter_add(&vq->stats.err[err], 1);
	vq_log(vq, err, "request ignored");
	return -1;
}

int virtq_mark_broken(struct virtq *vq, enum virtq_err reason)
{
	return vq_fail(vq, (unsigned int)reason < VIRTQ_ERR_NR ? reason : VIRTQ_ERR_DEVICE);
}

static bool vq_size_ok(uint32_t size, uint32_t max)
{
	return size != 0 && size <= max && (size & (size - 1)) == 0;
}

int virtq_init(struct virtq *vq, const char *name, uint16_t max_size, virtq_broken_fn on_broken,
	       void *opaque)
{
	memset(vq, 0, sizeof(*vq));
	if (!vq_size_ok(max_size, VIRTQ_MAX_SIZE))
		return -1;
	snprintf(vq->name, sizeof(vq->name), "%s", name ? name : "virtq");
	vq->max_size = max_size;
	vq->on_broken = on_broken;
	vq->opaque = opaque;
	virtq_reset(vq);
	return 0;
}

void virtq_reset(struct virtq *vq)
{
	vq->size = vq->max_size;
	vq->desc_gpa = vq->avail_gpa = vq->used_gpa = 0;
	vq->event_idx = vq->indirect = vq->enabled = false;
	vq->desc = vq->avail = vq->used = NULL;
	vq->last_avail_idx = vq->used_idx = vq->signalled_used = 0;
	vq->signalled_used_valid = false;
	vq->notify_enabled = true;
	vq->poll_held = false;
	vq->used_flags = 0;
	vq->broken = false;
	vq->broken_reason = VIRTQ_ERR_NR;
}

/* Size, addresses and features are frozen once the queue is enabled: the
 * walker's bounds come from them (a late size change is CVE-2026-5747). */
static int vq_check_unfrozen(struct virtq *vq)
{
	return vq->enabled || vq->broken ? vq_refuse(vq, VIRTQ_ERR_FROZEN) : 0;
}

int virtq_set_size(struct virtq *vq, uint32_t size)
{
	if (vq_check_unfrozen(vq))
		return -1;
	if (!vq_size_ok(size, vq->max_size))
		return vq_refuse(vq, VIRTQ_ERR_BAD_SIZE);
	vq->size = (uint16_t)size;
	return 0;
}

int virtq_set_addr(struct virtq *vq, enum virtq_ring ring, uint64_t gpa)
{
	if (vq_check_unfrozen(vq))
		return -1;
	switch (ring) {
	case VIRTQ_RING_DESC:
		vq->desc_gpa = gpa;
		return 0;
	case VIRTQ_RING_AVAIL:
		vq->avail_gpa = gpa;
		return 0;
	case VIRTQ_RING_USED:
		vq->used_gpa = gpa;
		return 0;
	}
	return -1;
}

int virtq_set_features(struct virtq *vq, uint64_t features)
{
	if (vq_check_unfrozen(vq))
		return -1;
	vq->indirect = (features >> VIRTQ_F_INDIRECT_DESC) & 1;
	vq->event_idx = (features >> VIRTQ_F_EVENT_IDX) & 1;
	return 0;
}

int virtq_activate(struct virtq *vq, const struct guest_mem *gm)
{
	uint64_t n = vq->size;

	if (vq->broken)
		return -1;
	if (vq->enabled)
		return 0;
	/* Spec alignment: descriptors 16, avail ring 2, used ring 4. */
	if ((vq->desc_gpa & 15) || (vq->avail_gpa & 1) || (vq->used_gpa & 3))
		return vq_fail(vq, VIRTQ_ERR_RING_ALIGN);
	/* Sizes include used_event/avail_event, whether or not negotiated. */
	vq->desc = guest_mem_ptr(gm, vq->desc_gpa, 16 * n);
	vq->avail = guest_mem_ptr(gm, vq->avail_gpa, 6 + 2 * n);
	vq->used = guest_mem_ptr(gm, vq->used_gpa, 6 + 8 * n);
	if (!vq->desc || !vq->avail || !vq->used) {
		vq->desc = vq->avail = vq->used = NULL;
		return vq_fail(vq, VIRTQ_ERR_RING_RANGE);
	}
	vq->enabled = true;
	return 0;
}

/* Reads the guest's avail index once. */
static uint16_t vq_load_avail_idx(const struct virtq *vq)
{
	uint16_t idx = __atomic_load_n(vq_avail_idx(vq), __ATOMIC_RELAXED);
	/* Acquire: ring slots, descriptors and buffers the guest wrote before
	 * publishing idx must not be read before it (we would see stale
	 * entries). Devices' relaxed reads (core/dma.h) rely on this fence. */
	atomic_thread_fence(memory_order_acquire);
	return idx;
}

/* Copies one descriptor out of guest memory; only the copy is used after.
 * Ordered by the acquire fence in vq_load_avail_idx (core/dma.h rule). */
static void vq_read_desc(const uint8_t *table, uint32_t i, struct virtq_desc *d)
{
	memcpy(d, table + 16 * (size_t)i, sizeof(*d));
	/* Compiler barrier: memory may have changed, so the compiler cannot
	 * re-load a field from the guest instead of the copy (double fetch). */
	atomic_signal_fence(memory_order_seq_cst);
}

static enum virtq_err vq_add_buf(const struct guest_mem *gm, const struct virtq_desc *d,
				 struct virtq_elem *elem, uint64_t *total)
{
	unsigned int n = elem->out_num + elem->in_num;
	bool is_write = d->flags & VIRTQ_DESC_F_WRITE;
	void *p;

	if (n >= VIRTQ_MAX_SEGS)
		return VIRTQ_ERR_TOO_MANY_SEGS;
	if (!is_write && elem->in_num)
		return VIRTQ_ERR_WRITE_ORDER;
	p = guest_mem_ptr(gm, d->addr, d->len); /* rejects gpa + len overflow */
	if (!p)
		return VIRTQ_ERR_BUF_RANGE;
	*total += d->len; /* both terms < 2^32: cannot overflow u64 */
	if (*total > VIRTQ_MAX_TOTAL_LEN)
		return VIRTQ_ERR_TOTAL_LEN;
	elem->iov[n].iov_base = p;
	elem->iov[n].iov_len = d->len;
	if (is_write) {
		elem->in_num++;
		elem->in_len += d->len;
	} else {
		elem->out_num++;
		elem->out_len += d->len;
	}
	return VQ_OK;
}

/* Walks the chain at head: zero or more direct descriptors, optionally
 * ending in one indirect descriptor whose table holds the rest (spec
 * 2.7.5.3). Each table is visited at most as many times as it has entries,
 * so loops end. */
static enum virtq_err vq_walk(const struct virtq *vq, const struct guest_mem *gm, uint16_t head,
			      struct virtq_elem *elem)
{
	const uint8_t *table = vq->desc;
	uint32_t table_n = vq->size, budget = vq->size, i = head;
	bool in_indirect = false;
	uint64_t total = 0;
	struct virtq_desc d;
	enum virtq_err err;

	for (;;) {
		if (budget-- == 0)
			return in_indirect ? VIRTQ_ERR_INDIRECT_LOOP : VIRTQ_ERR_CHAIN_LOOP;
		vq_read_desc(table, i, &d);
		if (d.flags & VIRTQ_DESC_F_INDIRECT) {
			if (in_indirect)
				return VIRTQ_ERR_INDIRECT_NESTED;
			if (!vq->indirect)
				return VIRTQ_ERR_INDIRECT_FEATURE;
			if (d.flags & VIRTQ_DESC_F_NEXT)
				return VIRTQ_ERR_INDIRECT_NEXT;
			if (d.len == 0 || d.len % 16)
				return VIRTQ_ERR_INDIRECT_LEN;
			if (d.len / 16 > VIRTQ_MAX_SEGS)
				return VIRTQ_ERR_INDIRECT_SIZE;
			table = guest_mem_ptr(gm, d.addr, d.len);
			if (!table)
				return VIRTQ_ERR_INDIRECT_RANGE;
			/* The WRITE flag of the indirect descriptor is ignored (spec). */
			table_n = budget = d.len / 16;
			i = 0;
			in_indirect = true;
			continue;
		}
		err = vq_add_buf(gm, &d, elem, &total);
		if (err != VQ_OK)
			return err;
		if (!(d.flags & VIRTQ_DESC_F_NEXT))
			return VQ_OK;
		i = d.next;
		if (i >= table_n)
			return VIRTQ_ERR_NEXT_RANGE;
	}
}

/* The used ring is written by this process, not the guest: its pages go
 * into the VMM's dirty log after each store (core/dirty.h). */
static void vq_mark_used(const struct virtq *vq)
{
	dirty_mark(vq->used, 6 + 8 * (size_t)vq->size);
}

static void vq_store_used_flags(struct virtq *vq, uint16_t flags)
{
	vq->used_flags = flags;
	__atomic_store_n((uint16_t *)vq->used, flags, __ATOMIC_RELAXED);
	vq_mark_used(vq);
}

/* Re-arms guest kicks, then returns the avail index read after a fence. */
static uint16_t vq_arm_kick(struct virtq *vq)
{
	if (vq->event_idx) {
		__atomic_store_n(vq_avail_event(vq), vq->last_avail_idx, __ATOMIC_RELAXED);
		vq_mark_used(vq);
	} else if (vq->used_flags & VIRTQ_USED_F_NO_NOTIFY)
		vq_store_used_flags(vq, vq->used_flags & ~VIRTQ_USED_F_NO_NOTIFY);
	/* Full fence (store then load): else the guest may add a buffer, still
	 * see kicks suppressed and not kick, while we read the old avail index
	 * and go to sleep: a lost kick. */
	atomic_thread_fence(memory_order_seq_cst);
	return vq_load_avail_idx(vq);
}

int virtq_pop(struct virtq *vq, const struct guest_mem *gm, struct virtq_elem *elem)
{
	uint16_t avail, head;
	enum virtq_err err;

	if (vq->broken)
		return -1;
	if (!vq->enabled)
		return 0;
	avail = vq_load_avail_idx(vq);
	if (avail == vq->last_avail_idx) {
		/* With EVENT_IDX, avail_event is only moved when the ring runs
		 * dry: the guest kicks once for the next buffer, not per buffer. */
		if (!vq->event_idx || !vq->notify_enabled)
			return 0;
		avail = vq_arm_kick(vq);
		if (avail == vq->last_avail_idx)
			return 0;
	}
	if ((uint16_t)(avail - vq->last_avail_idx) > vq->size)
		return vq_fail(vq, VIRTQ_ERR_AVAIL_AHEAD);
	/* A driver cannot have more than size chains outstanding; bounding it
	 * bounds what devices keep per request. */
	if ((uint16_t)(vq->last_avail_idx - vq->used_idx) >= vq->size)
		return vq_fail(vq, VIRTQ_ERR_INFLIGHT);
	head = __atomic_load_n(vq_avail_ring(vq, vq->last_avail_idx & (vq->size - 1)),
			       __ATOMIC_RELAXED);
	if (head >= vq->size)
		return vq_fail(vq, VIRTQ_ERR_HEAD_RANGE);
	elem->head = head;
	elem->out_num = elem->in_num = 0;
	elem->out_len = elem->in_len = 0;
	err = vq_walk(vq, gm, head, elem);
	if (err != VQ_OK)
		return vq_fail(vq, err);
	vq->last_avail_idx++;
	counter_add(&vq->stats.popped, 1);
	return 1;
}

int virtq_resume_at(struct virtq *vq, uint16_t last_avail)
{
	if (vq->broken || !vq->enabled)
		return -1;
	/* Acquire: the elements vhost published before its index. */
	uint16_t used = __atomic_load_n((uint16_t *)(vq->used + 2), __ATOMIC_ACQUIRE);
	if ((uint16_t)(last_avail - used) > vq->size)
		return vq_fail(vq, VIRTQ_ERR_INFLIGHT);
	vq->last_avail_idx = last_avail;
	vq->used_idx = vq->signalled_used = used;
	vq->signalled_used_valid = false;
	return 0;
}

int virtq_unpop(struct virtq *vq)
{
	if (vq->broken || !vq->enabled || vq->last_avail_idx == vq->used_idx)
		return -1;
	vq->last_avail_idx--;
	return 0;
}

int virtq_push_batch(struct virtq *vq, const struct guest_mem *gm,
		     const struct virtq_used_elem *elems, unsigned int n)
{
	uint16_t old = vq->used_idx, new;

	(void)gm;
	if (vq->broken || !vq->enabled)
		return -1;
	if (n > (uint16_t)(vq->last_avail_idx - vq->used_idx))
		return vq_refuse(vq, VIRTQ_ERR_BAD_PUSH);
	for (unsigned int i = 0; i < n; i++)
		if (elems[i].id >= vq->size)
			return vq_refuse(vq, VIRTQ_ERR_BAD_PUSH);
	for (unsigned int i = 0; i < n; i++)
		memcpy(vq_used_ring(vq, (uint16_t)(old + i) & (vq->size - 1)), &elems[i],
		       sizeof(elems[i]));
	/* Release: the used elements and the data written into the buffers must
	 * be visible before the new used index, or the guest completes a
	 * request with a stale element or stale data. Devices' relaxed writes
	 * (core/dma.h) rely on this fence. */
	atomic_thread_fence(memory_order_release);
	new = (uint16_t)(old + n);
	__atomic_store_n((uint16_t *)(vq->used + 2), new, __ATOMIC_RELAXED);
	vq_mark_used(vq);
	vq->used_idx = new;
	/* EVENT_IDX: if we lapped signalled_used, (old, new] no longer tells
	 * whether used_event was crossed; notify next time to be safe. */
	if ((uint16_t)(new - vq->signalled_used) < (uint16_t)(new - old))
		vq->signalled_used_valid = false;
	counter_add(&vq->stats.pushed, n);
	return 0;
}

int virtq_push(struct virtq *vq, const struct guest_mem *gm, uint16_t head, uint32_t written_len)
{
	struct virtq_used_elem e = {.id = head, .len = written_len};
	return virtq_push_batch(vq, gm, &e, 1);
}

/* Spec 2.7.10: notify iff new_idx moved past event_idx since old_idx. */
static bool vq_need_event(uint16_t event_idx, uint16_t new_idx, uint16_t old_idx)
{
	return (uint16_t)(new_idx - event_idx - 1) < (uint16_t)(new_idx - old_idx);
}

bool virtq_should_notify(struct virtq *vq, const struct guest_mem *gm)
{
	bool notify;

	(void)gm;
	if (vq->broken || !vq->enabled)
		return false;
	/* Full fence (store then load): our used-index store must be visible
	 * before we read the guest's suppression state, else the guest may
	 * re-enable interrupts, see the old used index and sleep while we read
	 * "suppressed" and stay silent: a lost interrupt. */
	atomic_thread_fence(memory_order_seq_cst);
	if (vq->event_idx) {
		uint16_t event = __atomic_load_n(vq_used_event(vq), __ATOMIC_RELAXED);
		notify = !vq->signalled_used_valid ||
			 vq_need_event(event, vq->used_idx, vq->signalled_used);
		vq->signalled_used = vq->used_idx;
		vq->signalled_used_valid = true;
	} else {
		uint16_t flags = __atomic_load_n(vq_avail_flags(vq), __ATOMIC_RELAXED);
		notify = !(flags & VIRTQ_AVAIL_F_NO_INTERRUPT);
	}
	if (notify)
		counter_add(&vq->stats.notified, 1);
	else
		counter_add(&vq->stats.suppressed, 1);
	return notify;
}

void virtq_disable_notify(struct virtq *vq, const struct guest_mem *gm)
{
	(void)gm;
	if (vq->broken || !vq->enabled || !vq->notify_enabled)
		return;
	vq->notify_enabled = false;
	/* With EVENT_IDX nothing is written: avail_event stays behind the
	 * guest's index, so it does not kick again. No fence: a late-seen
	 * suppression only costs a spurious kick. */
	if (!vq->event_idx)
		vq_store_used_flags(vq, vq->used_flags | VIRTQ_USED_F_NO_NOTIFY);
}

bool virtq_enable_notify(struct virtq *vq, const struct guest_mem *gm)
{
	(void)gm;
	if (vq->broken || !vq->enabled)
		return false;
	if (vq->poll_held) {
		/* A poller keeps kicks off; the device's re-check still holds.
		 * Fence: pairs with the guest's index store, as in vq_arm_kick. */
		atomic_thread_fence(memory_order_seq_cst);
		return vq_load_avail_idx(vq) != vq->last_avail_idx;
	}
	vq->notify_enabled = true;
	return vq_arm_kick(vq) != vq->last_avail_idx;
}

bool virtq_poll_hold(struct virtq *vq, const struct guest_mem *gm, bool hold)
{
	if (hold) {
		virtq_disable_notify(vq, gm);
		vq->poll_held = true;
		return false;
	}
	vq->poll_held = false;
	return virtq_enable_notify(vq, gm);
}

bool virtq_has_work(struct virtq *vq, const struct guest_mem *gm)
{
	(void)gm;
	if (vq->broken || !vq->enabled)
		return false;
	return vq_load_avail_idx(vq) != vq->last_avail_idx;
}

void virtq_counters(const struct virtq *vq, counter_emit_fn emit, void *ctx)
{
	/* vq->name is "<device> qN": the device is the owner. */
	const char *sp = strrchr(vq->name, ' ');
	char owner[sizeof(vq->name)], what[64];
	size_t olen = sp ? (size_t)(sp - vq->name) : strlen(vq->name);
	snprintf(owner, sizeof(owner), "%.*s", (int)olen, vq->name);
	const char *q = sp ? sp + 1 : "q";
	snprintf(what, sizeof(what), "%s popped", q);
	emit(ctx, owner, what, counter_get(&vq->stats.popped));
	snprintf(what, sizeof(what), "%s pushed", q);
	emit(ctx, owner, what, counter_get(&vq->stats.pushed));
	uint64_t broken = 0;
	for (int i = 0; i < VIRTQ_ERR_NR; i++)
		broken += counter_get(&vq->stats.err[i]);
	snprintf(what, sizeof(what), "%s guest errors", q);
	emit(ctx, owner, what, broken);
}
