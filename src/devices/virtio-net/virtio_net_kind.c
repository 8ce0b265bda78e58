// SPDX-License-Identifier: Apache-2.0
/* virtio-net's row in the device manager's table of kinds
 * (vmm/devmgr_kinds.c lists it): --net's default model, its options, its
 * API resource, sandbox rules and metrics. The e1000 shares --net and
 * its option table (model=e1000). */
#include "devices/virtio-net/virtio_net.h"
#include "devices/virtio-net/virtio_net_spec.h"
#include "devices/dev_kind.h"

const struct dm_kind virtio_net_kind = {
    .option = "net",
    .model = "virtio",
    .prefix = "virtio-net",
    .metavar = "tap=NAME[,mac=MAC][,model=...][,...]",
    .help = "network card on an existing tap (repeatable)",
    .spec = &net_spec_table,
    .spec_size = sizeof(struct net_spec),
    .spec_init = net_spec_init,
    .is_net = true,
    .transport = DM_VIRTIO_PCI,
    .check = virtio_net_spec_check,
    .create = virtio_net_new_device,
    .api = &net_api,
    .sandbox = &virtio_net_sandbox,
    .sandbox_of = virtio_net_sandbox_of,
    .metrics = &virtio_net_metrics,
    .needs_ioeventfd = virtio_net_needs_ioeventfd,
};
