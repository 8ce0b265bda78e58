// SPDX-License-Identifier: Apache-2.0
/* The device nodes inside a jail: /dev/kvm and /dev/net/tun always, the
 * rest only when asked (--device), each with the host node's numbers. */
#ifndef SKIFF_JAIL_DEV_H
#define SKIFF_JAIL_DEV_H

#include <stddef.h>
#include <sys/types.h>

/* NAME is one --device may give: 0, or -1 with a reason. */
int jail_device_check(const char *name, char *err, size_t errlen);

/* Makes ROOTFD/dev/... for the defaults and the NAMES, owned by UID:GID,
 * mode 0600. 0, or -1 with a reason (what was made stays: the caller
 * removes the whole jail). */
int jail_devices_make(int rootfd, const char *const *names, unsigned int n, uid_t uid, gid_t gid,
		      char *err, size_t errlen);

#endif
