// SPDX-License-Identifier: Apache-2.0
/* The platform around the devices: the kernel image, the boot, the serial
 * port, the keyboard controller and the power controls, and the vCPUs. The x86 specifics stay in
 * src/x86/ behind boot.h and cpu.h. */
#ifndef SKIFF_PLATFORM_H
#define SKIFF_PLATFORM_H

#include <stddef.h>

#include "x86/boot.h"

struct vmm;
struct vmm_config;

/* Opens and checks the kernel and initrd, with skiff's command-line
 * defaults. 0, or -1 with a reason (bad input). */
int platform_open_kernel(struct boot_image *img, const struct vmm_config *c, char *err,
			 size_t errlen);
/* Registers the UART, the i8042 and the power controls, loads the kernel into RAM and
 * creates the vCPUs with the boot CPU at its entry point (img NULL: no
 * kernel and no boot registers, for a snapshot's restore). 0 or -1. */
int platform_build(struct vmm *v, struct boot_image *img, char *err, size_t errlen);

#endif
