// SPDX-License-Identifier: Apache-2.0
/* virtio-net's calls beyond the roles' tables (devices/dev_sandbox.h). */
#include <linux/if_tun.h>
#include <linux/vhost.h>

#include "devices/virtio-net/virtio_net.h"
#include "devices/virtio-net/virtio_net_spec.h"
#include "net/tap.h"
#include "virtio/vhost_sandbox.h"

/* clang-format off */
/* A register write starts or resets the device: tap offloads, tap queues
 * detached at a reset (or on a trapped control kick), and with vhost=on
 * the rings and memory table handed to the kernel (while vhost logs, a
 * migration's or track_dirty_pages', with the dirty log's base). */
static const struct sandbox_rule net_vcpu[] = {
    SANDBOX_IOCTL(TUNSETOFFLOAD),
    SANDBOX_IOCTL(TUNSETQUEUE),
    VHOST_RING_RULES,
    SANDBOX_IOCTL(VHOST_SET_LOG_BASE),
    SANDBOX_IOCTL(VHOST_SET_VRING_BUSYLOOP_TIMEOUT),
    SANDBOX_IOCTL(VHOST_NET_SET_BACKEND),
};
static const struct sandbox_rule net_vcpu_tap[] = {
    SANDBOX_IOCTL(TUNSETOFFLOAD),
    SANDBOX_IOCTL(TUNSETQUEUE),
};
/* The control queue enables queue pairs: tap queues attached, detached. */
static const struct sandbox_rule net_io[] = {
    SANDBOX_IOCTL(TUNSETQUEUE),
};
/* The stop: offloads off, vhost's backends and rings taken back; a
 * migration turns vhost's dirty log on and off (virtio_net_vhost_log:
 * the log base, the features, the rings' addresses). */
static const struct sandbox_rule net_main[] = {
    SANDBOX_IOCTL(TUNSETOFFLOAD),
    SANDBOX_IOCTL(VHOST_NET_SET_BACKEND),
    SANDBOX_IOCTL(VHOST_GET_VRING_BASE),
    SANDBOX_IOCTL(VHOST_SET_LOG_BASE),
    SANDBOX_IOCTL(VHOST_SET_FEATURES),
    SANDBOX_IOCTL(VHOST_SET_VRING_ADDR),
};
static const struct sandbox_rule net_main_tap[] = {
    SANDBOX_IOCTL(TUNSETOFFLOAD),
};
/* clang-format on */

/* All of them (the kind's row), and a vhost=off card's: no vhost ioctl. */
const struct dev_sandbox virtio_net_sandbox = {
    .role[SANDBOX_VCPU] = SANDBOX_RULES(net_vcpu),
    .role[SANDBOX_IO] = SANDBOX_RULES(net_io),
    .role[SANDBOX_MAIN] = SANDBOX_RULES(net_main),
    /* A migration's failed switch takes the tap back (virtio_net_handover). */
    .role[SANDBOX_CONTROLLER] = TAP_REOPEN_RULES,
};
static const struct dev_sandbox virtio_net_tap_sandbox = {
    .role[SANDBOX_VCPU] = SANDBOX_RULES(net_vcpu_tap),
    .role[SANDBOX_IO] = SANDBOX_RULES(net_io),
    .role[SANDBOX_MAIN] = SANDBOX_RULES(net_main_tap),
    .role[SANDBOX_CONTROLLER] = TAP_REOPEN_RULES,
};

const struct dev_sandbox *virtio_net_sandbox_of(const void *spec)
{
	const struct net_spec *s = spec;
	return s->vhost ? &virtio_net_sandbox : &virtio_net_tap_sandbox;
}
