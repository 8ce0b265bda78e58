// SPDX-License-Identifier: Apache-2.0
#include "core/vm_dirty.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "core/dirty.h"

/* The RAM slots (vm.c): 0 low RAM at GPA 0, 1 the rest at 4 GiB; each
 * with its first page's place in the host mapping. */
struct ram_slot {
	uint32_t slot;
	uint64_t gpa, size, host_off;
};

static unsigned int ram_slots(const struct vm *vm, struct ram_slot s[2])
{
	s[0] = (struct ram_slot){0, 0, vm->mem.low_size, 0};
	if (vm->mem.size == vm->mem.low_size)
		return 1;
	s[1] = (struct ram_slot){1, GUEST_MEM_HIGH_BASE, vm->mem.size - vm->mem.low_size,
				 vm->mem.low_size};
	return 2;
}

static int slot_log(struct vm *vm, const struct ram_slot *s, bool on)
{
	struct kvm_userspace_memory_region r = {
	    .slot = s->slot,
	    .flags = on ? KVM_MEM_LOG_DIRTY_PAGES : 0,
	    .guest_phys_addr = s->gpa,
	    .memory_size = s->size,
	    .userspace_addr = (uint64_t)(uintptr_t)(vm->mem.host + s->host_off),
	};
	return ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &r) < 0 ? -errno : 0;
}

static int dirty_enable(struct vm *vm, bool all, bool manual, char *err, size_t errlen)
{
	struct ram_slot s[2];
	unsigned int n = ram_slots(vm, s);
	/* Manual protect: KVM_GET_DIRTY_LOG no longer write-protects the
	 * whole slot at once; KVM_CLEAR_DIRTY_LOG re-protects only the pages
	 * that were dirty, so a collect costs what was written, not RAM. */
	if (manual &&
	    ioctl(vm->vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_MANUAL_DIRTY_LOG_PROTECT2) > 0) {
		struct kvm_enable_cap cap = {.cap = KVM_CAP_MANUAL_DIRTY_LOG_PROTECT2,
					     .args = {KVM_DIRTY_LOG_MANUAL_PROTECT_ENABLE}};
		vm->dirty_manual = ioctl(vm->vm_fd, KVM_ENABLE_CAP, &cap) == 0;
	}
	for (unsigned int i = 0; i < n; i++) {
		int r = slot_log(vm, &s[i], true);
		if (r < 0) {
			snprintf(err, errlen,
				 "cannot track dirty pages (KVM_MEM_LOG_DIRTY_PAGES): %s",
				 strerror(-r));
			return -1;
		}
	}
	if (dirty_log_init(&vm->dirty, vm->mem.host, vm->mem.size, all) < 0) {
		snprintf(err, errlen, "cannot track dirty pages: out of memory");
		return -1;
	}
	dirty_track_set(&vm->dirty);
	return 0;
}

int vm_dirty_enable(struct vm *vm, bool all, char *err, size_t errlen)
{
	return dirty_enable(vm, all, true, err, errlen);
}

int vm_dirty_enable_late(struct vm *vm, char *err, size_t errlen)
{
	return dirty_enable(vm, true, false, err, errlen);
}

void vm_dirty_disable(struct vm *vm)
{
	free((void *)vm->gpa_log);
	vm->gpa_log = NULL;
	if (!vm_dirty_on(vm))
		return;
	dirty_track_set(NULL);
	dirty_log_free(&vm->dirty);
}

_Atomic uint64_t *vm_dirty_gpa_log(struct vm *vm)
{
	if (!vm->gpa_log)
		vm->gpa_log = calloc(dirty_words(guest_mem_end(&vm->mem) >> DIRTY_PAGE_SHIFT),
				     sizeof(uint64_t));
	return vm->gpa_log;
}

void vm_dirty_gpa_take(struct vm *vm, uint64_t *out)
{
	struct ram_slot s[2];
	unsigned int n = ram_slots(vm, s);
	/* A slot's GPA is page and word aligned (0, 4 GiB): its bits are
	 * whole words of the log, taken apart from the hole's. */
	for (unsigned int i = 0; vm->gpa_log && i < n; i++)
		dirty_bits_take(vm->gpa_log, s[i].gpa >> DIRTY_PAGE_SHIFT,
				s[i].size >> DIRTY_PAGE_SHIFT, out,
				s[i].host_off >> DIRTY_PAGE_SHIFT);
}

/* One slot's KVM log ORed into out, and cleared (manual protect). */
static int slot_collect(struct vm *vm, const struct ram_slot *s, uint64_t *tmp, uint64_t *out)
{
	uint64_t pages = s->size >> DIRTY_PAGE_SHIFT;
	memset(tmp, 0, dirty_words(pages) * sizeof(uint64_t));
	struct kvm_dirty_log l = {.slot = s->slot, .dirty_bitmap = tmp};
	if (ioctl(vm->vm_fd, KVM_GET_DIRTY_LOG, &l) < 0)
		return -errno;
	if (vm->dirty_manual && dirty_bits_count(tmp, pages)) {
		struct kvm_clear_dirty_log c = {.slot = s->slot,
						.num_pages = (uint32_t)pages,
						.first_page = 0,
						.dirty_bitmap = tmp};
		if (ioctl(vm->vm_fd, KVM_CLEAR_DIRTY_LOG, &c) < 0)
			return -errno;
	}
	dirty_bits_or(out, s->host_off >> DIRTY_PAGE_SHIFT, tmp, pages);
	return 0;
}

int vm_dirty_collect(struct vm *vm, uint64_t *out)
{
	struct ram_slot s[2];
	unsigned int n = ram_slots(vm, s);
	if (!vm_dirty_on(vm))
		return -EINVAL;
	uint64_t *tmp = calloc(dirty_words(vm->dirty.pages), sizeof(uint64_t));
	if (!tmp)
		return -ENOMEM;
	int r = 0;
	for (unsigned int i = 0; i < n && r == 0; i++)
		r = slot_collect(vm, &s[i], tmp, out);
	free(tmp);
	/* After KVM's: a device write racing the collect is in one or the
	 * next, never lost (the mark follows the write, in the kernel's vhost
	 * log as in skiff's). */
	dirty_log_take(&vm->dirty, out);
	vm_dirty_gpa_take(vm, out);
	return r;
}
