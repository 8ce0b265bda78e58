// SPDX-License-Identifier: Apache-2.0
/* A virtqueue's state in a snapshot (docs/SNAPSHOT.md): the driver's
 * configuration and the device's indices, fixed layout. Restore goes
 * through the same checked setters and activation the transport uses, so
 * a restored queue is one a driver could have made; the indices are
 * checked against the rings in the restored guest memory. Called with the
 * queue quiet (the VM paused, or not yet run). */
#ifndef SKIFF_VIRTQ_STATE_H
#define SKIFF_VIRTQ_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "virtio/virtq.h"

struct virtq_state {
	uint64_t desc_gpa, avail_gpa, used_gpa;
	uint16_t size, last_avail_idx, used_idx, signalled_used, used_flags;
	uint8_t enabled, event_idx, indirect, signalled_used_valid, notify_enabled;
	uint8_t broken, broken_reason; /* VIRTQ_ERR_NR: none */
	uint8_t zero[7];
};

/* What no driver and no device can leave behind in s, or NULL: for a
 * caller that checks every queue before it restores any. */
const char *virtq_state_check(const struct virtq_state *s);
void virtq_state_save(const struct virtq *vq, struct virtq_state *s);
/* Onto a queue as virtq_init or virtq_reset leave it, with gm the restored
 * guest memory. 0, or -1 with one line in err and the queue reset. */
int virtq_state_restore(struct virtq *vq, const struct guest_mem *gm, const struct virtq_state *s,
			char *err, size_t errlen);

#endif
