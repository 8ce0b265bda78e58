/* The metrics line: skiff's counters under Firecracker's names (see
 * api_metrics.h). The mapping is a table per group; a Firecracker field
 * is the sum of at most two of a device's counters, or 0 where skiff has
 * no such event (activate_fails: activation cannot fail). */
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

struct fc_field {
	const char *fc;
	const char *what[2]; /* the device's counters ("counter DEV WHAT") */
};

static const struct fc_field block_fields[] = {
    {"activate_fails", {NULL}},
    {"cfg_fails", {"config fails"}},
    {"execute_fails", {"io errors"}},
    {"flush_count", {"flushes"}},
    {"invalid_reqs_count", {"invalid requests"}},
    {"queue_event_count", {"queue events"}},
    {"rate_limiter_throttled_events", {"rate limiter throttled"}},
    {"read_bytes", {"read bytes"}},
    {"read_count", {"reads"}},
    {"update_count", {"updates"}},
    {"update_fails", {"update fails"}},
    {"write_bytes", {"write bytes"}},
    {"write_count", {"writes"}},
};

/* virtio-net and e1000 count under the same names. A frame lost on
 * receive, to a tap error or one the guest cannot take, is an rx_fail;
 * on transmit, a malformed frame is not a tx_fail (as in Firecracker). */
static const struct fc_field net_fields[] = {
    {"activate_fails", {NULL}},
    {"no_rx_avail_buffer", {"rx starved"}},
    {"rx_bytes_count", {"rx bytes"}},
    {"rx_count", {"rx packets"}},
    {"rx_fails", {"rx errors", "rx dropped"}},
    {"rx_packets_count", {"rx packets"}},
    {"rx_rate_limiter_throttled", {"rx rate limiter throttled"}},
    {"tap_read_fails", {"rx errors"}},
    {"tap_write_fails", {"tx errors"}},
    {"tx_bytes_count", {"tx bytes"}},
    {"tx_count", {"tx packets"}},
    {"tx_fails", {"tx errors"}},
    {"tx_malformed_frames", {"tx dropped"}},
    {"tx_packets_count", {"tx packets"}},
    {"tx_rate_limiter_throttled", {"tx rate limiter throttled"}},
};

/* The VM's one virtio-rng (Firecracker's entropy has no per-device
 * groups). An event fails on a refused chain or an empty host source. */
static const struct fc_field entropy_fields[] = {
    {"activate_fails", {NULL}},
    {"entropy_bytes", {"bytes"}},
    {"entropy_event_count", {"requests"}},
    {"entropy_event_fails", {"bad requests", "host rng fails"}},
    {"entropy_rate_limiter_throttled", {"rate limiter throttled"}},
    {"host_rng_fails", {"host rng fails"}},
    {"rate_limiter_event_count", {"rate limiter events"}},
};

#define FC_FIELDS_MAX 16

static const struct {
	const char *name;
	const struct fc_field *fields;
	unsigned int n;
} fc_groups[] = {
    [FC_METRICS_BLOCK] = {"block", block_fields, sizeof(block_fields) / sizeof(block_fields[0])},
    [FC_METRICS_NET] = {"net", net_fields, sizeof(net_fields) / sizeof(net_fields[0])},
    [FC_METRICS_ENTROPY] = {"entropy", entropy_fields,
			    sizeof(entropy_fields) / sizeof(entropy_fields[0])},
};

static uint64_t dev_field(const struct flat *f, const char *dev, const struct fc_field *field)
{
	uint64_t sum = 0;
	char name[160];
	for (int k = 0; k < 2 && field->what[k]; k++) {
		snprintf(name, sizeof(name), "counter %s %s", dev, field->what[k]);
		sum += flat_get(f, name);
	}
	return sum;
}

static struct json_object *group_object(const struct fc_field *fields, unsigned int n,
					const uint64_t *v)
{
	struct json_object *o = json_object_new_object();
	for (unsigned int i = 0; o && i < n; i++)
		json_object_object_add(o, fields[i].fc, json_object_new_uint64(v[i]));
	return o;
}

/* "block" (every disk) and "block_<id>" for each with an id; "net" alike. */
static void add_dev_groups(struct json_object *out, const struct flat *f,
			   const struct fc_metrics_dev *devs, unsigned int nd)
{
	for (unsigned int g = 0; g < sizeof(fc_groups) / sizeof(fc_groups[0]); g++) {
		uint64_t total[FC_FIELDS_MAX] = {0}, one[FC_FIELDS_MAX];
		const struct fc_field *fields = fc_groups[g].fields;
		unsigned int n = fc_groups[g].n;
		for (unsigned int d = 0; d < nd; d++) {
			if (devs[d].group != (enum fc_metrics_group)g)
				continue;
			for (unsigned int i = 0; i < n; i++) {
				one[i] = dev_field(f, devs[d].dev, &fields[i]);
				total[i] += one[i];
			}
			if (!devs[d].id)
				continue;
			char key[128];
			snprintf(key, sizeof(key), "%s_%s", fc_groups[g].name, devs[d].id);
			json_object_object_add(out, key, group_object(fields, n, one));
		}
		json_object_object_add(out, fc_groups[g].name, group_object(fields, n, total));
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
	const struct fc_field fields[] = {
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

/* The API's id of the index-th --disk / --net, if the API configured it. */
static const char *dev_id(const struct api_fc *f, enum fc_metrics_group g, unsigned int index)
{
	if (g == FC_METRICS_ENTROPY)
		return NULL;
	if (g == FC_METRICS_NET)
		return (int)index < f->cfg.nr_nets ? f->cfg.nets[index].iface_id : NULL;
	for (int i = 0; i < f->cfg.nr_drives; i++)
		if (f->disk_index[i] == index)
			return f->cfg.drives[i].drive_id;
	return NULL;
}

unsigned int api_fc_metrics_devs(const struct api_fc *f, struct fc_metrics_dev *devs,
				 unsigned int max)
{
	static const char *const option[] = {
	    [FC_METRICS_BLOCK] = "disk", [FC_METRICS_NET] = "net", [FC_METRICS_ENTROPY] = "rng"};
	unsigned int n = 0;
	for (unsigned int g = 0; f->state != FC_NOT_STARTED && g < FC_METRICS_NR; g++) {
		const char *name;
		for (unsigned int i = 0;
		     n < max && (name = vmm_dev_name(f->vmm, option[g], i)) != NULL; i++)
			devs[n++] = (struct fc_metrics_dev){(enum fc_metrics_group)g, name,
							    dev_id(f, (enum fc_metrics_group)g, i)};
	}
	return n;
}
