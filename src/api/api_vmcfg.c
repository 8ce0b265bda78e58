// SPDX-License-Identifier: Apache-2.0
/* The configuration as a whole: resources added by id, GET /vm/config,
 * and Firecracker's --config-file. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "api/api_model.h"

int fc_vmcfg_put_drive(struct fc_vmcfg *c, const struct fc_drive *d, char *err, size_t errlen)
{
	int i = 0;
	while (i < c->nr_drives && strcmp(c->drives[i].drive_id, d->drive_id))
		i++;
	for (int k = 0; d->is_root_device && k < c->nr_drives; k++) {
		if (k != i && c->drives[k].is_root_device) {
			snprintf(err, errlen,
				 "Drive config error: A root block device already exists!");
			return -1;
		}
	}
	if (i == FC_MAX_DRIVES) {
		snprintf(err, errlen, "Drive config error: skiff takes at most %d drives",
			 FC_MAX_DRIVES);
		return -1;
	}
	c->drives[i] = *d;
	/* Firecracker's default, shown by GET /vm/config (skiff's page cache
	 * use is the same either way: flushes reach the image). */
	if (!d->cache_type[0])
		snprintf(c->drives[i].cache_type, sizeof(c->drives[i].cache_type), "Unsafe");
	if (i == c->nr_drives)
		c->nr_drives++;
	return 0;
}

int fc_vmcfg_put_net(struct fc_vmcfg *c, const struct fc_net *n, char *err, size_t errlen)
{
	int i = 0;
	while (i < c->nr_nets && strcmp(c->nets[i].iface_id, n->iface_id))
		i++;
	for (int k = 0; n->guest_mac[0] && k < c->nr_nets; k++) {
		if (k != i && !strcasecmp(c->nets[k].guest_mac, n->guest_mac)) {
			snprintf(err, errlen,
				 "Network config error: The MAC address is already in use: %s",
				 n->guest_mac);
			return -1;
		}
	}
	/* One tap, one interface: Firecracker's open of a tap another
	 * interface holds fails (EBUSY). As in Firecracker (NetBuilder::build
	 * drops the old device before it creates the new one), an update that
	 * fails so leaves no interface of that id behind. */
	for (int k = 0; k < c->nr_nets; k++) {
		if (k != i && !strcmp(c->nets[k].host_dev_name, n->host_dev_name)) {
			snprintf(err, errlen,
				 "Network config error: Could not create the network device: Open "
				 "tap device failed: Resource busy (os error 16). The tap %s is "
				 "used by interface %s.",
				 n->host_dev_name, c->nets[k].iface_id);
			if (i < c->nr_nets) {
				memmove(&c->nets[i], &c->nets[i + 1],
					(size_t)(c->nr_nets - i - 1) * sizeof(c->nets[0]));
				c->nr_nets--;
			}
			return -1;
		}
	}
	if (i == FC_MAX_NETS) {
		snprintf(err, errlen, "Network config error: skiff takes at most %d interfaces",
			 FC_MAX_NETS);
		return -1;
	}
	c->nets[i] = *n;
	if (i == c->nr_nets)
		c->nr_nets++;
	return 0;
}

int fc_vmcfg_put_vfio(struct fc_vmcfg *c, const struct fc_vfio *v, char *err, size_t errlen)
{
	int i = 0;
	while (i < c->nr_vfio && strcmp(c->vfio[i].vfio_id, v->vfio_id))
		i++;
	if (i == FC_MAX_VFIO) {
		snprintf(err, errlen, "skiff takes at most %d VFIO devices", FC_MAX_VFIO);
		return -1;
	}
	c->vfio[i] = *v;
	if (i == c->nr_vfio)
		c->nr_vfio++;
	return 0;
}

struct json_object *fc_vmcfg_json(const struct fc_vmcfg *c)
{
	struct json_object *o = json_object_new_object();
	struct json_object *drives = json_object_new_array();
	struct json_object *nets = json_object_new_array();
	if (!o || !drives || !nets) {
		json_object_put(o);
		json_object_put(drives);
		json_object_put(nets);
		return NULL;
	}
	/* Optional sections: null unless configured (below), as Firecracker's. */
	static const char *const none[] = {"cpu-config", "memory-hotplug", "mmds-config"};
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		json_object_object_add(o, none[i], NULL);
	json_object_object_add(o, "pmem", json_object_new_array());
	if (c->has_boot)
		json_object_object_add(o, "boot-source", api_json_from(&fc_boot_obj, &c->boot));
	for (int i = 0; i < c->nr_drives; i++)
		json_object_array_add(drives, api_json_from(&fc_drive_obj, &c->drives[i]));
	json_object_object_add(o, "drives", drives);
	json_object_object_add(o, "machine-config", api_json_from(&fc_machine_obj, &c->machine));
	for (int i = 0; i < c->nr_nets; i++)
		json_object_array_add(nets, api_json_from(&fc_net_obj, &c->nets[i]));
	json_object_object_add(o, "network-interfaces", nets);
	json_object_object_add(o, "logger",
			       c->has_logger ? api_json_from(&fc_logger_obj, &c->logger) : NULL);
	json_object_object_add(o, "metrics",
			       c->has_metrics ? api_json_from(&fc_metrics_obj, &c->metrics) : NULL);
	for (size_t i = 0; i < dm_nr_kinds; i++) {
		const struct fc_res_cfg *r = fc_vmcfg_res((struct fc_vmcfg *)c, &dm_kinds[i]);
		if (r)
			json_object_object_add(o, dm_kinds[i].api->section,
					       r->has ? fc_res_json(&dm_kinds[i], &r->r) : NULL);
	}
	if (c->nr_vfio) {
		struct json_object *v = json_object_new_array();
		for (int i = 0; v && i < c->nr_vfio; i++)
			json_object_array_add(v, api_json_from(&fc_vfio_obj, &c->vfio[i]));
		json_object_object_add(o, "skiff-vfio", v);
	}
	return o;
}

/* One array of the config file, each item through its table and check. */
static int file_array(struct fc_vmcfg *c, const char *key, struct json_object *arr, char *err,
		      size_t errlen)
{
	if (json_object_get_type(arr) != json_type_array) {
		snprintf(err, errlen, "%s: invalid type, expected a sequence", key);
		return -1;
	}
	size_t n = json_object_array_length(arr);
	for (size_t i = 0; i < n; i++) {
		struct json_object *it = json_object_array_get_idx(arr, i);
		int r;
		if (!strcmp(key, "drives")) {
			static struct fc_drive d;
			memset(&d, 0, sizeof(d));
			r = api_json_fill(&fc_drive_obj, it, &d, err, errlen);
			if (!r)
				r = fc_drive_check(&d, err, errlen);
			if (!r)
				r = fc_vmcfg_put_drive(c, &d, err, errlen);
		} else if (!strcmp(key, "network-interfaces")) {
			static struct fc_net nt;
			memset(&nt, 0, sizeof(nt));
			r = api_json_fill(&fc_net_obj, it, &nt, err, errlen);
			if (!r)
				r = fc_net_check(&nt, err, errlen);
			if (!r)
				r = fc_vmcfg_put_net(c, &nt, err, errlen);
		} else {
			static struct fc_vfio v;
			memset(&v, 0, sizeof(v));
			r = api_json_fill(&fc_vfio_obj, it, &v, err, errlen);
			if (!r)
				r = fc_vmcfg_put_vfio(c, &v, err, errlen);
		}
		if (r < 0)
			return -1;
	}
	return 0;
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

/* One top-level key of the file, as Firecracker's VmmConfig takes it. */
static int file_key(struct fc_vmcfg *c, const char *key, struct json_object *v, bool *drives,
		    char *why, size_t len)
{
	bool null = json_object_get_type(v) == json_type_null;
	struct fc_res_cfg *res;
	int r = 0;
	if (!strcmp(key, "boot-source") || !strcmp(key, "drives")) {
		if (null) {
			snprintf(why, len, "invalid type: null, expected %s",
				 key[0] == 'd' ? "a sequence" : "struct BootSourceConfig");
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
	} else if ((res = fc_vmcfg_res(c, fc_kind_by_section(key)))) {
		/* a kind's section: checked once machine-config is known */
		r = fc_res_fill(fc_kind_by_section(key), v, &res->r, why, len);
		res->has = true;
	} else if (!strcmp(key, "drives") || !strcmp(key, "network-interfaces") ||
		   !strcmp(key, "skiff-vfio")) {
		*drives |= key[0] == 'd';
		r = file_array(c, key, v, why, len);
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
	bool drives = false;
	json_object_object_foreach(o, key, v)
	{
		if (r < 0)
			break;
		r = file_key(c, key, v, &drives, why, sizeof(why));
		if (r < 0)
			snprintf(err, errlen, "%s: %s", key, why);
	}
	if (!r && fc_vmcfg_check_res(c, err, errlen) < 0)
		r = -1;
	if (!r && (!c->has_boot || !drives)) {
		snprintf(err, errlen, "missing field `%s`", c->has_boot ? "drives" : "boot-source");
		r = -1;
	}
	json_object_put(o);
	return r;
}
