// SPDX-License-Identifier: Apache-2.0
/* Power and reset controls: the ACPI hardware-reduced sleep control and
 * status registers (poweroff via S5), the FADT reset register and
 * pvpanic. The i8042 reset pulse that `reboot=k` uses belongs to the
 * keyboard controller (devices/legacy/i8042.c). Port 0xcf9 belongs to the PCI
 * host bridge's config ports. */
#ifndef SKIFF_POWER_H
#define SKIFF_POWER_H

#include "core/must_check.h"

struct vm;

MUST_CHECK int power_register(struct vm *vm);

#endif
