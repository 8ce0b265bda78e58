// SPDX-License-Identifier: Apache-2.0
/* Firecracker's PUT /balloon (BalloonDeviceConfig) onto --balloon's keys.
 * GET and PATCH /balloon and /balloon/statistics are the API's
 * (api/api_balloon.c): they read this resource and reach the running
 * device through dev_ops.update and its counters. */
#include <stdint.h>
#include <stdio.h>

#include "devices/virtio-balloon/virtio_balloon.h"

static const struct dev_api_field balloon_api_fields[] = {
    {.name = "amount_mib",
     .type = DEV_API_UINT,
     .key = "amount",
     .flags = DEV_API_REQUIRED,
     .max = UINT32_MAX},
    {.name = "deflate_on_oom",
     .type = DEV_API_BOOL,
     .key = "deflate-on-oom",
     .flags = DEV_API_REQUIRED},
    {.name = "stats_polling_interval_s", .type = DEV_API_UINT, .key = "stats", .max = UINT16_MAX},
    {.name = "free_page_hinting", .type = DEV_API_REFUSED, .key = "free page hinting"},
    {.name = "free_page_reporting", .type = DEV_API_BOOL, .key = "reporting"},
};

/* Firecracker refuses a target above the machine's memory at PUT. */
static int balloon_check_vm(const void *spec, uint64_t mem_mib, char *err, size_t errlen)
{
	const struct balloon_spec *s = spec;
	if (s->amount_mib <= mem_mib)
		return 0;
	snprintf(err, errlen, "Amount of pages requested is too large.");
	return -1;
}

const struct dev_api balloon_api = {.route = "/balloon",
				    .section = "balloon",
				    .schema = "BalloonDeviceConfig",
				    .fault = "Balloon config error",
				    DEV_API_TABLE(balloon_api_fields),
				    .check_vm = balloon_check_vm};
