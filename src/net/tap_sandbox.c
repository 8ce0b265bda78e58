// SPDX-License-Identifier: Apache-2.0
/* What reopening a tap by name takes (tap_open), for the controller's
 * filter: a live migration's source takes its tap back after a failed
 * switch (dev_ops.handover), under the filter. glibc's if_nametoindex
 * asks through an unbound Unix datagram socket (SIOCGIFINDEX); the rest
 * is /dev/net/tun's set-up. */
#include <sys/ioctl.h>

#include <linux/if_tun.h>
#include <linux/sockios.h>
#include <sys/socket.h>

#include "net/tap.h"

/* clang-format off */
const struct sandbox_rule tap_reopen[] = {
    {__NR_socket, 2, {{0, 0, ~0ull, AF_UNIX}, {1, 0, ~0ull, SOCK_DGRAM | SOCK_CLOEXEC}}},
    SANDBOX_IOCTL(SIOCGIFINDEX),
    SANDBOX_IOCTL(TUNSETIFF),
    SANDBOX_IOCTL(TUNSETVNETHDRSZ),
    SANDBOX_IOCTL(TUNSETOFFLOAD),
    SANDBOX_IOCTL(TUNSETQUEUE),
};
/* clang-format on */

_Static_assert(sizeof(tap_reopen) / sizeof(tap_reopen[0]) == TAP_REOPEN_NR, "TAP_REOPEN_NR");
