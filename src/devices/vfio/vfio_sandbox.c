// SPDX-License-Identifier: Apache-2.0
/* VFIO passthrough's calls beyond the roles' tables (devices/dev_sandbox.h):
 * the guest's MSI/MSI-X and command-register writes (re)route the host
 * device's interrupts and may reset it, on a vCPU; the stop resets it on
 * the main thread. Its regions are pread64/pwrite64, in the vCPU table. */
#include <linux/vfio.h>

#include "devices/vfio/vfio_kind.h"

/* clang-format off */
static const struct sandbox_rule vfio_rules[] = {
    SANDBOX_IOCTL(VFIO_DEVICE_SET_IRQS),
    SANDBOX_IOCTL(VFIO_DEVICE_RESET),
};
/* clang-format on */

const struct dev_sandbox vfio_sandbox = {
    .role[SANDBOX_VCPU] = SANDBOX_RULES(vfio_rules),
    .role[SANDBOX_MAIN] = SANDBOX_RULES(vfio_rules),
};
