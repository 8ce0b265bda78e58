// SPDX-License-Identifier: Apache-2.0
/* The ioctls virtio/vhost.c makes when a device starts and stops its
 * rings (vhost_set_features, vhost_set_mem, vhost_start_ring,
 * vhost_stop_ring): one list for every vhost kind's sandbox rules, for
 * the thread whose register write starts or resets the device (a vCPU).
 * A kind adds its own beside it (vhost-net's backend, vhost-vsock's
 * running switch). */
#ifndef SKIFF_VHOST_SANDBOX_H
#define SKIFF_VHOST_SANDBOX_H

#include <linux/vhost.h>

#include "core/sandbox_rules.h"

/* clang-format off */
#define VHOST_RING_RULES                                                                           \
    SANDBOX_IOCTL(VHOST_SET_FEATURES),                                                             \
    SANDBOX_IOCTL(VHOST_SET_MEM_TABLE),                                                            \
    SANDBOX_IOCTL(VHOST_SET_VRING_NUM),                                                            \
    SANDBOX_IOCTL(VHOST_SET_VRING_BASE),                                                           \
    SANDBOX_IOCTL(VHOST_GET_VRING_BASE),                                                           \
    SANDBOX_IOCTL(VHOST_SET_VRING_ADDR),                                                           \
    SANDBOX_IOCTL(VHOST_SET_VRING_KICK),                                                           \
    SANDBOX_IOCTL(VHOST_SET_VRING_CALL)
/* clang-format on */

#endif
