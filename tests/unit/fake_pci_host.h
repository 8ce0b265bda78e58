// SPDX-License-Identifier: Apache-2.0
/* A fake PCI host for unit tests: records interrupt lines, MSI routes,
 * irqfds, ioeventfds and reset requests instead of calling KVM, and
 * helpers that drive config space through the real 0xcf8/0xcfc handlers
 * and BARs through the trap table. */
#ifndef SKIFF_TEST_FAKE_PCI_HOST_H
#define SKIFF_TEST_FAKE_PCI_HOST_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "core/bus.h"
#include "pci/pci.h"

#define FAKE_MAX 64

struct fake_route {
	uint64_t addr;
	uint32_t data;
};

struct fake_ioeventfd {
	int efd;
	enum bus_space sp;
	uint64_t addr;
	uint32_t len;
	bool assigned;
};

struct fake_host {
	int line[32]; /* level per GSI */
	int line_changes;
	struct fake_route routes[FAKE_MAX]; /* GSI 24 + i */
	int nr_routes;
	int route_updates;
	int irqfd_gsi[FAKE_MAX]; /* by route index: -1 none */
	int irqfd_efd[FAKE_MAX];
	int signalled;		       /* direct MSI injections */
	struct fake_route last_signal; /* the last one's message */
	struct fake_ioeventfd io[FAKE_MAX];
	int nr_io;
	int resets;
	int fail_ioeventfd; /* next assigns fail with this errno */
	/* The level irqfd (INTx passthrough): -1 when none. */
	int resample_efd, resample_trigger;
	uint32_t resample_gsi;
};

static int fake_irq_line(void *h, uint32_t gsi, int level)
{
	struct fake_host *f = h;
	f->line[gsi % 32] = level;
	f->line_changes++;
	return 0;
}

static int fake_route_add(void *h, uint64_t addr, uint32_t data)
{
	struct fake_host *f = h;
	if (f->nr_routes >= FAKE_MAX)
		return -28; /* ENOSPC */
	f->routes[f->nr_routes] = (struct fake_route){addr, data};
	f->irqfd_gsi[f->nr_routes] = -1;
	return 24 + f->nr_routes++;
}

static int fake_route_update(void *h, uint32_t gsi, uint64_t addr, uint32_t data)
{
	struct fake_host *f = h;
	if (gsi < 24 || gsi - 24 >= (uint32_t)f->nr_routes)
		return -2;
	f->routes[gsi - 24] = (struct fake_route){addr, data};
	f->route_updates++;
	return 0;
}

static int fake_signal_msi(void *h, uint64_t addr, uint32_t data)
{
	struct fake_host *f = h;
	f->last_signal = (struct fake_route){addr, data};
	f->signalled++;
	return 0;
}

static int fake_irqfd(void *h, int efd, uint32_t gsi, bool assign)
{
	struct fake_host *f = h;
	if (gsi < 24 || gsi - 24 >= (uint32_t)f->nr_routes)
		return -22;
	f->irqfd_gsi[gsi - 24] = assign ? (int)gsi : -1;
	f->irqfd_efd[gsi - 24] = efd;
	return 0;
}

static int fake_ioeventfd(void *h, int efd, enum bus_space sp, uint64_t addr, uint32_t len,
			  bool assign)
{
	struct fake_host *f = h;
	if (assign && f->fail_ioeventfd)
		return -f->fail_ioeventfd;
	for (int i = 0; i < f->nr_io; i++) {
		if (f->io[i].efd == efd && f->io[i].sp == sp && f->io[i].addr == addr) {
			/* KVM deassigns only an exact match, length included */
			if (f->io[i].assigned == assign || (!assign && f->io[i].len != len))
				return assign ? -17 : -2; /* EEXIST / ENOENT, like KVM */
			f->io[i].assigned = assign;
			return 0;
		}
	}
	if (!assign || f->nr_io >= FAKE_MAX)
		return -2;
	f->io[f->nr_io++] = (struct fake_ioeventfd){efd, sp, addr, len, true};
	return 0;
}

static int fake_irqfd_resample(void *h, int efd, int resample_efd, uint32_t gsi, bool assign)
{
	struct fake_host *f = h;
	f->resample_trigger = assign ? efd : -1;
	f->resample_efd = assign ? resample_efd : -1;
	f->resample_gsi = gsi;
	return 0;
}

static void fake_reset(void *h)
{
	((struct fake_host *)h)->resets++;
}

static const struct pci_host_ops fake_host_ops = {
    .irq_line = fake_irq_line,
    .msi_route_add = fake_route_add,
    .msi_route_update = fake_route_update,
    .signal_msi = fake_signal_msi,
    .irqfd = fake_irqfd,
    .irqfd_resample = fake_irqfd_resample,
    .ioeventfd = fake_ioeventfd,
    .reset_request = fake_reset,
};

/* Whether efd is assigned at MMIO addr now (any length). */
static inline bool fake_ioeventfd_at(const struct fake_host *f, int efd, uint64_t addr)
{
	for (int i = 0; i < f->nr_io; i++)
		if (f->io[i].efd == efd && f->io[i].sp == BUS_MMIO && f->io[i].addr == addr &&
		    f->io[i].len == 0 && f->io[i].assigned)
			return true;
	return false;
}

/* Whether efd is assigned at port `port` for writes of len bytes now. */
static inline bool fake_ioeventfd_pio(const struct fake_host *f, int efd, uint64_t port,
				      uint32_t len)
{
	for (int i = 0; i < f->nr_io; i++)
		if (f->io[i].efd == efd && f->io[i].sp == BUS_PIO && f->io[i].addr == port &&
		    f->io[i].len == len && f->io[i].assigned)
			return true;
	return false;
}

/* Reads and clears an eventfd; 0 if it was not signalled. */
static inline uint64_t efd_take(int efd)
{
	uint64_t n = 0;
	if (read(efd, &n, sizeof(n)) != sizeof(n))
		return 0;
	return n;
}

static inline uint32_t cfg_addr(unsigned int slot, uint32_t reg)
{
	return 0x80000000u | (slot << 11) | (reg & 0xfc);
}

static inline uint32_t cfg_rd(struct bus *b, unsigned int slot, uint32_t reg, uint32_t len)
{
	uint32_t a = cfg_addr(slot, reg), v = 0;
	bus_dispatch(b, BUS_PIO, 0xcf8, &a, 4, true, 0);
	bus_dispatch(b, BUS_PIO, 0xcfc + (reg & 3), &v, len, false, 0);
	return len == 4 ? v : v & ((1u << (8 * len)) - 1);
}

static inline void cfg_wr(struct bus *b, unsigned int slot, uint32_t reg, uint32_t len, uint32_t v)
{
	uint32_t a = cfg_addr(slot, reg);
	bus_dispatch(b, BUS_PIO, 0xcf8, &a, 4, true, 0);
	bus_dispatch(b, BUS_PIO, 0xcfc + (reg & 3), &v, len, true, 0);
}

static inline uint64_t mmio_rd(struct bus *b, uint64_t addr, uint32_t len)
{
	uint64_t v = 0;
	bus_dispatch(b, BUS_MMIO, addr, &v, len, false, 0);
	return len == 8 ? v : v & ((1ULL << (8 * len)) - 1);
}

static inline void mmio_wr(struct bus *b, uint64_t addr, uint32_t len, uint64_t v)
{
	bus_dispatch(b, BUS_MMIO, addr, &v, len, true, 0);
}

/* The 64-bit memory BAR at config slot `bar` of the device in `slot`. */
static inline uint64_t cfg_bar64(struct bus *b, unsigned int slot, unsigned int bar)
{
	uint64_t lo = cfg_rd(b, slot, PCI_BAR0 + 4 * bar, 4);
	uint64_t hi = cfg_rd(b, slot, PCI_BAR0 + 4 * (bar + 1), 4);
	return (hi << 32) | (lo & ~0xfULL);
}

/* Offset of the first capability with `id` (and, for vendor caps,
 * cfg_type at +3 equal to `type`; 0 = any), walking the list; 0 if none. */
static inline uint32_t cfg_find_cap(struct bus *b, unsigned int slot, uint8_t id, uint8_t type)
{
	uint32_t p = cfg_rd(b, slot, PCI_CAPABILITY_LIST, 1);
	for (int n = 0; p && n < 48; n++) {
		if (cfg_rd(b, slot, p, 1) == id && (!type || cfg_rd(b, slot, p + 3, 1) == type))
			return p;
		p = cfg_rd(b, slot, p + 1, 1);
	}
	return 0;
}

#endif
