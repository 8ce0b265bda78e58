// SPDX-License-Identifier: Apache-2.0
/* virtio-vsock's row in the device manager's table of kinds
 * (vmm/devmgr_kinds.c lists it): --vsock, its options and checks, its
 * API resource, sandbox rules and metrics. */
#include "devices/virtio-vsock/virtio_vsock.h"
#include "devices/dev_kind.h"

const struct dm_kind virtio_vsock_kind = {
    .option = "vsock",
    .prefix = "virtio-vsock",
    .metavar = "cid=N[,uds=PATH][,backend=...]",
    .help = "virtio-vsock to host Unix sockets (Firecracker's hybrid /vsock), or to "
	    "AF_VSOCK through /dev/vhost-vsock (backend=vhost)",
    .spec = &vsock_spec_table,
    .spec_size = sizeof(struct vsock_spec),
    .spec_init = vsock_spec_init,
    .check = vsock_spec_check,
    .needs_ioeventfd = vsock_spec_needs_ioeventfd,
    .transport = DM_VIRTIO_PCI,
    .create = virtio_vsock_new_device,
    .api = &vsock_api,
    .sandbox = &vsock_sandbox,
    .sandbox_of = vsock_sandbox_of,
    .metrics = &virtio_vsock_metrics,
};
