// SPDX-License-Identifier: Apache-2.0
/* PCI (src/pci/): configuration cycles through ports 0xcf8/0xcfc (every
 * width and byte offset, string I/O as the vCPU loop splits it, the reset
 * port), BAR sizing and relocation (BARs moved onto each other, onto the
 * MSI-X BAR, outside the window), the command register, the MSI-X
 * capability, table and PBA at every width and offset, and interrupts sent
 * while the guest reprograms all of it. Three devices on a fake host
 * (tests/unit/fake_pci_host.h): two with MSI-X (1..4 and 1..16 vectors),
 * one without.
 *
 * Checked beyond ASan/UBSan: the trap table stays sorted and free of
 * overlaps, and every BAR that says it is mapped is in it. */
#include <string.h>

#include "core/bus.h"
#include "fake_pci_host.h"
#include "fuzz_common.h"
#include "pci/pci.h"
#include "pci/pci_msix.h"
#include "x86/layout.h"

#define NDEV 3

struct tdev {
	struct pci_device pci; /* first: release frees the tdev */
	uint8_t regs[64];
};

static void tdev_bar(void *opaque, struct bus_access *acc)
{
	struct tdev *t = opaque;
	for (uint32_t i = 0; i < acc->len; i++) {
		uint8_t *r = &t->regs[(acc->offset + i) % sizeof(t->regs)];
		if (acc->is_write)
			*r = acc->data[i];
		else
			acc->data[i] = *r;
	}
}

static void tdev_release(struct pci_device *dev)
{
	free(dev);
}

static const struct pci_device_ops tdev_ops = {.release = tdev_release};

static struct tdev *tdev_add(struct pci_bus *pci, unsigned int nvec, uint64_t bar_size)
{
	struct tdev *t = calloc(1, sizeof(*t));
	char err[128];
	if (!t)
		abort();
	pci_device_init(&t->pci, "fuzzdev", 0x1234, 0x5678, 0xff0000, 1);
	t->pci.ops = &tdev_ops;
	struct bus_region r = {.handler = tdev_bar, .opaque = t, .name = "fuzzdev"};
	if (pci_device_add_bar(&t->pci, 0, bar_size, &r) < 0)
		abort();
	if (nvec && pci_msix_init(&t->pci, nvec, 2, err, sizeof(err)) < 0)
		abort();
	if (pci_bus_add_device(pci, &t->pci, err, sizeof(err)) < 0)
		abort();
	return t;
}

/* 1..max vectors: each costs an eventfd per run, so keep max small. */
static unsigned int nr_vectors(unsigned int max)
{
	return 1 + fz_u8() % max;
}

static void check_trap_table(const struct bus *b, struct tdev **devs)
{
	const struct bus_table *t = &b->space[BUS_MMIO];
	for (unsigned int i = 0; i + 1 < t->count; i++)
		FZ_CHECK(t->regions[i].base + t->regions[i].len <= t->regions[i + 1].base);
	for (int d = 0; d < NDEV; d++) {
		for (int i = 0; i < PCI_NUM_BARS; i++) {
			const struct pci_bar *bar = &devs[d]->pci.bars[i];
			struct bus_region r;
			if (!bar->mapped)
				continue;
			FZ_CHECK(bus_find((struct bus *)b, BUS_MMIO, bar->addr, &r));
			FZ_CHECK(r.base == bar->addr && r.len == bar->size);
		}
	}
}

/* An address the guest might use: inside one of a device's BARs (where
 * it is now), near the window, or anything. */
static uint64_t mmio_addr(struct tdev **devs)
{
	uint8_t sel = fz_u8();
	const struct pci_device *d = &devs[sel % NDEV]->pci;
	switch ((sel >> 2) & 3) {
	case 0:
	case 1: {
		const struct pci_bar *bar = &d->bars[sel & 0x10 ? 2 : 0];
		return bar->addr + fz_u16() % (bar->size + 16);
	}
	case 2:
		return LAYOUT_PCI_MMIO_START + fz_u32() % 0x100000;
	default:
		return fz_u64();
	}
}

/* A 32-bit value for a config write: often a BAR-like address or all ones
 * (sizing), else anything. */
static uint32_t cfg_value(void)
{
	switch (fz_u8() % 4) {
	case 0:
		return 0xffffffff;
	case 1:
		return (uint32_t)LAYOUT_PCI_MMIO_START + (fz_u16() << 12);
	default:
		return fz_u32();
	}
}

static void cfg_access(struct bus *b)
{
	uint8_t sel = fz_u8();
	uint32_t addr = sel & 0x80 ? fz_u32() : cfg_addr(fz_u8() % 5, fz_u8());
	static const uint32_t widths[] = {1, 2, 4};
	uint32_t len = widths[(sel >> 1) % 3];
	uint32_t count = sel & 0x40 ? 1 + fz_u8() % 8 : 1; /* rep outs/ins */
	uint8_t buf[8 * 4];

	bus_dispatch(b, BUS_PIO, 0xcf8, &addr, 4, true, 0);
	uint32_t port = 0xcf8 + fz_u8() % 8; /* 0xcf8..0xcff, the reset port too */
	for (uint32_t i = 0; i < count; i++) {
		uint32_t v = cfg_value();
		memcpy(buf + 4 * i, &v, 4);
	}
	for (uint32_t i = 0; i < count; i++)
		bus_dispatch(b, BUS_PIO, port, buf + 4 * i, len, sel & 1, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bus trap;
	struct fake_host host;
	struct tdev *devs[NDEV];

	fz_begin_noram(data, size);
	memset(&host, 0, sizeof(host));
	bus_init(&trap);
	struct pci_bus *pci = pci_bus_create_with(&trap, &fake_host_ops, &host);
	if (!pci)
		abort();
	devs[0] = tdev_add(pci, nr_vectors(4), 0x4000);
	devs[1] = tdev_add(pci, 0, 0x1000);
	devs[2] = tdev_add(pci, nr_vectors(PCI_MSIX_MAX_VECTORS / 4), 0x100000);
	for (unsigned int steps = 0; fz_more() && steps < 1024; steps++) {
		uint8_t op = fz_u8();
		struct pci_device *d = &devs[(op >> 4) % NDEV]->pci;
		switch (op % 8) {
		case 0:
		case 1:
		case 2:
			cfg_access(&trap);
			break;
		case 3:
		case 4: {
			uint64_t v = fz_u64(), a = mmio_addr(devs);
			bus_dispatch(&trap, BUS_MMIO, a, &v, 1 + fz_u8() % 8, op & 0x80, 0);
			break;
		}
		case 5:
			pci_msix_notify(d, fz_u8() % 80);
			break;
		case 6:
			pci_intx_set(d, op & 0x80);
			break;
		default: /* a direct config write, as a device's cfg hooks see it */
		{
			uint8_t v[4];
			uint32_t off = fz_u8(), len = 1 + fz_u8() % 4;
			fz_bytes(v, sizeof(v));
			if (off + len <= PCI_CFG_SIZE)
				pci_cfg_write(d, off, v, len);
		}
		}
		check_trap_table(&trap, devs);
	}
	pci_bus_destroy(pci);
	FZ_CHECK(trap.space[BUS_MMIO].count == 0);
	bus_destroy(&trap);
	return 0;
}
