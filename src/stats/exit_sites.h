// SPDX-License-Identifier: Apache-2.0
/* Exit accounting by source: how many port-I/O and MMIO exits each device
 * register caused ("uart0 THR write"), and which unclaimed addresses the
 * guest touched. Lock-free counting from vCPU threads; the table only grows. */
#ifndef SKIFF_EXIT_SITES_H
#define SKIFF_EXIT_SITES_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/bus.h"
#include "core/counter.h"

#define EXIT_SITES_MAX 512 /* power of two */

struct exit_site {
	_Atomic int used; /* set last, with release, once the key is written */
	uint8_t space, is_write;
	const char *dev; /* region name, NULL if unclaimed */
	const char *reg; /* register name, may be NULL */
	uint64_t addr;	 /* the address, for unclaimed accesses only */
	counter_t count;
};

struct exit_sites {
	pthread_mutex_t insert_lock;
	struct exit_site slot[EXIT_SITES_MAX];
	counter_t overflow; /* accesses not counted: table full */
};

void exit_sites_init(struct exit_sites *s);
void exit_sites_count(struct exit_sites *s, enum bus_space sp, const char *dev, const char *reg,
		      uint64_t addr, bool is_write);
/* bus_account_fn for struct bus (opaque = struct exit_sites *). */
void exit_sites_bus_account(void *opaque, enum bus_space sp, const struct bus_region *r,
			    uint64_t addr, bool is_write);
/* Copies the used sites, sorted by count (descending); returns how many. */
unsigned int exit_sites_sorted(struct exit_sites *s, struct exit_site *out, unsigned int max);

#endif
