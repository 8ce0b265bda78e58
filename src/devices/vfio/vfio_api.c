// SPDX-License-Identifier: Apache-2.0
/* skiff's own PUT /skiff/vfio/ID (SkiffVfioConfig: the vfio_id and
 * --vfio-pci's spec as skiff_options) and the config file's and GET
 * /vm/config's "skiff-vfio" list, shown only when there is one. The spec
 * is checked when the VM is built: its check reads the host's device. */
#include "devices/vfio/vfio_kind.h"

static const struct dev_api_field vfio_fields[] = {
    {.name = "vfio_id", .type = DEV_API_STR, .flags = DEV_API_REQUIRED | DEV_API_ID, .size = 64},
    {.name = "skiff_options", .type = DEV_API_OPTIONS, .flags = DEV_API_REQUIRED, .size = 256},
};

const struct dev_api vfio_api = {
    .route = "/skiff/vfio",
    .section = "skiff-vfio",
    .schema = "SkiffVfioConfig",
    .fault = "VFIO config error",
    DEV_API_TABLE(vfio_fields),
    .max = 4,
    .full = "skiff takes at most 4 VFIO devices",
    .check_at_start = true,
    .hide_empty = true,
};
