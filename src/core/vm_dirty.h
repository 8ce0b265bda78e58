// SPDX-License-Identifier: Apache-2.0
/* Dirty-page tracking of guest RAM (machine-config's track_dirty_pages,
 * /snapshot/load's): KVM's dirty log on the RAM slots for the guest's
 * writes (KVM_MEM_LOG_DIRTY_PAGES), the VMM's own log (core/dirty.h) for
 * the writes of this process. Diff snapshots and migration read both. */
#ifndef SKIFF_VM_DIRTY_H
#define SKIFF_VM_DIRTY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/vm.h"

/* Before the vCPUs run: logs the RAM slots, with KVM's manual protect
 * (KVM_CAP_MANUAL_DIRTY_LOG_PROTECT2) where the host has it, and starts the
 * VMM's log. all: every page counts as dirty at first (a fresh boot:
 * nothing of it is in any file yet); else none (a restore: the memory
 * file has it all). 0, or -1 with one line in err. */
int vm_dirty_enable(struct vm *vm, bool all, char *err, size_t errlen);
/* The same on a running VM under seccomp (a migration of a VM built
 * without tracking): KVM's plain log, no manual protect (KVM_ENABLE_CAP
 * is not in the controller's filter); every page dirty. */
int vm_dirty_enable_late(struct vm *vm, char *err, size_t errlen);
/* Stops marking and frees the VMM's log (no thread writes guest RAM). */
void vm_dirty_disable(struct vm *vm);
static inline bool vm_dirty_on(const struct vm *vm)
{
	return vm->dirty.bits != NULL;
}
/* Pages written since the last collect (either log), ORed into out
 * (dirty_words(vm->dirty.pages) words, by host offset), and both logs
 * cleared: a page written after this is dirty again. 0 or -errno. */
int vm_dirty_collect(struct vm *vm, uint64_t *out);

#endif
