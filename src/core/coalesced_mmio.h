// SPDX-License-Identifier: Apache-2.0
/* KVM coalesced MMIO: guest writes to a registered zone do not exit; KVM
 * appends them to a ring shared with user space (one page of the vCPU
 * mmap, at KVM_COALESCED_MMIO_PAGE_OFFSET) and skiff replays them later,
 * in order, through the trap table.
 *
 * A batched write only takes effect when the ring is drained, so:
 *  - zones may cover only registers whose writes need no prompt effect
 *    (the device declares which, with the rule, next to its table);
 *  - the ring is drained before every exit is handled (core/vcpu.c),
 *    before a device answers a register read, and by any thread that is
 *    about to act on state a batched write may have changed.
 * Draining is serialized by one lock; replayed writes run the devices'
 * write handlers on the draining thread, so a caller must not hold a lock
 * that such a handler takes. Reads in a zone always exit. */
#ifndef SKIFF_CORE_COALESCED_MMIO_H
#define SKIFF_CORE_COALESCED_MMIO_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/must_check.h"

struct vm;
struct kvm_coalesced_mmio_ring;

struct cmmio {
	struct kvm_coalesced_mmio_ring *ring; /* NULL until a vCPU maps it */
	uint32_t max;			      /* entries in the ring */
	pthread_mutex_t lock;		      /* one drainer at a time */
	bool supported;			      /* KVM_CAP_COALESCED_MMIO */
	uint64_t replayed;		      /* writes drained so far */
};

/* Called by vm_create: cmmio_init first (no capability yet), then
 * cmmio_probe once the VM fd exists. */
void cmmio_init(struct cmmio *c);
void cmmio_probe(struct cmmio *c, int vm_fd);
/* Called by vcpu_create with the vCPU's kvm_run mapping: the ring page is
 * part of it when the mapping is large enough. */
void cmmio_attach(struct cmmio *c, void *run, size_t mmap_size);
/* Called by vcpu_destroy before it unmaps `run`: the ring goes with it
 * (later flushes do nothing; writes still batched are lost with the VM). */
void cmmio_detach(struct cmmio *c, void *run);
void cmmio_destroy(struct cmmio *c);

/* Registers / removes a zone [addr, addr + len) of MMIO space. Returns 0,
 * or -errno (-ENOTSUP without the capability). */
MUST_CHECK int cmmio_zone_add(struct vm *vm, uint64_t addr, uint32_t len);
int cmmio_zone_del(struct vm *vm, uint64_t addr, uint32_t len);

/* Replays every batched write through vm's trap table (accounted as
 * BUS_MMIO_BATCHED). Cheap when the ring is empty. Any thread. */
void cmmio_flush(struct vm *vm);
/* The same, as a device's flush callback (opaque = struct vm *). */
void cmmio_flush_cb(void *opaque);

#endif
