// SPDX-License-Identifier: Apache-2.0
#include "x86/power.h"

#include "core/vm.h"
#include "x86/acpi.h"
#include "x86/layout.h"

static void sleep_ctl_handler(void *opaque, struct bus_access *acc)
{
	struct vm *vm = opaque;
	if (!acc->is_write) {
		acc->data[0] = 0; /* no wake status, nothing pending */
		return;
	}
	uint8_t v = acc->data[0];
	if (acc->offset == 0 && (v & ACPI_SLP_EN) &&
	    ((v & ACPI_SLP_TYP_MASK) >> ACPI_SLP_TYP_SHIFT) == ACPI_S5_TYPE)
		vm_request_exit(vm, VM_EXIT_POWEROFF, "guest powered off");
}

static void reset_handler(void *opaque, struct bus_access *acc)
{
	struct vm *vm = opaque;
	if (!acc->is_write) {
		acc->data[0] = 0;
		return;
	}
	uint8_t v = acc->data[0];
	if (v == ACPI_RESET_VALUE)
		vm_request_exit(vm, VM_EXIT_REBOOT, "guest requested a reboot");
}

/* pvpanic: reads report the events we understand, a write of PANICKED
 * means the guest kernel panicked (CRASH_LOADED: a kdump kernel takes over,
 * so the guest keeps running). */
#define PVPANIC_PANICKED     1
#define PVPANIC_CRASH_LOADED 2

static void pvpanic_handler(void *opaque, struct bus_access *acc)
{
	struct vm *vm = opaque;
	if (!acc->is_write) {
		acc->data[0] = PVPANIC_PANICKED | PVPANIC_CRASH_LOADED;
		return;
	}
	if (acc->data[0] & PVPANIC_PANICKED)
		vm_request_exit(vm, VM_EXIT_ERROR, "guest kernel panicked");
}

static const char *power_reg_name(void *opaque, uint64_t offset, bool is_write)
{
	(void)opaque;
	(void)is_write;
	return offset == 0 ? "ctl" : "sts";
}

int power_register(struct vm *vm)
{
	const struct bus_region regions[] = {
	    {.base = LAYOUT_ACPI_SLEEP_CTL,
	     .len = 2,
	     .handler = sleep_ctl_handler,
	     .reg_name = power_reg_name,
	     .opaque = vm,
	     .name = "acpi-sleep"},
	    {.base = LAYOUT_ACPI_RESET,
	     .len = 1,
	     .handler = reset_handler,
	     .opaque = vm,
	     .name = "acpi-reset"},
	    {.base = LAYOUT_PVPANIC,
	     .len = 1,
	     .handler = pvpanic_handler,
	     .opaque = vm,
	     .name = "pvpanic"},
	};
	for (unsigned int i = 0; i < sizeof(regions) / sizeof(regions[0]); i++) {
		int r = bus_register(&vm->bus, BUS_PIO, &regions[i]);
		if (r < 0)
			return r;
	}
	return 0;
}
