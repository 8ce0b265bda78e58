// SPDX-License-Identifier: Apache-2.0
/* Firecracker's drives onto --disk's keys: PUT /drives/ID
 * (BlockDeviceConfig) before the start, PATCH /drives/ID
 * (BlockDeviceUpdateConfig: a new image, new rate limits) after it, and
 * the config file's and GET /vm/config's "drives" list. The root drive is
 * built first, so that it is /dev/vda as in Firecracker, and gives the
 * command line its root=. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "devices/virtio-blk/virtio_blk.h"

/* Firecracker's io_engine: Async is io_uring, as skiff's aio=io_uring;
 * absent keeps skiff's default. */
static const char *const engines[] = {"Sync", "Async", NULL};
static const char *const aio[] = {"threads", "io_uring", NULL};

/* The order of BlockDeviceConfig, and of the spec's keys: ro, aio=, the
 * limits, skiff_options last (they may override). */
enum { ID, PATH, ROOT, RO, PARTUUID, CACHE, ENGINE, RL, SOCKET, OPTIONS };
static const struct dev_api_field drive_fields[] = {
    [ID] = {.name = "drive_id",
	    .type = DEV_API_STR,
	    .flags = DEV_API_REQUIRED | DEV_API_ID,
	    .size = 64},
    [PATH] = {.name = "path_on_host", .type = DEV_API_STR, .key = "path", .flags = DEV_API_APART},
    [ROOT] = {.name = "is_root_device",
	      .type = DEV_API_BOOL,
	      .flags = DEV_API_REQUIRED | DEV_API_BOOT},
    [RO] = {.name = "is_read_only", .type = DEV_API_FLAG, .key = "ro"},
    [PARTUUID] = {.name = "partuuid", .type = DEV_API_STR, .size = 64},
    /* skiff's page cache use is the same either way: flushes reach the
     * image. Firecracker's default is shown. */
    [CACHE] = {.name = "cache_type", .type = DEV_API_STR, .size = 16, .dflt = "Unsafe"},
    [ENGINE] = {.name = "io_engine",
		.type = DEV_API_ENUM,
		.key = "aio",
		.size = 16,
		.values = engines,
		.spec_values = aio},
    [RL] = {.name = "rate_limiter", .type = DEV_API_RATE_LIMITER, .key = "", .dir = DEV_RL_RX},
    [SOCKET] = {.name = "socket", .type = DEV_API_STR, .size = 8},
    [OPTIONS] = {.name = "skiff_options", .type = DEV_API_OPTIONS, .size = 256},
};
_Static_assert(sizeof(drive_fields) / sizeof(drive_fields[0]) == OPTIONS + 1, "one per field");

static const struct dev_api_field patch_fields[] = {
    {.name = "drive_id", .type = DEV_API_STR, .flags = DEV_API_REQUIRED | DEV_API_ID, .size = 64},
    {.name = "path_on_host", .type = DEV_API_STR, .key = "path", .flags = DEV_API_APART},
    {.name = "rate_limiter", .type = DEV_API_RATE_LIMITER, .key = "", .dir = DEV_RL_RX},
};

/* Firecracker opens the image at PUT, so a missing one is a 400 at once,
 * not at InstanceStart. */
static int image_ok(const char *path, bool write, char *err, size_t errlen)
{
	if (access(path, write ? R_OK | W_OK : R_OK) == 0)
		return 0;
	int e = errno;
	snprintf(err, errlen,
		 "Drive config error: Unable to create the virtio block device: Error "
		 "manipulating the backing file: %s (os error %d)",
		 strerror(e), e);
	return -1;
}

static int drive_check(const struct dev_api_res *r, bool put, char *err, size_t errlen)
{
	const char *engine = r->v[ENGINE].s, *cache = r->v[CACHE].s;
	if (engine[0] && strcmp(engine, "Sync") && strcmp(engine, "Async")) {
		snprintf(err, errlen,
			 "An error occurred when deserializing the json body of a request: "
			 "unknown variant `%s`, expected `Sync` or `Async`",
			 engine);
		return -1;
	}
	if (r->seen & (1u << SOCKET) ||
	    (cache[0] && strcmp(cache, "Unsafe") && strcmp(cache, "Writeback"))) {
		snprintf(err, errlen,
			 "The requested operation is not supported: skiff drives "
			 "take no socket (vhost-user).");
		return -1;
	}
	if (!r->v[PATH].s[0]) {
		snprintf(err, errlen,
			 "Drive config error: Unable to create the virtio block "
			 "device: path_on_host is missing.");
		return -1;
	}
	return put ? image_ok(r->v[PATH].s, !r->v[RO].b, err, errlen) : 0;
}

/* One root drive. */
static int drive_check_set(const struct dev_api_res *set, unsigned int n, unsigned int at,
			   const struct dev_api_res *r, bool *drop, char *err, size_t errlen)
{
	(void)drop;
	for (unsigned int k = 0; r->v[ROOT].b && k < n; k++)
		if (k != at && set[k].v[ROOT].b) {
			snprintf(err, errlen,
				 "Drive config error: A root block device already exists!");
			return -1;
		}
	return 0;
}

/* Firecracker's root= for the root drive. */
static void drive_boot_args(const struct dev_api_res *r, char *out, size_t len)
{
	const char *mode = r->v[RO].b ? "ro" : "rw";
	if (r->v[PARTUUID].s[0])
		snprintf(out, len, "root=PARTUUID=%s %s", r->v[PARTUUID].s, mode);
	else
		snprintf(out, len, "root=/dev/vda %s", mode);
}

const struct dev_api blk_api = {
    .route = "/drives",
    .section = "drives",
    .schema = "BlockDeviceConfig",
    .fault = "Drive config error",
    DEV_API_TABLE(drive_fields),
    .patch = {{"", "BlockDeviceUpdateConfig", DEV_API_TABLE(patch_fields)}},
    .max = 16,
    .required = true,
    .full = "Drive config error: skiff takes at most 16 drives",
    .not_found = "Unable to patch the block device: Device not found. Please verify the "
		 "request arguments.",
    .replace_words = "Unable to patch the block device",
    .noun = "Drive",
    .check = drive_check,
    .check_set = drive_check_set,
    .boot_args = drive_boot_args,
};
