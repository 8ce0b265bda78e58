// SPDX-License-Identifier: Apache-2.0
#include "virtio/virtq_state.h"

#include <stdio.h>
#include <string.h>

_Static_assert(sizeof(struct virtq_state) == 48, "virtq_state has no padding");

void virtq_state_save(const struct virtq *vq, struct virtq_state *s)
{
	*s = (struct virtq_state){
	    .desc_gpa = vq->desc_gpa,
	    .avail_gpa = vq->avail_gpa,
	    .used_gpa = vq->used_gpa,
	    .size = vq->size,
	    .last_avail_idx = vq->last_avail_idx,
	    .used_idx = vq->used_idx,
	    .signalled_used = vq->signalled_used,
	    .used_flags = vq->used_flags,
	    .enabled = vq->enabled,
	    .event_idx = vq->event_idx,
	    .indirect = vq->indirect,
	    .signalled_used_valid = vq->signalled_used_valid,
	    .notify_enabled = vq->notify_enabled,
	    .broken = vq->broken,
	    .broken_reason = (uint8_t)vq->broken_reason,
	};
}

/* What no driver and no device can leave behind. */
const char *virtq_state_check(const struct virtq_state *s)
{
	static const uint8_t zero[sizeof(s->zero)];
	if ((s->enabled | s->event_idx | s->indirect | s->signalled_used_valid | s->notify_enabled |
	     s->broken) > 1 ||
	    memcmp(s->zero, zero, sizeof(zero)))
		return "a flag is neither 0 nor 1";
	if (s->broken ? s->broken_reason >= VIRTQ_ERR_NR : s->broken_reason != VIRTQ_ERR_NR)
		return "its broken reason does not fit";
	if (!s->enabled && (s->last_avail_idx || s->used_idx))
		return "a queue never enabled has moved";
	if (s->enabled && s->broken)
		return NULL; /* the reset the guest owes clears the rest */
	if ((uint16_t)(s->last_avail_idx - s->used_idx) > s->size)
		return "more chains in flight than its size";
	return NULL;
}

static int vq_state_config(struct virtq *vq, const struct virtq_state *s)
{
	uint64_t f = (s->event_idx ? 1ull << VIRTQ_F_EVENT_IDX : 0) |
		     (s->indirect ? 1ull << VIRTQ_F_INDIRECT_DESC : 0);
	return virtq_set_size(vq, s->size) | virtq_set_addr(vq, VIRTQ_RING_DESC, s->desc_gpa) |
	       virtq_set_addr(vq, VIRTQ_RING_AVAIL, s->avail_gpa) |
	       virtq_set_addr(vq, VIRTQ_RING_USED, s->used_gpa) | virtq_set_features(vq, f);
}

/* The guest's view of the used ring, in the restored memory, must be what
 * the device last published: else the memory file is not this state's. */
static const char *vq_state_rings(struct virtq *vq, const struct virtq_state *s)
{
	uint16_t flags, idx;
	memcpy(&flags, vq->used, 2);
	memcpy(&idx, vq->used + 2, 2);
	if (idx != s->used_idx)
		return "its used index in guest memory is not the saved one";
	if (flags != s->used_flags)
		return "its used flags in guest memory are not the saved ones";
	return NULL;
}

int virtq_state_restore(struct virtq *vq, const struct guest_mem *gm, const struct virtq_state *s,
			char *err, size_t errlen)
{
	const char *why =
	    vq->enabled || vq->broken ? "the queue is not fresh" : virtq_state_check(s);
	if (!why && vq_state_config(vq, s) != 0)
		why = "its size or a ring address is refused";
	if (!why && s->enabled && !s->broken && virtq_activate(vq, gm) < 0)
		why = "its rings are not in guest memory";
	if (!why && s->enabled && !s->broken)
		why = vq_state_rings(vq, s);
	if (why) {
		snprintf(err, errlen, "%s: saved state refused: %s", vq->name, why);
		virtq_reset(vq);
		return -1;
	}
	if (s->broken) {
		/* As it was: not through virtq_mark_broken, whose callback would
		 * tell the transport again what its own restored status says. */
		vq->broken = true;
		vq->broken_reason = (enum virtq_err)s->broken_reason;
		return 0;
	}
	vq->last_avail_idx = s->last_avail_idx;
	vq->used_idx = s->used_idx;
	vq->signalled_used = s->signalled_used;
	vq->signalled_used_valid = s->signalled_used_valid;
	vq->notify_enabled = s->notify_enabled;
	/* The shadow of used->flags, checked equal above: left at 0, a
	 * NO_NOTIFY in guest memory would never be cleared again. */
	vq->used_flags = s->used_flags;
	return 0;
}
