// SPDX-License-Identifier: Apache-2.0
/* Firecracker's balloon endpoints onto --balloon's keys: PUT /balloon
 * (BalloonDeviceConfig) before the start; GET /balloon; after the start
 * PATCH /balloon (a new target) and /balloon/statistics (a new polling
 * interval), both the device's dev_ops.update, and GET
 * /balloon/statistics (BalloonStats) from its counters. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

/* BalloonUpdateConfig and BalloonUpdateStatsConfig: --balloon's keys the
 * running device takes (virtio_balloon_update). */
static const struct dev_api_field target_fields[] = {
    {.name = "amount_mib",
     .type = DEV_API_UINT,
     .key = "amount",
     .flags = DEV_API_REQUIRED,
     .max = UINT32_MAX},
};
static const struct dev_api_field stats_fields[] = {
    {.name = "stats_polling_interval_s",
     .type = DEV_API_UINT,
     .key = "stats",
     .flags = DEV_API_REQUIRED,
     .max = UINT16_MAX},
};

/* BalloonStats from the device's counters (virtio_balloon_counters): the
 * target and the actual size in pages and MiB, and what the guest
 * reported, each "stat NAME" under NAME (only those it reported, as
 * Firecracker's Options). */
static void balloon_stat(const char *what, uint64_t value, dev_api_put_fn put, void *ctx)
{
	if (!strcmp(what, "target pages") || !strcmp(what, "actual pages")) {
		char key[16];
		snprintf(key, sizeof(key), "%.6s_pages", what);
		put(ctx, key, value);
		snprintf(key, sizeof(key), "%.6s_mib", what);
		put(ctx, key, value / 256);
	} else if (!strncmp(what, "stat ", 5)) {
		put(ctx, what + 5, value);
	}
}

const struct dev_api balloon_api = {
    .route = "/balloon",
    .section = "balloon",
    .schema = "BalloonDeviceConfig",
    .fault = "Balloon config error",
    DEV_API_TABLE(balloon_api_fields),
    .check_vm = balloon_check_vm,
    .get = true,
    .missing = "No balloon device found.",
    .patch = {{"", "BalloonUpdateConfig", DEV_API_TABLE(target_fields)},
	      {"/statistics", "BalloonUpdateStatsConfig", DEV_API_TABLE(stats_fields)}},
    .stats = {"/statistics", "stats_polling_interval_s",
	      "Statistics for the balloon device are not enabled", balloon_stat},
};
