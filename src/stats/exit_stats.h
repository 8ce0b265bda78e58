// SPDX-License-Identifier: Apache-2.0
/* The exit-accounting report: exits by reason (skiff's and KVM's own
 * counters), by device register, unclaimed addresses, published counters
 * (kicks, interrupts, polling, I/O-thread wakeups) and CPU time per
 * thread (every vCPU and I/O thread); as a table
 * (--stats) or JSON (--stats-json FILE). */
#ifndef SKIFF_EXIT_STATS_H
#define SKIFF_EXIT_STATS_H

#include <stdio.h>

#include "core/counter.h"

struct vm;
struct iothread;
struct exit_sites;

struct exit_stats_src {
	struct vm *vm;
	struct exit_sites *sites;
	struct iothread *io; /* an array of nr_io: CPU time */
	unsigned int nr_io;
	/* Lists every device, transport and thread counter (vmm_counters). */
	void (*counters)(void *opaque, counter_emit_fn emit, void *ctx);
	void *counters_opaque;
	double wall_s; /* seconds since skiff started */
};

void exit_stats_print(FILE *out, const struct exit_stats_src *src);
void exit_stats_json(FILE *out, const struct exit_stats_src *src);
/* One "name<TAB>value" line per metric, live (the control socket's answer;
 * `skiff stat` turns two of them into rates). */
void exit_stats_flat(FILE *out, const struct exit_stats_src *src);

#endif
