// SPDX-License-Identifier: Apache-2.0
/* A device kind's own system calls and ioctls, per thread role: what the
 * threads that run its code need beyond their role's table (vhost's ring
 * ioctls on a vCPU when the driver starts a queue, a passed-through
 * device's reset on the main thread at stop, vsock's Unix streams on its
 * own thread). Kept in the kind's folder (*_sandbox.c) and named by its
 * row; the device manager adds them (sandbox_add_rules) for the kinds a
 * VM has, only the part a device's spec needs where the row's sandbox_of
 * says (vhost=off, vsock's backend), so a VM without vhost has no vhost
 * ioctl in any filter, as crosvm keeps a policy per device. */
#ifndef SKIFF_DEV_SANDBOX_H
#define SKIFF_DEV_SANDBOX_H

#include "core/sandbox.h"
#include "core/sandbox_rules.h"

struct dev_sandbox {
	struct sandbox_rules role[SANDBOX_NR_ROLES]; /* empty: nothing for that role */
};

#endif
