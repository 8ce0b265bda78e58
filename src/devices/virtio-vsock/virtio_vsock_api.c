// SPDX-License-Identifier: Apache-2.0
/* Firecracker's PUT /vsock (Vsock) onto --vsock's keys. uds_path goes
 * apart, whole (a path may hold a comma); vsock_id is taken and dropped,
 * as Firecracker (deprecated there) does. --vsock's own table checks
 * the CID's range and the path's length, so both ways in refuse the same.
 * skiff's own "skiff_options" takes more of --vsock's keys
 * ("backend=vhost"); a body with it may leave uds_path out, which
 * --vsock's check then requires for the hybrid backend only. */
#include <stdint.h>

#include "devices/virtio-vsock/virtio_vsock.h"

static const struct dev_api_field vsock_api_fields[] = {
    {.name = "guest_cid",
     .type = DEV_API_UINT,
     .key = "cid",
     .flags = DEV_API_REQUIRED,
     .max = UINT32_MAX},
    {.name = "uds_path",
     .type = DEV_API_STR,
     .key = "uds",
     .flags = DEV_API_REQUIRED | DEV_API_APART | DEV_API_UNLESS_OPTIONS},
    {.name = "vsock_id", .type = DEV_API_IGNORED},
    {.name = "skiff_options", .type = DEV_API_OPTIONS},
};

const struct dev_api vsock_api = {.route = "/vsock",
				  .section = "vsock",
				  .schema = "Vsock",
				  .fault = "Cannot create backend for vsock device",
				  DEV_API_TABLE(vsock_api_fields)};
