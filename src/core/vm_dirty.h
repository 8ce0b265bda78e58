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
/* Stops marking and frees the VMM's log and the vhost log (no thread
 * writes guest RAM, no vhost is open). */
void vm_dirty_disable(struct vm *vm);
static inline bool vm_dirty_on(const struct vm *vm)
{
	return vm->dirty.bits != NULL;
}
/* The log of the writes the kernel's vhost workers make (QEMU's vhost
 * log; VHOST_SET_LOG_BASE): a bit per 4 KiB guest-physical page from GPA
 * 0 to the end of RAM (the hole below 4 GiB included), which the kernel
 * sets with atomic ORs. Made at the first call, kept until vm_destroy: a
 * vhost that stopped logging still holds its address. NULL: out of
 * memory. */
_Atomic uint64_t *vm_dirty_gpa_log(struct vm *vm);
/* Its bits ORed into out (by host offset, as vm_dirty_collect's) and
 * cleared; no log made, nothing. vm_dirty_collect calls it. */
void vm_dirty_gpa_take(struct vm *vm, uint64_t *out);
/* Pages written since the last collect (any log), ORed into out
 * (dirty_words(vm->dirty.pages) words, by host offset), and both logs
 * cleared: a page written after this is dirty again. 0 or -errno. */
int vm_dirty_collect(struct vm *vm, uint64_t *out);

#endif
