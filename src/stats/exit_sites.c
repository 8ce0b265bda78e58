// SPDX-License-Identifier: Apache-2.0
#include "stats/exit_sites.h"

#include <stdlib.h>
#include <string.h>

void exit_sites_init(struct exit_sites *s)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->insert_lock, NULL);
}

static uint64_t site_hash(uint8_t sp, const char *dev, const char *reg, uint64_t addr,
			  bool is_write)
{
	uint64_t h = (uint64_t)(uintptr_t)dev * 0x9e3779b97f4a7c15ULL;
	h ^= (uint64_t)(uintptr_t)reg * 0xc2b2ae3d27d4eb4fULL;
	h ^= addr * 0x165667b19e3779f9ULL;
	h ^= ((uint64_t)sp << 1 | is_write) * 0x27d4eb2f165667c5ULL;
	return h ^ (h >> 29);
}

static bool site_matches(const struct exit_site *e, uint8_t sp, const char *dev, const char *reg,
			 uint64_t addr, bool is_write)
{
	return e->space == sp && e->dev == dev && e->reg == reg && e->addr == addr &&
	       e->is_write == is_write;
}

void exit_sites_count(struct exit_sites *s, enum bus_space sp, const char *dev, const char *reg,
		      uint64_t addr, bool is_write)
{
	uint64_t h = site_hash((uint8_t)sp, dev, reg, addr, is_write);
	for (unsigned int probe = 0; probe < EXIT_SITES_MAX; probe++) {
		struct exit_site *e = &s->slot[(h + probe) & (EXIT_SITES_MAX - 1)];
		if (!atomic_load_explicit(&e->used, memory_order_acquire)) {
			/* Insert under the lock; another thread may have won. */
			pthread_mutex_lock(&s->insert_lock);
			if (!atomic_load_explicit(&e->used, memory_order_relaxed)) {
				e->space = (uint8_t)sp;
				e->dev = dev;
				e->reg = reg;
				e->addr = addr;
				e->is_write = is_write;
				atomic_store_explicit(&e->used, 1, memory_order_release);
			}
			pthread_mutex_unlock(&s->insert_lock);
		}
		if (site_matches(e, (uint8_t)sp, dev, reg, addr, is_write)) {
			counter_add(&e->count, 1);
			return;
		}
	}
	counter_add(&s->overflow, 1);
}

void exit_sites_bus_account(void *opaque, enum bus_space sp, const struct bus_region *r,
			    uint64_t addr, bool is_write)
{
	if (!r) {
		exit_sites_count(opaque, sp, NULL, NULL, addr, is_write);
		return;
	}
	const char *reg = r->reg_name ? r->reg_name(r->opaque, addr - r->base, is_write) : NULL;
	exit_sites_count(opaque, sp, r->name, reg, 0, is_write);
}

static int site_cmp(const void *a, const void *b)
{
	uint64_t x = counter_get(&((const struct exit_site *)a)->count);
	uint64_t y = counter_get(&((const struct exit_site *)b)->count);
	return x < y ? 1 : x > y ? -1 : 0;
}

unsigned int exit_sites_sorted(struct exit_sites *s, struct exit_site *out, unsigned int max)
{
	unsigned int n = 0;
	for (unsigned int i = 0; i < EXIT_SITES_MAX && n < max; i++) {
		struct exit_site *e = &s->slot[i];
		if (!atomic_load_explicit(&e->used, memory_order_acquire))
			continue;
		out[n].space = e->space;
		out[n].is_write = e->is_write;
		out[n].dev = e->dev;
		out[n].reg = e->reg;
		out[n].addr = e->addr;
		atomic_store_explicit(&out[n].count, counter_get(&e->count), memory_order_relaxed);
		atomic_store(&out[n].used, 1);
		n++;
	}
	qsort(out, n, sizeof(*out), site_cmp);
	return n;
}
