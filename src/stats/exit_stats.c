// SPDX-License-Identifier: Apache-2.0
#include "stats/exit_stats.h"

#include <inttypes.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "core/vcpu.h"
#include "core/vm.h"
#include "iothread/iothread.h"
#include "stats/exit_sites.h"
#include "stats/kvm_stats.h"

#define TOP_SITES 40

static void totals(const struct vm *vm, uint64_t *total, double *vcpu_cpu_s)
{
	*vcpu_cpu_s = 0;
	for (int s = 0; s < VCPU_STAT_NR; s++)
		total[s] = 0;
	for (int i = 0; i < vm->nr_cpus; i++) {
		if (!vm->vcpus[i])
			continue;
		for (int s = 0; s < VCPU_STAT_NR; s++)
			total[s] += counter_get(&vm->vcpus[i]->exits[s]);
		*vcpu_cpu_s += vm->vcpus[i]->cpu_ns / 1e9;
	}
}

static void kvm_totals(const struct vm *vm, struct kvm_counters *k)
{
	k->n = 0;
	for (int i = 0; i < vm->nr_cpus; i++)
		if (vm->vcpus[i])
			kvm_stats_collect(vm->vcpus[i]->fd, k);
}

struct snap {
	struct snap_item {
		char name[80];
		uint64_t value;
	} * items;
	unsigned int n, cap;
};

static void snap_emit(void *ctx, const char *owner, const char *what, uint64_t value)
{
	struct snap *s = ctx;
	if (s->n == s->cap) {
		unsigned int cap = s->cap ? 2 * s->cap : 64;
		struct snap_item *p = realloc(s->items, cap * sizeof(*p));
		if (!p)
			return;
		s->items = p;
		s->cap = cap;
	}
	snprintf(s->items[s->n].name, sizeof(s->items[0].name), "%s %s", owner, what);
	s->items[s->n++].value = value;
}

/* Every counter, read once: the three renderings show the same numbers. */
static struct snap snap_take(const struct exit_stats_src *src)
{
	struct snap s = {0};
	if (src->counters)
		src->counters(src->counters_opaque, snap_emit, &s);
	return s;
}

static const char *space_name(uint8_t sp)
{
	return sp == BUS_PIO ? "pio" : sp == BUS_MMIO_BATCHED ? "mmio-coalesced" : "mmio";
}

static void site_label(const struct exit_site *e, char *buf, size_t len)
{
	if (!e->dev)
		snprintf(buf, len, "unclaimed %s %#" PRIx64, space_name(e->space), e->addr);
	else
		snprintf(buf, len, "%s %s%s", e->dev, e->reg ? e->reg : "-",
			 e->space == BUS_MMIO_BATCHED ? " (coalesced)" : "");
}

void exit_stats_print(FILE *out, const struct exit_stats_src *src)
{
	uint64_t total[VCPU_STAT_NR];
	double vcpu_cpu;
	totals(src->vm, total, &vcpu_cpu);
	fprintf(out, "--- skiff exit accounting (%.2f s) ---\n", src->wall_s);
	fprintf(out, "%-40s %12s %10s\n", "exits to skiff, by reason", "count", "per s");
	for (int s = 0; s < VCPU_STAT_NR; s++)
		if (total[s])
			fprintf(out, "  %-38s %12" PRIu64 " %10.1f\n",
				vcpu_stat_name((enum vcpu_exit_stat)s), total[s],
				total[s] / src->wall_s);
	struct exit_site *sites = calloc(EXIT_SITES_MAX, sizeof(*sites));
	unsigned int n = sites ? exit_sites_sorted(src->sites, sites, EXIT_SITES_MAX) : 0;
	fprintf(out, "%-40s %12s %10s\n", "port I/O and MMIO exits, by register", "count", "per s");
	for (unsigned int i = 0; i < n && i < TOP_SITES; i++) {
		char label[96];
		site_label(&sites[i], label, sizeof(label));
		uint64_t c = counter_get(&sites[i].count);
		fprintf(out, "  %-32s %5s %12" PRIu64 " %10.1f\n", label,
			sites[i].is_write ? "write" : "read", c, c / src->wall_s);
	}
	free(sites);
	struct snap cs = snap_take(src);
	if (cs.n)
		fprintf(out, "%-40s %12s\n", "device and I/O-thread counters", "count");
	for (unsigned int i = 0; i < cs.n; i++)
		fprintf(out, "  %-38s %12" PRIu64 "\n", cs.items[i].name, cs.items[i].value);
	free(cs.items);
	struct kvm_counters *k = calloc(1, sizeof(*k));
	if (k) {
		kvm_totals(src->vm, k);
		if (k->n)
			fprintf(out, "%-40s %12s\n", "KVM's counters (all vCPUs)", "count");
		for (unsigned int i = 0; i < k->n; i++)
			if (k->c[i].value)
				fprintf(out, "  %-38s %12" PRIu64 "\n", k->c[i].name,
					k->c[i].value);
		free(k);
	}
	fprintf(out, "%-40s %12s\n", "CPU time", "seconds");
	for (int i = 0; i < src->vm->nr_cpus; i++)
		if (src->vm->vcpus[i])
			fprintf(out, "  vcpu%-34d %12.3f\n", i, src->vm->vcpus[i]->cpu_ns / 1e9);
	for (unsigned int i = 0; i < src->nr_io; i++)
		fprintf(out, "  %-38s %12.3f\n", src->io[i].name, src->io[i].cpu_ns / 1e9);
}

/* --stats-json: every string and object is written by json-c, escaped;
 * only the layout is ours (one counter, one site a line, which scripts
 * read with sed). */
static void put_json(FILE *out, struct json_object *o)
{
	const char *s = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_SPACED |
								  JSON_C_TO_STRING_NOSLASHESCAPE)
			  : NULL;
	fputs(s ? s : "null", out);
	json_object_put(o);
}

static struct json_object *seconds(double s)
{
	char text[32];
	snprintf(text, sizeof(text), "%.6f", s);
	return json_object_new_double_s(s, text);
}

/* "name": value lines of an object, the names escaped. */
static void put_named(FILE *out, const char *name, uint64_t value, bool first)
{
	fputs(first ? "\n    " : ",\n    ", out);
	put_json(out, json_object_new_string(name));
	fprintf(out, ": %" PRIu64, value);
}

void exit_stats_json(FILE *out, const struct exit_stats_src *src)
{
	uint64_t total[VCPU_STAT_NR];
	double vcpu_cpu;
	totals(src->vm, total, &vcpu_cpu);
	struct json_object *exits = json_object_new_object();
	for (int s = 0; exits && s < VCPU_STAT_NR; s++)
		json_object_object_add(exits, vcpu_stat_name((enum vcpu_exit_stat)s),
				       json_object_new_uint64(total[s]));
	fprintf(out, "{\n  \"wall_s\": %.6f,\n  \"exits\": ", src->wall_s);
	put_json(out, exits);
	fprintf(out, ",\n  \"sites\": [");
	struct exit_site *sites = calloc(EXIT_SITES_MAX, sizeof(*sites));
	unsigned int n = sites ? exit_sites_sorted(src->sites, sites, EXIT_SITES_MAX) : 0;
	for (unsigned int i = 0; i < n; i++) {
		char label[96];
		site_label(&sites[i], label, sizeof(label));
		struct json_object *o = json_object_new_object();
		if (o) {
			json_object_object_add(o, "site", json_object_new_string(label));
			json_object_object_add(o, "space",
					       json_object_new_string(space_name(sites[i].space)));
			json_object_object_add(
			    o, "op", json_object_new_string(sites[i].is_write ? "write" : "read"));
			json_object_object_add(
			    o, "count",
			    json_object_new_uint64((uint64_t)counter_get(&sites[i].count)));
		}
		fputs(i ? ",\n    " : "\n    ", out);
		put_json(out, o);
	}
	free(sites);
	fprintf(out, "\n  ],\n  \"counters\": {");
	struct snap cs = snap_take(src);
	for (unsigned int i = 0; i < cs.n; i++)
		put_named(out, cs.items[i].name, cs.items[i].value, !i);
	free(cs.items);
	fprintf(out, "\n  },\n  \"kvm\": {");
	struct kvm_counters *k = calloc(1, sizeof(*k));
	if (k) {
		kvm_totals(src->vm, k);
		for (unsigned int i = 0; i < k->n; i++)
			put_named(out, k->c[i].name, k->c[i].value, !i);
		free(k);
	}
	struct json_object *cpu = json_object_new_object();
	for (int i = 0; cpu && i < src->vm->nr_cpus; i++) {
		char name[32];
		snprintf(name, sizeof(name), "vcpu%d", i);
		if (src->vm->vcpus[i])
			json_object_object_add(cpu, name, seconds(src->vm->vcpus[i]->cpu_ns / 1e9));
	}
	for (unsigned int i = 0; cpu && i < src->nr_io; i++)
		json_object_object_add(cpu, src->io[i].name, seconds(src->io[i].cpu_ns / 1e9));
	fprintf(out, "\n  },\n  \"cpu_s\": ");
	put_json(out, cpu);
	fprintf(out, "\n}\n");
}

/* CPU seconds of a thread that may still run (then its clock is read live). */
static double thread_cpu_s(pthread_t t, int running, uint64_t final_ns)
{
	clockid_t cid;
	if (running && pthread_getcpuclockid(t, &cid) == 0)
		return clock_ns(cid) / 1e9;
	return final_ns / 1e9;
}

void exit_stats_flat(FILE *out, const struct exit_stats_src *src)
{
	uint64_t total[VCPU_STAT_NR];
	double vcpu_cpu;
	totals(src->vm, total, &vcpu_cpu);
	fprintf(out, "wall_s\t%.6f\n", src->wall_s);
	for (int s = 0; s < VCPU_STAT_NR; s++)
		fprintf(out, "exit %s\t%" PRIu64 "\n", vcpu_stat_name((enum vcpu_exit_stat)s),
			total[s]);
	struct exit_site *sites = calloc(EXIT_SITES_MAX, sizeof(*sites));
	unsigned int n = sites ? exit_sites_sorted(src->sites, sites, EXIT_SITES_MAX) : 0;
	for (unsigned int i = 0; i < n; i++) {
		char label[96];
		site_label(&sites[i], label, sizeof(label));
		fprintf(out, "site %s %s\t%" PRIu64 "\n", label,
			sites[i].is_write ? "write" : "read",
			(uint64_t)counter_get(&sites[i].count));
	}
	free(sites);
	struct snap cs = snap_take(src);
	for (unsigned int i = 0; i < cs.n; i++)
		fprintf(out, "counter %s\t%" PRIu64 "\n", cs.items[i].name, cs.items[i].value);
	free(cs.items);
	struct kvm_counters *k = calloc(1, sizeof(*k));
	if (k) {
		kvm_totals(src->vm, k);
		for (unsigned int i = 0; i < k->n; i++)
			fprintf(out, "kvm %s\t%" PRIu64 "\n", k->c[i].name, k->c[i].value);
		free(k);
	}
	for (int i = 0; i < src->vm->nr_cpus; i++) {
		struct vcpu *v = src->vm->vcpus[i];
		if (v)
			fprintf(out, "cpu_s vcpu%d\t%.6f\n", i,
				thread_cpu_s(v->thread, v->started, v->cpu_ns));
	}
	for (unsigned int i = 0; i < src->nr_io; i++) {
		const struct iothread *io = &src->io[i];
		fprintf(out, "cpu_s %s\t%.6f\n", io->name,
			thread_cpu_s(io->thread, io->running, io->cpu_ns));
	}
}
