// SPDX-License-Identifier: Apache-2.0
#include "core/bus.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void bus_init(struct bus *bus)
{
	memset(bus, 0, sizeof(*bus));
	pthread_rwlock_init(&bus->lock, NULL);
}

void bus_destroy(struct bus *bus)
{
	for (int i = 0; i < BUS_NR_SPACES; i++)
		free(bus->space[i].regions);
	pthread_rwlock_destroy(&bus->lock);
}

/* Index of the first region whose end is above addr. */
static unsigned int table_lower_bound(const struct bus_table *t, uint64_t addr)
{
	unsigned int lo = 0, hi = t->count;
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;
		const struct bus_region *r = &t->regions[mid];
		if (r->base + r->len <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static const struct bus_region *table_lookup(const struct bus_table *t, uint64_t addr)
{
	unsigned int i = table_lower_bound(t, addr);
	if (i < t->count && t->regions[i].base <= addr)
		return &t->regions[i];
	return NULL;
}

int bus_register(struct bus *bus, enum bus_space sp, const struct bus_region *r)
{
	uint64_t end;
	int ret = 0;

	if (r->len == 0 || __builtin_add_overflow(r->base, r->len, &end) || !r->handler)
		return -EINVAL;
	pthread_rwlock_wrlock(&bus->lock);
	struct bus_table *t = &bus->space[sp];
	unsigned int i = table_lower_bound(t, r->base);
	if (i < t->count && t->regions[i].base < end) {
		ret = -EEXIST;
		goto out;
	}
	if (t->count == t->cap) {
		unsigned int cap = t->cap ? t->cap * 2 : 16;
		struct bus_region *n = realloc(t->regions, cap * sizeof(*n));
		if (!n) {
			ret = -ENOMEM;
			goto out;
		}
		t->regions = n;
		t->cap = cap;
	}
	memmove(&t->regions[i + 1], &t->regions[i], (t->count - i) * sizeof(*r));
	t->regions[i] = *r;
	t->count++;
out:
	pthread_rwlock_unlock(&bus->lock);
	return ret;
}

int bus_unregister(struct bus *bus, enum bus_space sp, uint64_t base, void *opaque)
{
	int ret = -ENOENT;
	pthread_rwlock_wrlock(&bus->lock);
	struct bus_table *t = &bus->space[sp];
	for (unsigned int i = 0; i < t->count; i++) {
		if (t->regions[i].base == base && t->regions[i].opaque == opaque) {
			memmove(&t->regions[i], &t->regions[i + 1],
				(t->count - i - 1) * sizeof(t->regions[0]));
			t->count--;
			ret = 0;
			break;
		}
	}
	pthread_rwlock_unlock(&bus->lock);
	return ret;
}

bool bus_dispatch(struct bus *bus, enum bus_space sp, uint64_t addr, void *data, uint32_t len,
		  bool is_write, int vcpu)
{
	pthread_rwlock_rdlock(&bus->lock);
	struct bus_table *t = &bus->space[sp == BUS_MMIO_BATCHED ? BUS_MMIO : sp];
	const struct bus_region *r = table_lookup(t, addr);
	if (!r) {
		/* Counters are statistics only; a lost increment is harmless. */
		if (is_write)
			counter_add(&t->unclaimed_writes, 1);
		else
			counter_add(&t->unclaimed_reads, 1);
		pthread_rwlock_unlock(&bus->lock);
		if (bus->account)
			bus->account(bus->account_opaque, sp, NULL, addr, is_write);
		if (!is_write)
			memset(data, 0xff, len);
		return false;
	}
	/* Copy before unlocking: a concurrent register may move the array. */
	struct bus_region reg = *r;
	pthread_rwlock_unlock(&bus->lock);
	uint64_t offset = addr - reg.base;
	struct bus_access acc = {
	    .addr = addr,
	    .offset = offset,
	    .data = data,
	    .len = len,
	    .is_write = is_write,
	    .vcpu = vcpu,
	};
	if (bus->account)
		bus->account(bus->account_opaque, sp, &reg, addr, is_write);
	if (!is_write)
		memset(data, 0xff, len);
	/* An access straddling the region's end is ignored whole (reads: all
	 * ones), as the PCI data port does: no handler sees bytes past its
	 * region, to wrap or overrun them. */
	if (len > reg.len - offset)
		return true;
	reg.handler(reg.opaque, &acc);
	return true;
}

bool bus_find(struct bus *bus, enum bus_space sp, uint64_t addr, struct bus_region *out)
{
	pthread_rwlock_rdlock(&bus->lock);
	const struct bus_region *r = table_lookup(&bus->space[sp], addr);
	if (r)
		*out = *r;
	pthread_rwlock_unlock(&bus->lock);
	return r != NULL;
}
