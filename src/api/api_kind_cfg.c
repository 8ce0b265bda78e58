// SPDX-License-Identifier: Apache-2.0
/* The device kinds' resources in the configuration (devices/dev_api.h):
 * their slots, a collection's entries added by id, each one-device
 * resource checked against the machine, and the resources a restored VM's
 * devices stand for. Nothing here names a kind. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_model.h"

/* The slot of a kind among the kinds with a resource of its sort (one
 * device's, or a collection), in row order; -1: none. */
static int slot(const struct dm_kind *k, bool coll, int max)
{
	int n = 0;
	for (size_t i = 0; k && i < dm_nr_kinds; i++) {
		const struct dev_api *a = dm_kinds[i]->api;
		bool of = a && (a->max > 0) == coll;
		if (dm_kinds[i] == k)
			return of && n < max ? n : -1;
		n += of;
	}
	return -1;
}

int fc_coll_slot(const struct dm_kind *k)
{
	return slot(k, true, FC_COLLS);
}

const struct dm_kind *fc_kind_by_route(const char *path)
{
	for (size_t i = 0; i < dm_nr_kinds; i++)
		if (dm_kinds[i]->api && !strcmp(dm_kinds[i]->api->route, path))
			return dm_kinds[i];
	return NULL;
}

const struct dm_kind *fc_kind_by_section(const char *key)
{
	for (size_t i = 0; i < dm_nr_kinds; i++)
		if (dm_kinds[i]->api && !strcmp(dm_kinds[i]->api->section, key))
			return dm_kinds[i];
	return NULL;
}

struct fc_res_cfg *fc_vmcfg_res(struct fc_vmcfg *c, const struct dm_kind *k)
{
	int s = slot(k, false, FC_RES_MAX);
	return s < 0 ? NULL : &c->res[s];
}

struct fc_coll *fc_vmcfg_coll(struct fc_vmcfg *c, const struct dm_kind *k)
{
	int s = fc_coll_slot(k);
	return s < 0 ? NULL : &c->coll[s];
}

/* The collection's id: its table's first field (DEV_API_ID). */
const char *fc_coll_id(const struct dev_api_res *r)
{
	return r->v[0].s;
}

int fc_coll_find(const struct fc_coll *c, const char *id)
{
	for (unsigned int i = 0; i < c->n; i++)
		if (!strcmp(fc_coll_id(&c->item[i]), id))
			return (int)i;
	return -1;
}

int fc_coll_put(const struct dm_kind *k, struct fc_coll *c, const struct dev_api_res *r, char *err,
		size_t errlen)
{
	const struct dev_api *a = k->api;
	int f = fc_coll_find(c, fc_coll_id(r));
	unsigned int at = f < 0 ? c->n : (unsigned int)f;
	bool drop = false;
	if (a->check_set && a->check_set(c->item, c->n, at, r, &drop, err, errlen) < 0) {
		if (drop && at < c->n) {
			memmove(&c->item[at], &c->item[at + 1],
				(c->n - at - 1) * sizeof(c->item[0]));
			c->n--;
		}
		return -1;
	}
	if (at == c->n && (c->n >= a->max || c->n >= FC_COLL_MAX)) {
		snprintf(err, errlen, "%s", a->full);
		return -1;
	}
	c->item[at] = *r;
	/* What Firecracker shows when it was not given (a drive's cache_type). */
	for (size_t i = 0; i < fc_api_nr_fields(a); i++)
		if (a->fields[i].dflt && !c->item[at].v[i].s[0])
			snprintf(c->item[at].v[i].s, sizeof(c->item[at].v[i].s), "%s",
				 a->fields[i].dflt);
	if (at == c->n)
		c->n++;
	return 0;
}

int fc_vmcfg_check_res(struct fc_vmcfg *c, char *err, size_t errlen)
{
	char why[600];
	for (size_t i = 0; i < dm_nr_kinds; i++) {
		const struct dm_kind *k = dm_kinds[i];
		struct fc_res_cfg *s = fc_vmcfg_res(c, k);
		if (s && s->has &&
		    fc_res_check(k, &s->r, true, (uint64_t)c->machine.mem_size_mib, why,
				 sizeof(why)) < 0) {
			snprintf(err, errlen, "%s: %s", k->api->section, why);
			return -1;
		}
	}
	return 0;
}

/* A key no field takes onto the kind's skiff_options, if it has one. */
static void res_to_options(const struct dev_api *a, struct dev_api_res *r, const char *key,
			   const char *val)
{
	for (size_t i = 0; i < fc_api_nr_fields(a); i++) {
		if (a->fields[i].type != DEV_API_OPTIONS)
			continue;
		char *s = r->v[i].s;
		size_t n = strlen(s);
		snprintf(s + n, sizeof(r->v[i].s) - n, "%s%s=%s", n ? "," : "", key, val);
		r->seen |= 1u << i;
		return;
	}
}

/* One `key=value` of a spec onto the field with that key, if the kind's
 * table has one of a plain type (rate limiters stay unset: GET shows what
 * the table can say); a key no field has onto skiff_options. */
static void res_from_kv(const struct dev_api *a, struct dev_api_res *r, const char *key,
			const char *val)
{
	for (size_t i = 0; i < fc_api_nr_fields(a); i++) {
		const struct dev_api_field *d = &a->fields[i];
		if (!d->key || strcmp(d->key, key))
			continue;
		if (d->type == DEV_API_UINT)
			r->v[i].i = strtoll(val, NULL, 10);
		else if (d->type == DEV_API_BOOL)
			r->v[i].b = !strcmp(val, "on") || !strcmp(val, "true") || !strcmp(val, "1");
		else if (d->type == DEV_API_STR)
			snprintf(r->v[i].s, sizeof(r->v[i].s), "%s", val);
		else
			return;
		r->seen |= 1u << i;
		return;
	}
	res_to_options(a, r, key, val);
}

void fc_vmcfg_from_devices(struct fc_vmcfg *c, const struct devmgr *dm)
{
	for (unsigned int i = 0; i < dm->nr; i++) {
		const struct dm_entry *e = &dm->devs[i];
		struct fc_res_cfg *rc = fc_vmcfg_res(c, e->kind);
		if (!rc || rc->has)
			continue;
		memset(&rc->r, 0, sizeof(rc->r));
		char spec[FC_RES_SPEC_MAX];
		snprintf(spec, sizeof(spec), "%s", e->arg_spec ? e->arg_spec : "");
		char *save = NULL;
		for (char *kv = strtok_r(spec, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
			char *eq = strchr(kv, '=');
			if (eq) {
				*eq = '\0';
				res_from_kv(e->kind->api, &rc->r, kv, eq + 1);
			}
		}
		if (e->arg_key && e->arg_value)
			res_from_kv(e->kind->api, &rc->r, e->arg_key, e->arg_value);
		rc->has = true;
	}
}

void fc_coll_json(const struct fc_vmcfg *c, struct json_object *o)
{
	for (size_t i = 0; i < dm_nr_kinds; i++) {
		const struct dm_kind *k = dm_kinds[i];
		const struct fc_coll *s = fc_vmcfg_coll((struct fc_vmcfg *)c, k);
		struct json_object *arr =
		    s && (s->n || !k->api->hide_empty) ? json_object_new_array() : NULL;
		for (unsigned int e = 0; arr && e < s->n; e++)
			json_object_array_add(arr, fc_res_json(k, &s->item[e]));
		if (arr)
			json_object_object_add(o, k->api->section, arr);
	}
}

int fc_coll_file(struct fc_vmcfg *c, const struct dm_kind *k, struct json_object *arr, char *err,
		 size_t errlen)
{
	struct fc_coll *s = fc_vmcfg_coll(c, k);
	if (json_object_get_type(arr) != json_type_array) {
		snprintf(err, errlen, "%s: invalid type, expected a sequence", k->api->section);
		return -1;
	}
	size_t n = json_object_array_length(arr);
	for (size_t i = 0; s && i < n; i++) {
		static struct dev_api_res r; /* large: not on the stack */
		if (fc_res_fill(k, json_object_array_get_idx(arr, i), &r, err, errlen) < 0 ||
		    (k->api->check && k->api->check(&r, false, err, errlen) < 0) ||
		    fc_coll_put(k, s, &r, err, errlen) < 0)
			return -1;
	}
	return 0;
}
