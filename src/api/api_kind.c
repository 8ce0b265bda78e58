// SPDX-License-Identifier: Apache-2.0
/* The device kinds' API resources (devices/dev_api.h), served from their
 * rows alone: a PUT or PATCH body or a --config-file section is parsed by
 * a JSON table built from the kind's fields (serde's words, as every
 * other object), becomes the spec its command-line option takes, is
 * checked by that option's own table before any VM exists, and is written
 * back for GET /vm/config by the same table. Adding a kind with a
 * resource adds nothing here (the configuration's side: api_kind_cfg.c,
 * collections: api_kind_coll.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_model.h"

/* serde's name of an unsigned integer type by its range. */
static const char *uint_name(uint64_t max)
{
	return max <= UINT8_MAX	   ? "u8"
	       : max <= UINT16_MAX ? "u16"
	       : max <= UINT32_MAX ? "u32"
				   : "u64";
}

/* How a field of each type becomes spec keys: bytes written to out, or
 * -1 with why (a value refused). */
static int spec_str(const struct dev_api_field *d, const struct dev_api_val *v, bool seen,
		    char *out, size_t len, struct devmgr_arg *a, char *why, size_t wlen)
{
	if (d->flags & DEV_API_APART) {
		if (seen) { /* else left out (DEV_API_UNLESS_OPTIONS) */
			a->key = d->key;
			a->value = v->s;
		}
		return 0;
	}
	if (!d->key)
		return 0;
	if (strchr(v->s, ',')) {
		snprintf(why, wlen, "%s may not hold a ','", d->name);
		return -1;
	}
	return seen ? snprintf(out, len, ",%s=%s", d->key, v->s) : 0;
}

static int spec_uint(const struct dev_api_field *d, const struct dev_api_val *v, bool seen,
		     char *out, size_t len, struct devmgr_arg *a, char *why, size_t wlen)
{
	(void)a, (void)why, (void)wlen;
	return seen && d->key ? snprintf(out, len, ",%s=%lld", d->key, (long long)v->i) : 0;
}

static int spec_bool(const struct dev_api_field *d, const struct dev_api_val *v, bool seen,
		     char *out, size_t len, struct devmgr_arg *a, char *why, size_t wlen)
{
	(void)a, (void)why, (void)wlen;
	return seen && d->key ? snprintf(out, len, ",%s=%s", d->key, v->b ? "on" : "off") : 0;
}

static int spec_flag(const struct dev_api_field *d, const struct dev_api_val *v, bool seen,
		     char *out, size_t len, struct devmgr_arg *a, char *why, size_t wlen)
{
	(void)seen, (void)a, (void)why, (void)wlen;
	return v->b && d->key ? snprintf(out, len, ",%s", d->key) : 0;
}

/* A known value onto its spec value; another, or none, is no key (the
 * kind's check refuses what it must). */
static int spec_enum(const struct dev_api_field *d, const struct dev_api_val *v, bool seen,
		     char *out, size_t len, struct devmgr_arg *a, char *why, size_t wlen)
{
	(void)seen, (void)a, (void)why, (void)wlen;
	for (size_t i = 0; d->key && d->values && d->values[i]; i++)
		if (!strcmp(v->s, d->values[i]))
			return snprintf(out, len, ",%s=%s", d->key, d->spec_values[i]);
	return 0;
}

static int spec_rl(const struct dev_api_field *d, const struct dev_api_val *v, bool seen, char *out,
		   size_t len, struct devmgr_arg *a, char *why, size_t wlen)
{
	(void)seen, (void)a, (void)why, (void)wlen;
	char rl[FC_RL_SPEC_MAX];
	fc_rate_limiter_spec(&v->rl, d->key, rl, sizeof(rl));
	return snprintf(out, len, "%s", rl);
}

static int spec_refused(const struct dev_api_field *d, const struct dev_api_val *v, bool seen,
			char *out, size_t len, struct devmgr_arg *a, char *why, size_t wlen)
{
	(void)seen, (void)out, (void)len, (void)a;
	if (!v->b)
		return 0;
	snprintf(why, wlen, "skiff has no %s.", d->key);
	return -1;
}

static int spec_options(const struct dev_api_field *d, const struct dev_api_val *v, bool seen,
			char *out, size_t len, struct devmgr_arg *a, char *why, size_t wlen)
{
	(void)d, (void)a, (void)why, (void)wlen;
	return seen && v->s[0] ? snprintf(out, len, ",%s", v->s) : 0;
}

static int spec_none(const struct dev_api_field *d, const struct dev_api_val *v, bool seen,
		     char *out, size_t len, struct devmgr_arg *a, char *why, size_t wlen)
{
	(void)d, (void)v, (void)seen, (void)out, (void)len, (void)a, (void)why, (void)wlen;
	return 0;
}

/* Per field type: the JSON field it is (its member of fc_res_val, serde's
 * name for it; an integer's comes from its range) and its spec keys. */
static const struct {
	enum api_ftype ftype;
	size_t val_off, size;
	unsigned int flags;
	const char *expect;
	int (*spec)(const struct dev_api_field *d, const struct dev_api_val *v, bool seen,
		    char *out, size_t len, struct devmgr_arg *a, char *why, size_t wlen);
} types[] = {
    [DEV_API_STR] = {AF_STR, offsetof(struct dev_api_val, s), DEV_API_STR_MAX, 0, "a string",
		     spec_str},
    [DEV_API_UINT] = {AF_INT, offsetof(struct dev_api_val, i), 0, 0, NULL, spec_uint},
    [DEV_API_BOOL] = {AF_BOOL, offsetof(struct dev_api_val, b), 0, 0, "a boolean", spec_bool},
    [DEV_API_RATE_LIMITER] = {AF_OBJ, offsetof(struct dev_api_val, rl), sizeof(struct dev_api_rl),
			      0, "struct RateLimiterConfig", spec_rl},
    /* echoed back only if given, as Firecracker's Option */
    [DEV_API_IGNORED] = {AF_STR, offsetof(struct dev_api_val, s), DEV_API_STR_MAX, AF_IF_SEEN,
			 "a string", spec_none},
    [DEV_API_REFUSED] = {AF_BOOL, offsetof(struct dev_api_val, b), 0, 0, "a boolean", spec_refused},
    [DEV_API_OPTIONS] = {AF_STR, offsetof(struct dev_api_val, s), DEV_API_STR_MAX, AF_IF_SEEN,
			 "a string", spec_options},
    [DEV_API_FLAG] = {AF_BOOL, offsetof(struct dev_api_val, b), 0, 0, "a boolean", spec_flag},
    [DEV_API_ENUM] = {AF_STR, offsetof(struct dev_api_val, s), DEV_API_STR_MAX, 0, "a string",
		      spec_enum},
};
#define NR_TYPES (sizeof(types) / sizeof(types[0]))

/* A table's fields of known types, capped. */
static size_t known_fields(const struct dev_api_field *fields, size_t nr)
{
	size_t n = nr < DEV_API_FIELDS_MAX ? nr : DEV_API_FIELDS_MAX;
	for (size_t i = 0; i < n; i++)
		if ((unsigned int)fields[i].type >= NR_TYPES)
			return i;
	return n;
}

size_t fc_api_nr_fields(const struct dev_api *a)
{
	return known_fields(a->fields, a->nr_fields);
}

static size_t nr_fields(const struct dev_api *a)
{
	return fc_api_nr_fields(a);
}

/* The JSON table of fields (a resource's, or a PATCH's). */
static void fields_object(const struct dev_api_field *fields, size_t nr, const char *schema,
			  struct api_object *obj, struct api_field *f)
{
	size_t n = known_fields(fields, nr);
	for (size_t i = 0; i < n; i++) {
		const struct dev_api_field *d = &fields[i];
		f[i] = (struct api_field){
		    .name = d->name,
		    .type = types[d->type].ftype,
		    .off = offsetof(struct dev_api_res, v) + i * sizeof(struct dev_api_val) +
			   types[d->type].val_off,
		    .size =
			d->size && types[d->type].ftype == AF_STR ? d->size : types[d->type].size,
		    .min = d->min > INT64_MAX ? INT64_MAX : (int64_t)d->min,
		    .max = d->max > INT64_MAX ? INT64_MAX : (int64_t)d->max,
		    .flags = (d->flags & DEV_API_REQUIRED ? AF_REQUIRED : 0) |
			     /* left out when it may be, not null */
			     (d->flags & DEV_API_UNLESS_OPTIONS ? AF_IF_SEEN : 0) |
			     (d->flags & DEV_API_NULL ? AF_OPTIONAL : 0) | types[d->type].flags,
		    .expect = d->expect		      ? d->expect
			      : types[d->type].expect ? types[d->type].expect
						      : uint_name(d->max),
		    .sub = types[d->type].ftype == AF_OBJ ? &fc_rate_limiter_obj : NULL};
	}
	*obj = (struct api_object){
	    .name = schema, .fields = f, .n = n, .seen_off = offsetof(struct dev_api_res, seen)};
}

void fc_res_object(const struct dev_api *a, struct api_object *obj, struct api_field *f)
{
	fields_object(a->fields, a->nr_fields, a->schema, obj, f);
}

/* A body that gives skiff_options (not null) may leave its
 * DEV_API_UNLESS_OPTIONS fields out: the option table decides. */
static void res_relax(const struct dev_api *a, struct json_object *o, struct api_field *f)
{
	struct json_object *v;
	size_t n = nr_fields(a);
	bool opts = false;
	for (size_t i = 0; i < n && json_object_is_type(o, json_type_object); i++)
		opts |= a->fields[i].type == DEV_API_OPTIONS &&
			json_object_object_get_ex(o, a->fields[i].name, &v) &&
			!json_object_is_type(v, json_type_null);
	for (size_t i = 0; opts && i < n; i++)
		if (a->fields[i].flags & DEV_API_UNLESS_OPTIONS)
			f[i].flags &= ~AF_REQUIRED;
}

int fc_res_fill(const struct dm_kind *k, struct json_object *o, struct dev_api_res *r, char *err,
		size_t errlen)
{
	struct api_object obj;
	struct api_field f[DEV_API_FIELDS_MAX];
	fc_res_object(k->api, &obj, f);
	res_relax(k->api, o, f);
	memset(r, 0, sizeof(*r));
	return api_json_fill(&obj, o, r, err, errlen);
}

int fc_res_fill_text(const struct dm_kind *k, const char *text, size_t len, struct dev_api_res *r,
		     char *err, size_t errlen)
{
	struct json_object *o;
	if (api_json_parse(text, len, &o, err, errlen) < 0)
		return -1;
	int ret = fc_res_fill(k, o, r, err, errlen);
	json_object_put(o);
	return ret;
}

struct json_object *fc_res_json(const struct dm_kind *k, const struct dev_api_res *r)
{
	struct api_object obj;
	struct api_field f[DEV_API_FIELDS_MAX];
	fc_res_object(k->api, &obj, f);
	return api_json_from(&obj, r);
}

int64_t *fc_res_int(const struct dm_kind *k, struct dev_api_res *r, const char *name)
{
	for (size_t i = 0; i < nr_fields(k->api); i++)
		if (k->api->fields[i].type == DEV_API_UINT && !strcmp(k->api->fields[i].name, name))
			return &r->v[i].i;
	return NULL;
}

/* The values of fields as spec keys (a string apart into a). */
static int fields_spec(const struct dev_api_field *fields, size_t nr, const struct dev_api_res *r,
		       char *spec, size_t len, struct devmgr_arg *a, char *err, size_t errlen)
{
	size_t n = 0;
	spec[0] = '\0';
	for (size_t i = 0; i < known_fields(fields, nr); i++) {
		const struct dev_api_field *d = &fields[i];
		int w = types[d->type].spec(d, &r->v[i], (r->seen >> i) & 1u, spec + n, len - n, a,
					    err, errlen);
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

int fc_res_arg(const struct dm_kind *k, const struct dev_api_res *r, char *spec, size_t len,
	       struct devmgr_arg *a, char *err, size_t errlen)
{
	*a = (struct devmgr_arg){.option = k->option, .spec = spec};
	return fields_spec(k->api->fields, k->api->nr_fields, r, spec, len, a, err, errlen);
}

int fc_patch_fill_text(const struct dev_api_patch *p, const char *text, size_t len,
		       struct dev_api_res *r, char *err, size_t errlen)
{
	struct api_object obj;
	struct api_field f[DEV_API_FIELDS_MAX];
	fields_object(p->fields, p->nr_fields, p->schema, &obj, f);
	memset(r, 0, sizeof(*r));
	return api_json_fill_text(&obj, text, len, r, err, errlen);
}

int fc_patch_spec(const struct dev_api_patch *p, const struct dev_api_res *r, char *spec,
		  size_t len, char *err, size_t errlen)
{
	struct devmgr_arg a = {0};
	return fields_spec(p->fields, p->nr_fields, r, spec, len, &a, err, errlen);
}

void fc_patch_apply(const struct dm_kind *k, struct dev_api_res *cur, const struct dev_api_patch *p,
		    const struct dev_api_res *r)
{
	for (size_t i = 0; i < known_fields(p->fields, p->nr_fields); i++)
		for (size_t j = 0; (r->seen >> i) & 1u && j < nr_fields(k->api); j++)
			if (!strcmp(k->api->fields[j].name, p->fields[i].name)) {
				cur->v[j] = r->v[i];
				cur->seen |= 1u << j;
			}
}

int fc_res_check(const struct dm_kind *k, const struct dev_api_res *r, bool use_ioeventfd,
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
