// SPDX-License-Identifier: Apache-2.0
/* The trap table: one sorted table per address space (port I/O and MMIO)
 * mapping guest address ranges to device handlers. vCPU threads dispatch
 * concurrently; registration (e.g. a PCI BAR moving) takes a write lock. */
#ifndef SKIFF_BUS_H
#define SKIFF_BUS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/counter.h"
#include "core/must_check.h"

/* BUS_MMIO_BATCHED is not a table: it dispatches like BUS_MMIO and tells
 * the accounting hook that the write reached us through KVM's coalesced
 * ring (core/coalesced_mmio.h), not through an exit. */
enum bus_space { BUS_PIO, BUS_MMIO, BUS_NR_SPACES, BUS_MMIO_BATCHED = BUS_NR_SPACES };

struct bus_access {
	uint64_t addr;	 /* guest address of the access */
	uint64_t offset; /* addr - region base */
	uint8_t *data;	 /* len bytes; handler fills it on reads */
	uint32_t len;
	bool is_write;
	int vcpu; /* index of the vCPU that trapped, -1 if none */
};

typedef void (*bus_handler_fn)(void *opaque, struct bus_access *acc);
/* Optional: names the register at `offset` for exit accounting
 * ("THR", "notify q1"); may return NULL. */
typedef const char *(*bus_reg_name_fn)(void *opaque, uint64_t offset, bool is_write);

struct bus_region {
	uint64_t base, len;
	bus_handler_fn handler;
	bus_reg_name_fn reg_name;
	void *opaque;
	const char *name; /* device name, e.g. "uart0" */
};

struct bus_table {
	struct bus_region *regions; /* sorted by base, non-overlapping */
	unsigned int count, cap;
	counter_t unclaimed_reads, unclaimed_writes;
};

/* Exit accounting hook: called for every dispatched access, with the
 * owning region (NULL if unclaimed). Must be cheap and thread-safe. */
typedef void (*bus_account_fn)(void *opaque, enum bus_space sp, const struct bus_region *r,
			       uint64_t addr, bool is_write);

struct bus {
	pthread_rwlock_t lock;
	struct bus_table space[BUS_NR_SPACES];
	bus_account_fn account;
	void *account_opaque;
};

void bus_init(struct bus *bus);
void bus_destroy(struct bus *bus);
/* Adds a region; -EEXIST if it overlaps another, -EINVAL if len is 0 or
 * base + len overflows, -ENOMEM. */
MUST_CHECK int bus_register(struct bus *bus, enum bus_space sp, const struct bus_region *r);
/* Removes the region starting at `base` owned by `opaque`; -ENOENT if none. */
int bus_unregister(struct bus *bus, enum bus_space sp, uint64_t base, void *opaque);
/* Runs the handler owning addr. Unclaimed accesses are counted and ignored:
 * reads return all ones. Returns true if a device claimed the access. */
bool bus_dispatch(struct bus *bus, enum bus_space sp, uint64_t addr, void *data, uint32_t len,
		  bool is_write, int vcpu);
/* Copies the region containing addr into *out; false if none. */
bool bus_find(struct bus *bus, enum bus_space sp, uint64_t addr, struct bus_region *out);

#endif
