// SPDX-License-Identifier: Apache-2.0
/* Counters: every statistic a device, transport or thread keeps is a
 * counter_t, bumped with counter_add (a relaxed atomic add: a counter
 * orders nothing, it only must not tear or lose updates when two vCPUs
 * count at once) and read with counter_get from any thread. Their owner
 * lists them through a counter_emit_fn when stats are collected, so
 * there is no registry to fill up or outlive its devices. */
#ifndef SKIFF_COUNTER_H
#define SKIFF_COUNTER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef _Atomic uint64_t counter_t;

static inline void counter_add(counter_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

static inline uint64_t counter_get(const counter_t *c)
{
	return atomic_load_explicit((counter_t *)c, memory_order_relaxed);
}

/* Receives one counter: owner ("virtio-net0", "io0") and what ("q1
 * interrupts"); reported as "owner what". */
typedef void (*counter_emit_fn)(void *ctx, const char *owner, const char *what, uint64_t value);

/* A struct of counters listed by a table: each entry names one member. */
struct counter_field {
	const char *what;
	size_t off; /* offsetof the counter_t in the struct */
};

static inline void counter_emit_fields(counter_emit_fn emit, void *ctx, const char *owner,
				       const void *base, const struct counter_field *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		emit(ctx, owner, f[i].what,
		     counter_get((const counter_t *)((const char *)base + f[i].off)));
}

#endif
