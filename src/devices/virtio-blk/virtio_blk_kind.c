// SPDX-License-Identifier: Apache-2.0
/* virtio-blk's row in the device manager's table of kinds
 * (vmm/devmgr_kinds.c lists it): --disk, its options, its API resource,
 * sandbox rules and metrics. */
#include "devices/virtio-blk/virtio_blk.h"
#include "devices/virtio-blk/virtio_blk_spec.h"
#include "devices/dev_kind.h"

const struct dm_kind virtio_blk_kind = {
    .option = "disk",
    .prefix = "virtio-blk",
    .metavar = "PATH[,ro][,poll=...]",
    .help = "virtio-blk disk from a raw image (repeatable)",
    .spec = &blk_spec_table,
    .spec_size = sizeof(struct blk_spec),
    .spec_init = blk_spec_init,
    .transport = DM_VIRTIO_PCI,
    .create = virtio_blk_new_device,
    .api = &blk_api,
    .sandbox = &virtio_blk_sandbox,
    .metrics = &virtio_blk_metrics,
    .needs_ioeventfd = virtio_blk_needs_ioeventfd,
};
