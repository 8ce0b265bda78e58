// SPDX-License-Identifier: Apache-2.0
/* The balloon's endpoints, as Firecracker's: PUT /balloon before the
 * start (the kind's resource, from its row: api_kind.c); GET /balloon; after the start PATCH
 * /balloon (a new target), GET /balloon/statistics and PATCH /balloon/statistics (a new polling
 * interval). The running device is reached through the device manager
 * (vmm_dev_update); its statistics are its counters (virtio_balloon.h). */
#include <stdio.h>
#include <string.h>

#include "api/api_fc.h"

#define PRE_BOOT "The requested operation is not supported before starting the microVM."
#define NO_DEV	 "Balloon config error: No balloon device found."

/* The configured balloon (PUT /balloon: the kind's resource, api_kind.c),
 * or NULL. */
static struct fc_res_cfg *balloon_res(struct api_fc *f, const struct dm_kind **k)
{
	*k = fc_kind_by_section("balloon");
	struct fc_res_cfg *r = fc_vmcfg_res(&f->cfg, *k);
	return r && r->has ? r : NULL;
}

/* A change to the running device; on success into the configuration. */
static void update(struct api_fc *f, const struct dm_kind *k, struct fc_res *cur,
		   const struct fc_balloon *b, bool stats, struct api_reply *rep)
{
	char why[400], spec[48];
	int64_t *field = fc_res_int(k, cur, stats ? "stats_polling_interval_s" : "amount_mib");
	if (stats)
		snprintf(spec, sizeof(spec), "stats=%lld", (long long)b->stats_polling_interval_s);
	else
		snprintf(spec, sizeof(spec), "amount=%lld", (long long)b->amount_mib);
	if (vmm_dev_update(f->vmm, "balloon", 0, spec, why, sizeof(why)) < 0)
		return api_reply_fault(rep, 400, "Balloon config error: %s", why);
	if (field)
		*field = stats ? b->stats_polling_interval_s : b->amount_mib;
	api_reply_none(rep);
}

struct stats_ctx {
	const char *dev;
	struct json_object *o;
};

/* The device's counters into BalloonStats: its gauges, and "stat NAME"
 * under NAME (only those the guest reported, as Firecracker's Options). */
static void stats_emit(void *ctx, const char *owner, const char *what, uint64_t value)
{
	struct stats_ctx *s = ctx;
	if (strcmp(owner, s->dev))
		return;
	if (!strcmp(what, "target pages") || !strcmp(what, "actual pages")) {
		char key[16];
		snprintf(key, sizeof(key), "%.6s_pages", what);
		json_object_object_add(s->o, key, json_object_new_uint64(value));
		snprintf(key, sizeof(key), "%.6s_mib", what);
		json_object_object_add(s->o, key, json_object_new_uint64(value / 256));
	} else if (!strncmp(what, "stat ", 5)) {
		json_object_object_add(s->o, what + 5, json_object_new_uint64(value));
	}
}

static void get_stats(struct api_fc *f, const struct dm_kind *k, struct fc_res *cur,
		      struct api_reply *rep)
{
	const int64_t *secs = fc_res_int(k, cur, "stats_polling_interval_s");
	if (!secs || !*secs)
		return api_reply_fault(
		    rep, 400,
		    "Balloon config error: Statistics for the balloon device are not enabled");
	struct stats_ctx s = {vmm_dev_name(f->vmm, "balloon", 0), json_object_new_object()};
	if (s.dev && s.o)
		vmm_counters(f->vmm, stats_emit, &s);
	api_reply_json(rep, s.o);
}

void api_fc_balloon(struct api_fc *f, const struct api_req *r, struct api_reply *rep)
{
	const struct dm_kind *k;
	struct fc_res_cfg *cur = balloon_res(f, &k);
	if (r->op == OP_BALLOON_GET && cur)
		return api_reply_json(rep, fc_res_json(k, &cur->r));
	/* Firecracker refuses the rest before the start whatever is configured. */
	if (r->op != OP_BALLOON_GET && f->state == FC_NOT_STARTED)
		return api_reply_fault(rep, 400, PRE_BOOT);
	if (!cur)
		return api_reply_fault(rep, 400, NO_DEV);
	if (r->op == OP_BALLOON_STATS_GET)
		return get_stats(f, k, &cur->r, rep);
	update(f, k, &cur->r, &r->u.balloon, r->op == OP_BALLOON_STATS_PATCH, rep);
}
