/* The device kinds' API resources (devices/dev_api.h), served from their
 * rows alone: a PUT body or a --config-file section is parsed by a JSON
 * table built from the kind's fields (serde's words, as every other
 * object), becomes the spec its command-line option takes, is checked by
 * that option's own table before any VM exists, and is written back for
 * GET /vm/config by the same table. Adding a kind with a resource adds
 * nothing here. */
#include <stdio.h>
#include <string.h>

#include "api/api_model.h"

/* The slot of a kind among the kinds with a resource, in row order. */
static int res_slot(const struct dm_kind *k)
{
	int n = 0;
	for (size_t i = 0; i < dm_nr_kinds; i++) {
		if (&dm_kinds[i] == k)
			return k->api && n < FC_RES_MAX ? n : -1;
		n += dm_kinds[i].api != NULL;
	}
	return -1;
}

const struct dm_kind *fc_kind_by_route(const char *path)
{
	for (size_t i = 0; i < dm_nr_kinds; i++)
		if (dm_kinds[i].api && !strcmp(dm_kinds[i].api->route, path))
			return &dm_kinds[i];
	return NULL;
}

const struct dm_kind *fc_kind_by_section(const char *key)
{
	for (size_t i = 0; i < dm_nr_kinds; i++)
		if (dm_kinds[i].api && !strcmp(dm_kinds[i].api->section, key))
			return &dm_kinds[i];
	return NULL;
}

struct fc_res_cfg *fc_vmcfg_res(struct fc_vmcfg *c, const struct dm_kind *k)
{
	int s = k ? res_slot(k) : -1;
	return s < 0 ? NULL : &c->res[s];
}

/* serde's name of an unsigned integer type by its range. */
static const char *uint_name(uint64_t max)
{
	return max <= UINT8_MAX	   ? "u8"
	       : max <= UINT16_MAX ? "u16"
	       : max <= UINT32_MAX ? "u32"
				   : "u64";
}

void fc_res_object(const struct dev_api *a, struct api_object *obj, struct api_field *f)
{
	size_t n = a->nr_fields < DEV_API_FIELDS_MAX ? a->nr_fields : DEV_API_FIELDS_MAX;
	for (size_t i = 0; i < n; i++) {
		const struct dev_api_field *d = &a->fields[i];
		struct api_field *o = &f[i];
		*o = (struct api_field){.name = d->name,
					.flags = d->flags & DEV_API_REQUIRED ? AF_REQUIRED : 0};
		switch (d->type) {
		case DEV_API_STR:
		case DEV_API_IGNORED:
			o->type = AF_STR;
			o->off = offsetof(struct fc_res, v[i].s);
			o->size = sizeof(((struct fc_res *)0)->v[i].s);
			o->expect = "a string";
			o->flags |= d->type == DEV_API_IGNORED ? AF_IF_SEEN : 0;
			break;
		case DEV_API_UINT:
			o->type = AF_INT;
			o->off = offsetof(struct fc_res, v[i].i);
			o->max = d->max > INT64_MAX ? INT64_MAX : (int64_t)d->max;
			o->expect = uint_name(d->max);
			break;
		case DEV_API_BOOL:
		case DEV_API_REFUSED:
			o->type = AF_BOOL;
			o->off = offsetof(struct fc_res, v[i].b);
			o->expect = "a boolean";
			break;
		case DEV_API_RATE_LIMITER:
			o->type = AF_OBJ;
			o->off = offsetof(struct fc_res, v[i].rl);
			o->size = sizeof(struct fc_rate_limiter);
			o->sub = &fc_rate_limiter_obj;
			o->expect = "struct RateLimiterConfig";
			break;
		}
	}
	*obj = (struct api_object){
	    .name = a->schema, .fields = f, .n = n, .seen_off = offsetof(struct fc_res, seen)};
}

int fc_res_fill(const struct dm_kind *k, struct json_object *o, struct fc_res *r, char *err,
		size_t errlen)
{
	struct api_object obj;
	struct api_field f[DEV_API_FIELDS_MAX];
	fc_res_object(k->api, &obj, f);
	memset(r, 0, sizeof(*r));
	return api_json_fill(&obj, o, r, err, errlen);
}

int fc_res_fill_text(const struct dm_kind *k, const char *text, size_t len, struct fc_res *r,
		     char *err, size_t errlen)
{
	struct api_object obj;
	struct api_field f[DEV_API_FIELDS_MAX];
	fc_res_object(k->api, &obj, f);
	memset(r, 0, sizeof(*r));
	return api_json_fill_text(&obj, text, len, r, err, errlen);
}

struct json_object *fc_res_json(const struct dm_kind *k, const struct fc_res *r)
{
	struct api_object obj;
	struct api_field f[DEV_API_FIELDS_MAX];
	fc_res_object(k->api, &obj, f);
	return api_json_from(&obj, r);
}

int64_t *fc_res_int(const struct dm_kind *k, struct fc_res *r, const char *name)
{
	for (size_t i = 0; i < k->api->nr_fields && i < DEV_API_FIELDS_MAX; i++)
		if (k->api->fields[i].type == DEV_API_UINT && !strcmp(k->api->fields[i].name, name))
			return &r->v[i].i;
	return NULL;
}

/* One field's ",key=value" onto the spec at *n; -1 with why if refused. */
static int field_spec(const struct dev_api_field *d, const struct fc_res_val *v, bool seen,
		      char *out, size_t len, struct devmgr_arg *a, char *why, size_t wlen)
{
	char rl[FC_RL_SPEC_MAX];
	switch (d->type) {
	case DEV_API_STR:
		if (d->flags & DEV_API_APART) {
			a->key = d->key;
			a->value = v->s;
			return 0;
		}
		if (strchr(v->s, ',')) {
			snprintf(why, wlen, "%s may not hold a ','", d->name);
			return -1;
		}
		return seen ? snprintf(out, len, ",%s=%s", d->key, v->s) : 0;
	case DEV_API_UINT:
		return seen ? snprintf(out, len, ",%s=%lld", d->key, (long long)v->i) : 0;
	case DEV_API_BOOL:
		return seen ? snprintf(out, len, ",%s=%s", d->key, v->b ? "on" : "off") : 0;
	case DEV_API_RATE_LIMITER:
		fc_rate_limiter_spec(&v->rl, d->key, rl, sizeof(rl));
		return snprintf(out, len, "%s", rl);
	case DEV_API_REFUSED:
		if (v->b) {
			snprintf(why, wlen, "skiff has no %s.", d->key);
			return -1;
		}
		return 0;
	case DEV_API_IGNORED:
		return 0;
	}
	return 0;
}

int fc_res_arg(const struct dm_kind *k, const struct fc_res *r, char *spec, size_t len,
	       struct devmgr_arg *a, char *err, size_t errlen)
{
	size_t n = 0;
	*a = (struct devmgr_arg){.option = k->option, .spec = spec};
	spec[0] = '\0';
	for (size_t i = 0; i < k->api->nr_fields && i < DEV_API_FIELDS_MAX; i++) {
		int w = field_spec(&k->api->fields[i], &r->v[i], (r->seen >> i) & 1u, spec + n,
				   len - n, a, err, errlen);
		if (w < 0)
			return -1;
		n += (size_t)w;
		if (n >= len) {
			snprintf(err, errlen, "the spec is too long");
			return -1;
		}
	}
	if (spec[0] == ',')
		memmove(spec, spec + 1, n);
	return 0;
}

int fc_res_check(const struct dm_kind *k, const struct fc_res *r, bool use_ioeventfd,
		 uint64_t mem_mib, char *err, size_t errlen)
{
	char spec[FC_RES_SPEC_MAX], why[480];
	struct devmgr_arg a;
	if (fc_res_arg(k, r, spec, sizeof(spec), &a, why, sizeof(why)) < 0 ||
	    devmgr_check_api(&a, use_ioeventfd, mem_mib, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s: %s", k->api->fault, why);
		return -1;
	}
	return 0;
}

int fc_vmcfg_check_res(struct fc_vmcfg *c, char *err, size_t errlen)
{
	char why[600];
	for (size_t i = 0; i < dm_nr_kinds; i++) {
		const struct dm_kind *k = &dm_kinds[i];
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
