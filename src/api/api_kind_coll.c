// SPDX-License-Identifier: Apache-2.0
/* A device kind's collection (devices/dev_api.h: Firecracker's drives and
 * network interfaces), as the controller serves it: PUT ROUTE/ID before
 * the start, checked as Firecracker builds the device then (the kind's
 * check, the option's own table, the kind's check against the others);
 * PATCH ROUTE/ID after it, its rate limiters onto the running device
 * (dev_ops.limit) and its medium (dev_ops.replace), each then into the
 * configuration. Nothing here names a kind. */
#include <stdio.h>
#include <string.h>

#include "api/api_fc.h"

#define PRE_BOOT "The requested operation is not supported before starting the microVM."

void api_fc_coll_put(struct api_fc *f, const struct api_req *r, struct api_reply *rep)
{
	const struct dm_kind *k = r->kind;
	struct fc_coll *c = fc_vmcfg_coll(&f->cfg, k);
	char why[600], spec[FC_RES_SPEC_MAX];
	struct devmgr_arg a;
	if (!c)
		return api_reply_fault(rep, 500, "no room for %s", k->option);
	if (k->api->check && k->api->check(&r->u.res, true, why, sizeof(why)) < 0)
		return api_reply_fault(rep, 400, "%s", why);
	if (fc_res_arg(k, &r->u.res, spec, sizeof(spec), &a, why, sizeof(why)) < 0)
		return api_reply_fault(rep, 400, "%s: %s", k->api->fault, why);
	/* skiff_options through the option's own table; the path apart, whole. */
	a.id = fc_coll_id(&r->u.res);
	if (!k->api->check_at_start &&
	    devmgr_check_arg(&a, !f->base.no_ioeventfd, why, sizeof(why)) < 0)
		return api_reply_fault(rep, 400, "%s: %s", k->api->fault, why);
	if (fc_coll_put(k, c, &r->u.res, why, sizeof(why)) < 0)
		return api_reply_fault(rep, 400, "%s", why);
	api_reply_none(rep);
}

/* A PATCH's field onto the running device (its index-th of the kind's
 * option), then into the configured entry's field of the same name: 0,
 * or -1 with the reply made. */
static int patch_field(struct api_fc *f, const struct dm_kind *k, unsigned int index,
		       struct dev_api_res *cur, const struct dev_api_field *d,
		       const struct dev_api_val *v, struct api_reply *rep)
{
	char why[400];
	const struct dev_api *a = k->api;
	size_t j = 0;
	while (j < fc_api_nr_fields(a) && strcmp(a->fields[j].name, d->name))
		j++;
	if (j == fc_api_nr_fields(a))
		return 0;
	if (d->type == DEV_API_RATE_LIMITER && v->rl.seen) { /* absent or {}: nothing changes */
		struct ratelimit_cfg c;
		unsigned int mask;
		fc_rate_limiter_cfg(&v->rl, &c, &mask);
		if (vmm_dev_limit(f->vmm, k->option, index, d->dir, &c, mask, why, sizeof(why)) <
		    0) {
			api_reply_fault(rep, 400, "%s: Unable to update the rate limiter: %s",
					a->fault, why);
			return -1;
		}
		fc_rate_limiter_merge(&cur->v[j].rl, &v->rl);
	} else if (d->type == DEV_API_STR && d->flags & DEV_API_APART) {
		/* Firecracker opens the new medium at once and answers 400 if it
		 * cannot, the old one staying in use. */
		if (vmm_dev_replace(f->vmm, k->option, index, v->s, why, sizeof(why)) < 0) {
			api_reply_fault(rep, 400, "%s: %s: BackingFile(%s, \"%s\")", a->fault,
					a->replace_words, why, v->s);
			return -1;
		}
		snprintf(cur->v[j].s, sizeof(cur->v[j].s), "%s", v->s);
		api_fc_log(f, "Info", "%s %s now has %s.", a->noun, fc_coll_id(cur), v->s);
	}
	return 0;
}

void api_fc_coll_patch(struct api_fc *f, const struct api_req *r, struct api_reply *rep)
{
	const struct dm_kind *k = r->kind;
	const struct dev_api_patch *p = &k->api->patch[r->patch];
	struct fc_coll *c = fc_vmcfg_coll(&f->cfg, k);
	int found = c ? fc_coll_find(c, fc_coll_id(&r->u.res)) : -1;
	if (f->state == FC_NOT_STARTED)
		return api_reply_fault(rep, 400, PRE_BOOT);
	if (found < 0)
		return api_reply_fault(rep, 400, "%s: %s", k->api->fault, k->api->not_found);
	unsigned int index = f->coll_index[fc_coll_slot(k)][found];
	for (size_t i = 0; i < p->nr_fields && i < DEV_API_FIELDS_MAX; i++)
		if ((r->u.res.seen >> i) & 1u &&
		    patch_field(f, k, index, &c->item[found], &p->fields[i], &r->u.res.v[i], rep) <
			0)
			return;
	api_reply_none(rep);
}

const char *api_fc_dev_id(const struct api_fc *f, const char *option, unsigned int index)
{
	for (size_t i = 0; i < dm_nr_kinds; i++) {
		const struct fc_coll *c = fc_vmcfg_coll((struct fc_vmcfg *)&f->cfg, dm_kinds[i]);
		int s = fc_coll_slot(dm_kinds[i]);
		for (unsigned int e = 0; c && strcmp(dm_kinds[i]->option, option) == 0 && e < c->n;
		     e++)
			if (f->coll_index[s][e] == index)
				return fc_coll_id(&c->item[e]);
	}
	return NULL;
}
