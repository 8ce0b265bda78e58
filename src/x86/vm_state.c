// SPDX-License-Identifier: Apache-2.0
/* The VM's own state to and from a snapshot (core/arch.h): the in-kernel
 * irqchip (PIC master, PIC slave, IOAPIC) and the PIT. The kvmclock is
 * core's (vm_clock_get at the pause). Restored PIT first, then the chips,
 * as Firecracker restores a VM. */
#include <errno.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "core/arch.h"
#include "core/snap.h"

static const uint32_t chips[] = {KVM_IRQCHIP_PIC_MASTER, KVM_IRQCHIP_PIC_SLAVE, KVM_IRQCHIP_IOAPIC};
#define NR_CHIPS (sizeof(chips) / sizeof(chips[0]))

int arch_vm_save(int vm_fd, struct snap_writer *w, char *err, size_t errlen)
{
	struct kvm_pit_state2 pit;
	if (ioctl(vm_fd, KVM_GET_PIT2, &pit) < 0) {
		snprintf(err, errlen, "KVM_GET_PIT2: %s", strerror(errno));
		return -1;
	}
	int r = snap_put(w, SNAP_ID_PIT, 0, &pit, sizeof(pit));
	for (size_t i = 0; i < NR_CHIPS && r == 0; i++) {
		struct kvm_irqchip c = {.chip_id = chips[i]};
		if (ioctl(vm_fd, KVM_GET_IRQCHIP, &c) < 0) {
			snprintf(err, errlen, "KVM_GET_IRQCHIP %u: %s", chips[i], strerror(errno));
			return -1;
		}
		r = snap_put(w, SNAP_ID_IRQCHIP, chips[i], &c, sizeof(c));
	}
	if (r < 0)
		snprintf(err, errlen, "irqchip state: out of memory");
	return r;
}

int arch_vm_check(const struct snap_image *img, char *err, size_t errlen)
{
	struct kvm_pit_state2 pit;
	struct kvm_irqchip c;
	if (snap_get(img, SNAP_ID_PIT, 0, &pit, sizeof(pit), err, errlen) < 0)
		return -1;
	for (size_t i = 0; i < NR_CHIPS; i++) {
		if (snap_get(img, SNAP_ID_IRQCHIP, chips[i], &c, sizeof(c), err, errlen) < 0)
			return -1;
		/* The chip inside must be the one its instance names. */
		if (c.chip_id != chips[i]) {
			snprintf(err, errlen, "snapshot irqchip %u holds chip %u", chips[i],
				 c.chip_id);
			return -1;
		}
	}
	return 0;
}

int arch_vm_restore(int vm_fd, const struct snap_image *img, char *err, size_t errlen)
{
	if (arch_vm_check(img, err, errlen) < 0)
		return -1;
	struct kvm_pit_state2 pit;
	if (snap_get(img, SNAP_ID_PIT, 0, &pit, sizeof(pit), err, errlen) < 0)
		return -1;
	if (ioctl(vm_fd, KVM_SET_PIT2, &pit) < 0) {
		snprintf(err, errlen, "KVM_SET_PIT2: %s", strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < NR_CHIPS; i++) {
		struct kvm_irqchip c;
		if (snap_get(img, SNAP_ID_IRQCHIP, chips[i], &c, sizeof(c), err, errlen) < 0)
			return -1;
		if (ioctl(vm_fd, KVM_SET_IRQCHIP, &c) < 0) {
			snprintf(err, errlen, "KVM_SET_IRQCHIP %u: %s", chips[i], strerror(errno));
			return -1;
		}
	}
	return 0;
}
