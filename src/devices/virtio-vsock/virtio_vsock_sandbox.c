// SPDX-License-Identifier: Apache-2.0
/* virtio-vsock's own thread (virtio_vsock.h, role "device"): its queues
 * and its host streams. Unix sockets only: accepted on the listener set
 * up before, or connected to "<uds>_<port>" when the guest asks (a path,
 * the one exception to "no path lookups", as Firecracker's vsock connects
 * at run time too); closed when a stream ends. */
#include <fcntl.h>
#include <linux/vhost.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "devices/virtio-vsock/virtio_vsock.h"
#include "virtio/vhost_sandbox.h"

/* clang-format off */
static const struct sandbox_rule vsock_thread[] = {
    SANDBOX_ALLOW(epoll_wait),
    SANDBOX_ALLOW(epoll_pwait),
    SANDBOX_ALLOW(epoll_ctl),
    SANDBOX_ALLOW(read),
    SANDBOX_ALLOW(readv),
    SANDBOX_ARG(socket, 0, ~0ull, AF_UNIX),
    SANDBOX_ALLOW(connect),
    SANDBOX_ALLOW(accept4),
    SANDBOX_ALLOW(recvfrom),
    SANDBOX_ALLOW(sendto),
    SANDBOX_ALLOW(sendmsg),
    SANDBOX_ALLOW(shutdown),
    SANDBOX_ALLOW(close),
};

/* backend=vhost (virtio_vsock_vhost.c): a status write starts or resets
 * the device, handing the rx and tx rings, the memory table and the
 * eventfds to /dev/vhost-vsock and taking them back. Its guest CID is set
 * before any filter, and the stop only closes the fd. */
static const struct sandbox_rule vsock_vcpu[] = {
    VHOST_RING_RULES,
    SANDBOX_IOCTL(VHOST_VSOCK_SET_RUNNING),
};

/* The controller at a live migration's switch (virtio_vsock_mig.c): the
 * source unlinks the socket file its bind made (lstat first: only that
 * one), and a failed switch's take-back listens again on the same path. */
static const struct sandbox_rule vsock_handover[] = {
    SANDBOX_ARG(newfstatat, 3, ~0ull, AT_SYMLINK_NOFOLLOW), /* glibc's lstat */
    SANDBOX_ALLOW(unlink),
    SANDBOX_ALLOW(unlinkat),
    {__NR_socket, 2, {{0, 0, ~0ull, AF_UNIX}, {1, 0, ~0ull, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC}}},
    SANDBOX_ALLOW(bind),
    SANDBOX_ALLOW(listen),
};
/* clang-format on */

/* All of them (the kind's row), and what each backend's device needs:
 * the hybrid device has its thread and a hand-over, never a vhost ring;
 * backend=vhost neither, so its controller cannot unlink or bind. */
const struct dev_sandbox vsock_sandbox = {
    .role[SANDBOX_VCPU] = SANDBOX_RULES(vsock_vcpu),
    .role[SANDBOX_DEVICE] = SANDBOX_RULES(vsock_thread),
    .role[SANDBOX_CONTROLLER] = SANDBOX_RULES(vsock_handover),
};
static const struct dev_sandbox vsock_hybrid_sandbox = {
    .role[SANDBOX_DEVICE] = SANDBOX_RULES(vsock_thread),
    .role[SANDBOX_CONTROLLER] = SANDBOX_RULES(vsock_handover),
};
static const struct dev_sandbox vsock_vhost_sandbox = {
    .role[SANDBOX_VCPU] = SANDBOX_RULES(vsock_vcpu),
};

const struct dev_sandbox *vsock_sandbox_of(const void *spec)
{
	const struct vsock_spec *s = spec;
	return s->backend == VSOCK_BACKEND_VHOST ? &vsock_vhost_sandbox : &vsock_hybrid_sandbox;
}
