// SPDX-License-Identifier: Apache-2.0
#include "vmm/vmm_dirty.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/coalesced_mmio.h"
#include "core/log.h"
#include "core/vm_dirty.h"
#include "iothread/iothread.h"
#include "vmm/vmm.h"
#include "vmm/vmm_snap_mem.h"

void vmm_devices_hold(struct vmm *v, bool on)
{
	if (on) {
		cmmio_flush(&v->vm);
		for (unsigned int i = 0; i < v->nr_io_started; i++)
			iothread_hold(&v->io[i]);
		devmgr_hold(&v->dm, true);
		return;
	}
	devmgr_hold(&v->dm, false);
	for (unsigned int i = 0; i < v->nr_io_started; i++)
		iothread_release(&v->io[i]);
}

int vmm_dev_logs_start(struct vmm *v, const char *what, char *err, size_t errlen)
{
	char why[200];
	/* No log made when every write is in KVM's log or skiff's, or comes
	 * from a device that stops instead (dirty_stop: nothing would write
	 * the log; a Diff is then refused by diff_check's own look). */
	if (v->dev_logs || devmgr_can_track(&v->dm, what, false, true, why, sizeof(why)) == 0)
		return 0;
	_Atomic uint64_t *log = vm_dirty_gpa_log(&v->vm);
	if (!log) {
		snprintf(err, errlen, "cannot %s this VM: out of memory for its devices' dirty log",
			 what);
		return -1;
	}
	if (devmgr_dirty_log(&v->dm, log, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "cannot %s a VM with %s", what, why);
		return -1;
	}
	v->dev_logs = true;
	return 1;
}

int vmm_dev_logs_stop(struct vmm *v, char *err, size_t errlen)
{
	v->dev_logs = false;
	return devmgr_dirty_log(&v->dm, NULL, err, errlen);
}

int vmm_snap_mem(struct vmm *v, int fd, const char *path, bool diff, char *err, size_t errlen)
{
	struct vm *vm = &v->vm;
	uint64_t n = 0;
	/* A restored VM's RAM reads the pages it has not written from a file. */
	bool mapped = v->mem_file.held;
	int ram_fd = mapped ? v->mem_file.fd : -1, pm = mapped ? v->mem_file.pagemap : -1;
	if (!vm_dirty_on(vm))
		return snap_mem_write_full(fd, path, vm->mem.host, vm->mem.size, ram_fd, pm, &n,
					   err, errlen);
	/* The collect a migration's rounds make: KVM's log, skiff's, and the
	 * devices' (vhost's), which the state's build has just stopped
	 * (virtio_net_vhost_park), so its last writes are in it. */
	uint64_t *bits = calloc(dirty_words(vm->dirty.pages), sizeof(uint64_t));
	int r = -1;
	if (!bits || vm_dirty_collect(vm, bits) < 0)
		snprintf(err, errlen, "cannot read the dirty page log");
	else if (diff)
		r = snap_mem_write_diff(fd, path, vm->mem.host, vm->mem.size, bits, &n, err,
					errlen);
	else
		r = snap_mem_write_full(fd, path, vm->mem.host, vm->mem.size, ram_fd, pm, &n, err,
					errlen);
	if (r == 0 && diff)
		log_info("snapshot: a Diff of %llu dirty pages of %llu (%llu KiB)",
			 (unsigned long long)dirty_bits_count(bits, vm->dirty.pages),
			 (unsigned long long)vm->dirty.pages, (unsigned long long)(n >> 10));
	if (r < 0 && bits)
		dirty_log_put(&vm->dirty, bits);
	free(bits);
	return r;
}
