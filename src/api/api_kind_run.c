// SPDX-License-Identifier: Apache-2.0
/* A device kind's endpoints on the VM's one device of it, as its row's
 * resource says (devices/dev_api.h): GET of the configured resource
 * (before the start too); after the start, PATCH of the running device
 * (dev_ops.update through vmm_dev_update; on success into the
 * configuration) and GET of its statistics, its counters named by the
 * kind's map. Errors are "FAULT: why", the kind's Firecracker words.
 * Nothing here names a kind. */
#include <stdio.h>
#include <string.h>

#include "api/api_fc.h"

#define PRE_BOOT "The requested operation is not supported before starting the microVM."

/* The configured resource of r's kind, or NULL. */
static struct fc_res_cfg *configured(struct api_fc *f, const struct dm_kind *k)
{
	struct fc_res_cfg *c = fc_vmcfg_res(&f->cfg, k);
	return c && c->has ? c : NULL;
}

static void patch(struct api_fc *f, const struct api_req *r, struct dev_api_res *cur,
		  struct api_reply *rep)
{
	const struct dm_kind *k = r->kind;
	const struct dev_api_patch *p = &k->api->patch[r->patch];
	char why[400], spec[FC_RES_SPEC_MAX];
	if (fc_patch_spec(p, &r->u.res, spec, sizeof(spec), why, sizeof(why)) < 0 ||
	    vmm_dev_update(f->vmm, k->option, 0, spec, why, sizeof(why)) < 0)
		return api_reply_fault(rep, 400, "%s: %s", k->api->fault, why);
	fc_patch_apply(k, cur, p, &r->u.res);
	api_reply_none(rep);
}

struct stats_ctx {
	const char *dev;
	dev_api_stat_fn map;
	struct json_object *o;
};

static void stats_put(void *ctx, const char *name, uint64_t value)
{
	struct stats_ctx *s = ctx;
	json_object_object_add(s->o, name, json_object_new_uint64(value));
}

static void stats_emit(void *ctx, const char *owner, const char *what, uint64_t value)
{
	struct stats_ctx *s = ctx;
	if (!strcmp(owner, s->dev))
		s->map(what, value, stats_put, s);
}

static void stats(struct api_fc *f, const struct dm_kind *k, struct dev_api_res *cur,
		  struct api_reply *rep)
{
	const int64_t *on = fc_res_int(k, cur, k->api->stats.on);
	if (!on || !*on)
		return api_reply_fault(rep, 400, "%s: %s", k->api->fault, k->api->stats.off);
	struct stats_ctx s = {vmm_dev_name(f->vmm, k->option, 0), k->api->stats.map,
			      json_object_new_object()};
	if (s.dev && s.o)
		vmm_counters(f->vmm, stats_emit, &s);
	api_reply_json(rep, s.o);
}

void api_fc_kind(struct api_fc *f, const struct api_req *r, struct api_reply *rep)
{
	const struct dm_kind *k = r->kind;
	if (k->api->max)
		return api_fc_coll_patch(f, r, rep);
	struct fc_res_cfg *cur = configured(f, k);
	if (r->op == OP_KIND_GET && cur)
		return api_reply_json(rep, fc_res_json(k, &cur->r));
	/* Firecracker refuses the rest before the start whatever is configured. */
	if (r->op != OP_KIND_GET && f->state == FC_NOT_STARTED)
		return api_reply_fault(rep, 400, PRE_BOOT);
	if (!cur)
		return api_reply_fault(rep, 400, "%s: %s", k->api->fault, k->api->missing);
	if (r->op == OP_KIND_STATS)
		return stats(f, k, &cur->r, rep);
	patch(f, r, &cur->r, rep);
}
