// SPDX-License-Identifier: Apache-2.0
/* virtio-rng's row in the device manager's table of kinds
 * (vmm/devmgr_kinds.c lists it): --rng, its options, its API resource
 * and metrics. */
#include "devices/virtio-rng/virtio_rng.h"
#include "devices/dev_kind.h"

const struct dm_kind virtio_rng_kind = {
    .option = "rng",
    .prefix = "virtio-rng",
    .metavar = "[bw=SIZE:MS[:BURST]][,ops=...]",
    .help = "virtio-rng entropy from the host's getrandom (Firecracker's /entropy)",
    .cli_flags = OPT_OPTVAL,
    .spec = &rng_spec_table,
    .spec_size = sizeof(struct rng_spec),
    .spec_init = rng_spec_init,
    .transport = DM_VIRTIO_PCI,
    .create = virtio_rng_new_device,
    .api = &rng_api,
    .metrics = &virtio_rng_metrics,
};
