// SPDX-License-Identifier: Apache-2.0
/* VFIO passthrough's calls beyond the roles' tables (devices/dev_sandbox.h):
 * the guest's MSI/MSI-X and command-register writes (re)route the host
 * device's interrupts and may reset it, on a vCPU; the stop resets it on
 * the main thread. A vCPU reaches its regions (config space, BARs VFIO
 * will not map) with pread64/pwrite64: a VM without VFIO has neither. */
#include <linux/vfio.h>

#include "devices/vfio/vfio_kind.h"

/* clang-format off */
static const struct sandbox_rule vfio_vcpu[] = {
    SANDBOX_IOCTL(VFIO_DEVICE_SET_IRQS),
    SANDBOX_IOCTL(VFIO_DEVICE_RESET),
    SANDBOX_ALLOW(pread64),
    SANDBOX_ALLOW(pwrite64),
};
static const struct sandbox_rule vfio_main[] = {
    SANDBOX_IOCTL(VFIO_DEVICE_SET_IRQS),
    SANDBOX_IOCTL(VFIO_DEVICE_RESET),
};
/* clang-format on */

const struct dev_sandbox vfio_sandbox = {
    .role[SANDBOX_VCPU] = SANDBOX_RULES(vfio_vcpu),
    .role[SANDBOX_MAIN] = SANDBOX_RULES(vfio_main),
};
