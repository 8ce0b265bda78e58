// SPDX-License-Identifier: Apache-2.0
/* A VM's dirty pages beyond KVM's log and skiff's (core/vm_dirty.h): a
 * device that writes guest RAM where neither sees it (vhost's kernel
 * worker) logs those writes itself (dev_ops.dirty_log) into the VM's log
 * by guest-physical page, which every collect reads with the other two
 * (vm_dirty_collect). A migration's rounds and a snapshot's memory file
 * read that one dirty set (docs/SNAPSHOT.md, docs/MIGRATION.md
 * "vhost=on"). */
#ifndef SKIFF_VMM_DIRTY_H
#define SKIFF_VMM_DIRTY_H

#include <stdbool.h>
#include <stddef.h>

struct vmm;

/* The devices' own logs on, if a device needs one (dev_ops.dirty_blind):
 * with track_dirty_pages from the build on, for the VM's life (every Diff
 * snapshot reads them), or for a migration's pre-copy. 1: turned on here;
 * 0: on already, or no device needs one; -1 with "cannot WHAT a VM with
 * NAME: why" in err (and off). */
int vmm_dev_logs_start(struct vmm *v, const char *what, char *err, size_t errlen);
/* Off again (a failed migration of a VM that was not tracking): 0, or -1
 * with "NAME: why" in err. */
int vmm_dev_logs_stop(struct vmm *v, char *err, size_t errlen);

/* On a paused VM, on: batched MMIO applied, then the I/O threads parked
 * and the devices' own threads held (dev_ops.hold), so nothing but the
 * controller touches guest memory or the rings until off: a snapshot's
 * or a switch's state and memory agree. (A paused VM's devices run on:
 * they take packets and complete requests.) */
void vmm_devices_hold(struct vmm *v, bool on);

/* Guest RAM of a paused VM whose I/O threads are held into fd (path names
 * it in err): whole, or (diff) the pages dirtied since the last snapshot.
 * With tracking on, either clears the logs: the next Diff holds what is
 * written after this one (Firecracker's rule); a failure puts them back.
 * 0, or -1 with one line in err. */
int vmm_snap_mem(struct vmm *v, int fd, const char *path, bool diff, char *err, size_t errlen);

#endif
