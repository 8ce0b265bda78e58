// SPDX-License-Identifier: Apache-2.0
/* The metrics line: skiff's counters under Firecracker's names (see
 * api_metrics.h). The mapping is each device kind's table, named by its
 * row (devices/dev_metrics.h): a Firecracker field is the sum of at most
 * two of a device's counters, or 0 where skiff has no such event
 * (activate_fails: activation cannot fail). */
#include "api/api_metrics.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/api_fc.h"

struct flat {
	char *buf;
	struct flat_item {
		const char *name;
		double value;
	} * it;
	unsigned int n;
};

/* Splits a copy of the "name<TAB>value" text into items. */
static int flat_parse(struct flat *f, const char *text)
{
	memset(f, 0, sizeof(*f));
	size_t lines = 1;
	for (const char *p = text; *p; p++)
		lines += *p == '\n';
	f->buf = strdup(text);
	f->it = calloc(lines, sizeof(*f->it));
	if (!f->buf || !f->it)
		return -1;
	for (char *save, *l = strtok_r(f->buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *tab = strchr(l, '\t');
		if (!tab)
			continue;
		*tab = '\0';
		f->it[f->n++] = (struct flat_item){l, strtod(tab + 1, NULL)};
	}
	return 0;
}

static uint64_t flat_get(const struct flat *f, const char *name)
{
	for (unsigned int i = 0; i < f->n; i++)
		if (!strcmp(f->it[i].name, name))
			return f->it[i].value > 0 ? (uint64_t)f->it[i].value : 0;
	return 0;
}

static uint64_t dev_field(const struct flat *f, const char *dev, const struct dev_metric *field)
{
	uint64_t sum = 0;
	char name[160];
	for (int k = 0; k < 2 && field->what[k]; k++) {
		snprintf(name, sizeof(name), "counter %s %s", dev, field->what[k]);
		sum += flat_get(f, name);
	}
	return sum;
}

static struct json_object *group_object(const struct dev_metric *fields, size_t n,
					const uint64_t *v)
{
	struct json_object *o = json_object_new_object();
	for (size_t i = 0; o && i < n; i++)
		json_object_object_add(o, fields[i].name, json_object_new_uint64(v[i]));
	return o;
}

/* Whether an earlier row has a group of the same name (the e1000's and
 * virtio-net's are both "net": one aggregate, the same fields). */
static bool group_seen(size_t k)
{
	for (size_t j = 0; j < k; j++)
		if (dm_kinds[j]->metrics &&
		    !strcmp(dm_kinds[j]->metrics->group, dm_kinds[k]->metrics->group))
			return true;
	return false;
}

/* Each kind's group: "block" (every disk) and "block_<id>" for each with
 * an id; "net" alike; "entropy". */
static void add_dev_groups(struct json_object *out, const struct flat *f,
			   const struct fc_metrics_dev *devs, unsigned int nd)
{
	for (size_t k = 0; k < dm_nr_kinds; k++) {
		const struct dev_metrics *g = dm_kinds[k]->metrics;
		if (!g || group_seen(k))
			continue;
		uint64_t total[DEV_METRICS_FIELDS_MAX] = {0}, one[DEV_METRICS_FIELDS_MAX];
		size_t n = g->n < DEV_METRICS_FIELDS_MAX ? g->n : DEV_METRICS_FIELDS_MAX;
		for (unsigned int d = 0; d < nd; d++) {
			if (strcmp(devs[d].group->group, g->group) || devs[d].group->n != g->n)
				continue;
			for (size_t i = 0; i < n; i++) {
				one[i] = dev_field(f, devs[d].dev, &devs[d].group->fields[i]);
				total[i] += one[i];
			}
			if (!devs[d].id)
				continue;
			char key[128];
			snprintf(key, sizeof(key), "%s_%s", g->group, devs[d].id);
			json_object_object_add(out, key, group_object(g->fields, n, one));
		}
		json_object_object_add(out, g->group, group_object(g->fields, n, total));
	}
}

/* Exits summed over the vCPUs: the writes are counted apart (io_out,
 * mmio_write), the reads are the rest. A failure is an exit that ends
 * the VM with an error: a triple fault, or "other" (entry failure, KVM
 * internal error, an exit skiff does not handle). */
static void add_vcpu_group(struct json_object *out, const struct flat *f)
{
	uint64_t io = flat_get(f, "exit io"), io_out = flat_get(f, "exit io_out");
	uint64_t mmio = flat_get(f, "exit mmio"), mmio_w = flat_get(f, "exit mmio_write");
	/* The counters are read one by one while vCPUs run: a write may
	 * be counted in io_out but not yet in io. */
	const struct dev_metric fields[] = {
	    {"exit_io_in", {NULL}},	 {"exit_io_out", {NULL}}, {"exit_mmio_read", {NULL}},
	    {"exit_mmio_write", {NULL}}, {"failures", {NULL}},
	};
	const uint64_t v[] = {io > io_out ? io - io_out : 0, io_out,
			      mmio > mmio_w ? mmio - mmio_w : 0, mmio_w,
			      flat_get(f, "exit shutdown") + flat_get(f, "exit other")};
	json_object_object_add(out, "vcpu", group_object(fields, 5, v));
}

struct json_object *fc_metrics_object(const char *flat, const struct fc_metrics_dev *devs,
				      unsigned int n)
{
	struct flat f;
	struct json_object *o = json_object_new_object(), *s = json_object_new_object();
	if (flat_parse(&f, flat) < 0 || !o || !s) {
		json_object_put(s);
		json_object_put(o);
		o = NULL;
		goto out;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	json_object_object_add(
	    o, "utc_timestamp_ms",
	    json_object_new_int64((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000));
	for (unsigned int i = 0; i < f.n; i++)
		json_object_object_add(s, f.it[i].name, json_object_new_double(f.it[i].value));
	json_object_object_add(o, "skiff", s);
	add_dev_groups(o, &f, devs, n);
	add_vcpu_group(o, &f);
out:
	free(f.it);
	free(f.buf);
	return o;
}

/* Whether an earlier row has the same option (--net: virtio and e1000). */
static bool option_seen(size_t k)
{
	for (size_t j = 0; j < k; j++)
		if (!strcmp(dm_kinds[j]->option, dm_kinds[k]->option))
			return true;
	return false;
}

/* The row of a device of --OPTION: a device's name is its row's prefix
 * and an index (dm_kind.prefix), so the longest prefix of the name among
 * the option's rows ("virtio-net0", "e1000-0"). */
static const struct dm_kind *kind_of(const char *option, const char *name)
{
	const struct dm_kind *best = NULL;
	for (size_t k = 0; k < dm_nr_kinds; k++) {
		const struct dm_kind *r = dm_kinds[k];
		size_t len = strlen(r->prefix);
		if (!strcmp(r->option, option) && !strncmp(name, r->prefix, len) &&
		    (!best || len > strlen(best->prefix)))
			best = r;
	}
	return best;
}

unsigned int api_fc_metrics_devs(const struct api_fc *f, struct fc_metrics_dev *devs,
				 unsigned int max)
{
	unsigned int n = 0;
	for (size_t k = 0; f->state != FC_NOT_STARTED && k < dm_nr_kinds; k++) {
		const char *opt = dm_kinds[k]->option, *name;
		if (option_seen(k))
			continue;
		for (unsigned int i = 0; n < max && (name = vmm_dev_name(f->vmm, opt, i)) != NULL;
		     i++) {
			const struct dm_kind *r = kind_of(opt, name);
			if (r && r->metrics)
				devs[n++] = (struct fc_metrics_dev){r->metrics, name,
								    api_fc_dev_id(f, opt, i)};
		}
	}
	return n;
}
