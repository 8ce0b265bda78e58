// SPDX-License-Identifier: Apache-2.0
/* The configuration as a whole: GET /vm/config and Firecracker's
 * --config-file (the device kinds' resources: api_kind_cfg.c). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "api/api_model.h"

struct json_object *fc_vmcfg_json(const struct fc_vmcfg *c)
{
	struct json_object *o = json_object_new_object();
	if (!o)
		return NULL;
	/* Optional sections: null unless configured (below), as Firecracker's. */
	static const char *const none[] = {"cpu-config", "memory-hotplug", "mmds-config"};
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		json_object_object_add(o, none[i], NULL);
	json_object_object_add(o, "pmem", json_object_new_array());
	if (c->has_boot)
		json_object_object_add(o, "boot-source", api_json_from(&fc_boot_obj, &c->boot));
	fc_coll_json(c, o); /* "drives", "network-interfaces", "skiff-vfio": lists */
	json_object_object_add(o, "machine-config", api_json_from(&fc_machine_obj, &c->machine));
	json_object_object_add(o, "logger",
			       c->has_logger ? api_json_from(&fc_logger_obj, &c->logger) : NULL);
	json_object_object_add(o, "metrics",
			       c->has_metrics ? api_json_from(&fc_metrics_obj, &c->metrics) : NULL);
	for (size_t i = 0; i < dm_nr_kinds; i++) {
		const struct fc_res_cfg *r = fc_vmcfg_res((struct fc_vmcfg *)c, dm_kinds[i]);
		if (r)
			json_object_object_add(o, dm_kinds[i]->api->section,
					       r->has ? fc_res_json(dm_kinds[i], &r->r) : NULL);
	}
	return o;
}

/* Firecracker's sections skiff has no device for: refused when given (a
 * VM without the MMDS it was promised is worse than no VM); null is as
 * absent. */
static const char *const fc_unsupported[] = {"mmds-config", "cpu-config", "memory-hotplug", "pmem"};

static bool unsupported(const char *key)
{
	for (size_t i = 0; i < sizeof(fc_unsupported) / sizeof(fc_unsupported[0]); i++)
		if (!strcmp(key, fc_unsupported[i]))
			return true;
	return false;
}

/* A kind's section of the file that must be there (its collection's
 * required: Firecracker's drives); its bit in *given. */
static bool required(const struct dm_kind *k)
{
	return k && k->api && k->api->max && k->api->required;
}

/* One top-level key of the file, as Firecracker's VmmConfig takes it. */
static int file_key(struct fc_vmcfg *c, const char *key, struct json_object *v, uint32_t *given,
		    char *why, size_t len)
{
	bool null = json_object_get_type(v) == json_type_null;
	const struct dm_kind *k = fc_kind_by_section(key);
	struct fc_res_cfg *res;
	int r = 0;
	if (!strcmp(key, "boot-source") || required(k)) {
		if (null) {
			snprintf(why, len, "invalid type: null, expected %s",
				 k ? "a sequence" : "struct BootSourceConfig");
			return -1;
		}
	} else if (null) {
		return 0; /* an optional section: null is absent */
	}
	if (!strcmp(key, "boot-source")) {
		r = api_json_fill(&fc_boot_obj, v, &c->boot, why, len);
		c->has_boot = true;
	} else if (!strcmp(key, "machine-config")) {
		r = api_json_fill(&fc_machine_obj, v, &c->machine, why, len);
		if (!r)
			r = fc_machine_check(&c->machine, why, len);
	} else if (!strcmp(key, "logger")) {
		r = api_json_fill(&fc_logger_obj, v, &c->logger, why, len);
		if (!r)
			r = fc_logger_check(&c->logger, why, len);
		c->has_logger = true;
	} else if (!strcmp(key, "metrics")) {
		r = api_json_fill(&fc_metrics_obj, v, &c->metrics, why, len);
		c->has_metrics = true;
	} else if ((res = fc_vmcfg_res(c, k))) {
		/* a kind's section: checked once machine-config is known */
		r = fc_res_fill(k, v, &res->r, why, len);
		res->has = true;
	} else if (fc_vmcfg_coll(c, k)) {
		*given |= 1u << fc_coll_slot(k);
		r = fc_coll_file(c, k, v, why, len);

	} else if (unsupported(key) && json_object_get_type(v) == json_type_array &&
		   !json_object_array_length(v)) {
		r = 0; /* "pmem": [] as GET /vm/config writes it: none asked for */
	} else if (unsupported(key)) {
		snprintf(why, len, "The requested operation is not supported: skiff has no %s.",
			 key);
		r = -1;
	} /* any other key: ignored, as Firecracker's VmmConfig does */
	return r;
}

int fc_vmcfg_parse_file(struct fc_vmcfg *c, const char *text, size_t len, char *err, size_t errlen)
{
	struct json_object *o;
	char why[400];
	fc_vmcfg_init(c);
	if (api_json_parse(text, len, &o, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s", why);
		return -1;
	}
	if (json_object_get_type(o) != json_type_object) {
		/* (json-c's foreach walks only objects) */
		snprintf(err, errlen, "invalid type: %s, expected a map",
			 json_object_get_type(o) == json_type_array ? "sequence" : "value");
		json_object_put(o);
		return -1;
	}
	int r = 0;
	uint32_t given = 0;
	json_object_object_foreach(o, key, v)
	{
		if (r < 0)
			break;
		r = file_key(c, key, v, &given, why, sizeof(why));
		if (r < 0)
			snprintf(err, errlen, "%s: %s", key, why);
	}
	if (!r && fc_vmcfg_check_res(c, err, errlen) < 0)
		r = -1;
	if (!r && !c->has_boot) {
		snprintf(err, errlen, "missing field `boot-source`");
		r = -1;
	}
	for (size_t i = 0; !r && i < dm_nr_kinds; i++)
		if (required(dm_kinds[i]) && !(given & (1u << fc_coll_slot(dm_kinds[i])))) {
			snprintf(err, errlen, "missing field `%s`", dm_kinds[i]->api->section);
			r = -1;
		}
	json_object_put(o);
	return r;
}
