// SPDX-License-Identifier: Apache-2.0
/* virtio-balloon's row in the device manager's table of kinds
 * (vmm/devmgr_kinds.c lists it): --balloon, its options, its API
 * resource and metrics. */
#include "devices/virtio-balloon/virtio_balloon.h"
#include "devices/dev_kind.h"

const struct dm_kind virtio_balloon_kind = {
    .option = "balloon",
    .prefix = "virtio-balloon",
    .metavar = "amount=MIB[,stats=SECS][,...]",
    .help = "virtio-balloon: take guest memory back (Firecracker's /balloon)",
    .spec = &balloon_spec_table,
    .spec_size = sizeof(struct balloon_spec),
    .spec_init = balloon_spec_init,
    .discards_ram = true,
    .transport = DM_VIRTIO_PCI,
    .create = virtio_balloon_new_device,
    .api = &balloon_api,
    .metrics = &virtio_balloon_metrics,
};
