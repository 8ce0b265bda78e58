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
 * eventfds to /dev/vhost-vsock and taking them back (never a log base:
 * the kernel's vhost-vsock logs no packet); the I/O thread does the same
 * when it restarts the rings a snapshot or a migration's pre-copy
 * stopped (virtio_vsock_vhost_snap.c). Its guest CID is set before any filter,
 * and the stop only closes the fd. */
static const struct sandbox_rule vsock_vcpu[] = {
    VHOST_RING_RULES,
    SANDBOX_IOCTL(VHOST_VSOCK_SET_RUNNING),
};
/* The controller (main's rules are its too): a save, and a migration's
 * pre-copy (dirty_stop), stop the rings and read their positions; a
 * failed switch's take-back reopens /dev/vhost-vsock (the controller may
 * open an existing file) and sets the CID again. */
static const struct sandbox_rule vsock_vhost_main[] = {
    SANDBOX_IOCTL(VHOST_VSOCK_SET_RUNNING),
    SANDBOX_IOCTL(VHOST_GET_VRING_BASE),
};
#define VSOCK_REOPEN_RULES                                                                         \
    SANDBOX_IOCTL(VHOST_SET_OWNER),                                                                \
    SANDBOX_IOCTL(VHOST_GET_FEATURES),                                                             \
    SANDBOX_IOCTL(VHOST_VSOCK_SET_GUEST_CID)
static const struct sandbox_rule vsock_vhost_reopen[] = {
    VSOCK_REOPEN_RULES,
};

/* The controller at a live migration's switch (virtio_vsock_mig.c): the
 * source unlinks the socket file its bind made (lstat first: only that
 * one), and a failed switch's take-back listens again on the same path. */
#define VSOCK_HANDOVER_RULES                                                                       \
    SANDBOX_ARG(newfstatat, 3, ~0ull, AT_SYMLINK_NOFOLLOW), /* glibc's lstat */                  \
    SANDBOX_ALLOW(unlink),                                                                         \
    SANDBOX_ALLOW(unlinkat),                                                                       \
    {__NR_socket, 2, {{0, 0, ~0ull, AF_UNIX}, {1, 0, ~0ull, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC}}}, \
    SANDBOX_ALLOW(bind),                                                                           \
    SANDBOX_ALLOW(listen)
static const struct sandbox_rule vsock_handover[] = {
    VSOCK_HANDOVER_RULES,
};
static const struct sandbox_rule vsock_controller_all[] = {
    VSOCK_HANDOVER_RULES,
    VSOCK_REOPEN_RULES,
};
/* clang-format on */

/* All of them (the kind's row), and what each backend's device needs: the
 * hybrid device has its thread and a hand-over, never a vhost ring;
 * backend=vhost no thread, and its controller cannot unlink or bind. */
const struct dev_sandbox vsock_sandbox = {
    .role[SANDBOX_VCPU] = SANDBOX_RULES(vsock_vcpu),
    .role[SANDBOX_IO] = SANDBOX_RULES(vsock_vcpu),
    .role[SANDBOX_MAIN] = SANDBOX_RULES(vsock_vhost_main),
    .role[SANDBOX_DEVICE] = SANDBOX_RULES(vsock_thread),
    .role[SANDBOX_CONTROLLER] = SANDBOX_RULES(vsock_controller_all),
};
static const struct dev_sandbox vsock_hybrid_sandbox = {
    .role[SANDBOX_DEVICE] = SANDBOX_RULES(vsock_thread),
    .role[SANDBOX_CONTROLLER] = SANDBOX_RULES(vsock_handover),
};
static const struct dev_sandbox vsock_vhost_sandbox = {
    .role[SANDBOX_VCPU] = SANDBOX_RULES(vsock_vcpu),
    .role[SANDBOX_IO] = SANDBOX_RULES(vsock_vcpu),
    .role[SANDBOX_MAIN] = SANDBOX_RULES(vsock_vhost_main),
    .role[SANDBOX_CONTROLLER] = SANDBOX_RULES(vsock_vhost_reopen),
};

const struct dev_sandbox *vsock_sandbox_of(const void *spec)
{
	const struct vsock_spec *s = spec;
	return s->backend == VSOCK_BACKEND_VHOST ? &vsock_vhost_sandbox : &vsock_hybrid_sandbox;
}
