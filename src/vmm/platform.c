// SPDX-License-Identifier: Apache-2.0
#include "vmm/platform.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/console.h"
#include "core/vcpu.h"
#include "devices/legacy/i8042.h"
#include "x86/power.h"
#include "vmm/vmm.h"
#include "x86/cpu.h"
#include "x86/layout.h"

int platform_open_kernel(struct boot_image *img, const struct vmm_config *c, char *err,
			 size_t errlen)
{
	/* Platform default, as kvmtool and Firecracker do: reboot through the
	 * i8042 reset line, which skiff catches. Linux's default (ACPI reset
	 * register first) was seen to spin in the guest's shutdown path
	 * before reaching either register. A user's own reboot= wins. */
	static char cmdline[LAYOUT_CMDLINE_MAX];
	snprintf(cmdline, sizeof(cmdline), "%s%s", c->cmdline,
		 strstr(c->cmdline, "reboot=") ? "" : " reboot=k");
	if (boot_image_open(img, c->kernel, c->initrd, cmdline, c->mem,
			    c->unpack ? BOOT_UNPACK_GUEST : BOOT_UNPACK_HOST, err, errlen) < 0) {
		boot_image_close(img);
		return -1;
	}
	return 0;
}

static void uart_set_irq(void *opaque, int level)
{
	vm_irq_line(opaque, LAYOUT_COM1_IRQ, level);
}

/* The i8042 decodes its fixed ports itself; the DSDT describes them. */
_Static_assert(LAYOUT_KBD_DATA == I8042_DATA_PORT && LAYOUT_KBD_CMD == I8042_CMD_PORT,
	       "i8042 ports");

static void kbd_set_irq(void *opaque, int level)
{
	vm_irq_line(opaque, LAYOUT_KBD_IRQ, level);
}

static void kbd_reset(void *opaque)
{
	vm_request_exit(opaque, VM_EXIT_REBOOT, "guest requested a reboot");
}

static int platform_devices(struct vmm *v)
{
	uart_init(&v->uart, uart_set_irq, console_tx, &v->vm);
	i8042_init(&v->kbd, kbd_set_irq, kbd_reset, &v->vm);
	const struct bus_region regions[] = {
	    {.base = LAYOUT_COM1,
	     .len = 8,
	     .handler = uart_bus_handler,
	     .reg_name = uart_reg_name,
	     .opaque = &v->uart,
	     .name = "uart0"},
	    {.base = I8042_DATA_PORT,
	     .len = 1,
	     .handler = i8042_bus_handler,
	     .opaque = &v->kbd,
	     .name = "i8042-data"},
	    {.base = I8042_CMD_PORT,
	     .len = 1,
	     .handler = i8042_bus_handler,
	     .opaque = &v->kbd,
	     .name = "i8042-cmd"},
	};
	for (size_t i = 0; i < sizeof(regions) / sizeof(regions[0]); i++) {
		int ret = bus_register(&v->vm.bus, BUS_PIO, &regions[i]);
		if (ret < 0)
			return ret;
	}
	return power_register(&v->vm);
}

static int platform_vcpus(struct vm *vm, uint64_t entry, bool boot, char *err, size_t errlen)
{
	struct kvm_cpuid2 *cpuid = cpuid_get_supported(vm->kvm_fd);
	if (!cpuid) {
		snprintf(err, errlen, "KVM_GET_SUPPORTED_CPUID: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < vm->nr_cpus; i++) {
		vm->vcpus[i] = vcpu_create(vm, i, cpuid);
		if (!vm->vcpus[i]) {
			snprintf(err, errlen, "cannot create vCPU %d: %s", i, strerror(errno));
			free(cpuid);
			return -1;
		}
	}
	free(cpuid);
	if (!boot)
		return 0;
	/* Only the boot CPU gets registers; the others wait for INIT/SIPI
	 * from the guest, which the in-kernel LAPIC handles. */
	int r = x86_vcpu_set_boot_regs(vm->vcpus[0]->fd, entry, LAYOUT_ZERO_PAGE);
	if (r < 0) {
		snprintf(err, errlen, "cannot set boot registers: %s", strerror(-r));
		return -1;
	}
	return 0;
}

int platform_build(struct vmm *v, struct boot_image *img, char *err, size_t errlen)
{
	uint64_t entry;
	err[0] = '\0';
	if (platform_devices(v) < 0) {
		snprintf(err, errlen, "cannot register the platform devices");
		return -1;
	}
	if (!img) /* a snapshot's RAM and registers come instead */
		return platform_vcpus(&v->vm, 0, false, err, errlen);
	if (boot_image_load(img, &v->vm.mem, v->vm.nr_cpus, &entry, err, errlen) < 0)
		return -1;
	return platform_vcpus(&v->vm, entry, true, err, errlen);
}
