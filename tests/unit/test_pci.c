// SPDX-License-Identifier: Apache-2.0
/* PCI: the host bridge and type-1 config ports, BAR sizing, mapping and
 * relocation, capability lists, slots, shared INTx, MSI-X masking and PBA,
 * the AML the DSDT's PCI root is built from. Everything goes through the
 * real port and MMIO handlers on a trap table, with a fake host. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_pci_host.h"
#include "pci/pci.h"
#include "pci/pci_msix.h"
#include "x86/acpi.h"
#include "x86/aml.h"
#include "x86/layout.h"

struct tdev {
	struct pci_device pci; /* first: the release hook frees the tdev */
	int reads, writes;
	uint64_t last_off;
	int maps, unmaps;
	uint64_t mapped_at;
	char name[16];
};

static void tdev_bar(void *opaque, struct bus_access *acc)
{
	struct tdev *t = opaque;
	t->last_off = acc->offset;
	if (acc->is_write) {
		t->writes++;
	} else {
		t->reads++;
		memset(acc->data, 0xab, acc->len);
	}
}

static void tdev_bar_map(struct pci_device *dev, unsigned int bar, uint64_t addr, bool mapped)
{
	struct tdev *t = (struct tdev *)dev;
	(void)bar;
	if (mapped) {
		t->maps++;
		t->mapped_at = addr;
	} else {
		t->unmaps++;
	}
}

static void tdev_release(struct pci_device *dev)
{
	free(dev);
}

static const struct pci_device_ops tdev_ops = {.bar_map = tdev_bar_map, .release = tdev_release};

/* A device with a 16 KiB BAR 0 and, if msix, 4 MSI-X vectors in BAR 2. */
static struct tdev *tdev_new(bool msix)
{
	struct tdev *t = calloc(1, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "tdev");
	pci_device_init(&t->pci, t->name, 0x1234, 0x5678, 0xff0000, 3);
	t->pci.ops = &tdev_ops;
	struct bus_region r = {.handler = tdev_bar, .opaque = t, .name = t->name};
	assert_int_equal(pci_device_add_bar(&t->pci, 0, 0x4000, &r), 0);
	if (msix) {
		char err[128];
		assert_int_equal(pci_msix_init(&t->pci, 4, 2, err, sizeof(err)), 0);
	}
	return t;
}

struct fx {
	struct bus trap;
	struct fake_host host;
	struct pci_bus *pci;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	bus_init(&f->trap);
	f->pci = pci_bus_create_with(&f->trap, &fake_host_ops, &f->host);
	assert_non_null(f->pci);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	pci_bus_destroy(f->pci);
	assert_int_equal(f->trap.space[BUS_MMIO].count, 0); /* every BAR unmapped */
	assert_int_equal(f->trap.space[BUS_PIO].count, 0);
	bus_destroy(&f->trap);
	free(f);
	return 0;
}

static struct tdev *fx_add(struct fx *f, bool msix)
{
	struct tdev *t = tdev_new(msix);
	char err[128];
	assert_int_equal(pci_bus_add_device(f->pci, &t->pci, err, sizeof(err)), 0);
	return t;
}

static void test_host_bridge(void **state)
{
	struct fx *f = *state;
	struct bus *b = &f->trap;
	assert_int_equal(cfg_rd(b, 0, PCI_VENDOR_ID, 4), 0x00081b36);
	assert_int_equal(cfg_rd(b, 0, 0x08, 4) >> 8, PCI_CLASS_BRIDGE_HOST);
	assert_int_equal(cfg_rd(b, 0, PCI_HEADER_TYPE, 1), 0);
	assert_int_equal(cfg_rd(b, 0, PCI_DEVICE_ID, 2), 0x0008); /* port 0xcfe */
	assert_int_equal(cfg_rd(b, 0, 0x0b, 1), 0x06);		  /* port 0xcff */
	assert_int_equal(cfg_rd(b, 5, 0, 4), 0xffffffff);	  /* empty slot */

	uint32_t a = 0x00000000, v = 0; /* enable bit clear */
	bus_dispatch(b, BUS_PIO, 0xcf8, &a, 4, true, 0);
	bus_dispatch(b, BUS_PIO, 0xcfc, &v, 4, false, 0);
	assert_int_equal(v, 0xffffffff);
	a = 0x80000100; /* function 1 */
	bus_dispatch(b, BUS_PIO, 0xcf8, &a, 4, true, 0);
	bus_dispatch(b, BUS_PIO, 0xcfc, &v, 4, false, 0);
	assert_int_equal(v, 0xffffffff);
	a = 0x80010000; /* bus 1 */
	bus_dispatch(b, BUS_PIO, 0xcf8, &a, 4, true, 0);
	bus_dispatch(b, BUS_PIO, 0xcfc, &v, 4, false, 0);
	assert_int_equal(v, 0xffffffff);
	a = 0x81000000; /* extended register 0x100: no extended space */
	bus_dispatch(b, BUS_PIO, 0xcf8, &a, 4, true, 0);
	bus_dispatch(b, BUS_PIO, 0xcfc, &v, 4, false, 0);
	assert_int_equal(v, 0xffffffff);

	/* The latch reads back (Linux's conf1 probe) without reserved bits. */
	a = 0xffffffff;
	bus_dispatch(b, BUS_PIO, 0xcf8, &a, 4, true, 0);
	bus_dispatch(b, BUS_PIO, 0xcf8, &v, 4, false, 0);
	assert_int_equal(v, 0x8ffffffc);
	uint8_t one = 1; /* outb(1, 0xcfb) from the same probe: ignored */
	bus_dispatch(b, BUS_PIO, 0xcfb, &one, 1, true, 0);
	bus_dispatch(b, BUS_PIO, 0xcf8, &v, 4, false, 0);
	assert_int_equal(v, 0x8ffffffc);

	/* A dword at 0xcfe would cross the data port: ignored. */
	a = cfg_addr(0, 0);
	bus_dispatch(b, BUS_PIO, 0xcf8, &a, 4, true, 0);
	v = 0;
	bus_dispatch(b, BUS_PIO, 0xcfe, &v, 4, false, 0);
	assert_int_equal(v, 0xffffffff);
	v = 0;
	bus_dispatch(b, BUS_PIO, 0xcfe, &v, 4, true, 0);
	assert_int_equal(cfg_rd(b, 0, 0, 4), 0x00081b36);
	/* Read-only header fields stay. */
	cfg_wr(b, 0, PCI_VENDOR_ID, 4, 0);
	cfg_wr(b, 0, 0x08, 4, 0);
	assert_int_equal(cfg_rd(b, 0, 0, 4), 0x00081b36);
	assert_int_equal(cfg_rd(b, 0, 0x08, 4) >> 8, PCI_CLASS_BRIDGE_HOST);
}

static void test_reset_port(void **state)
{
	struct fx *f = *state;
	uint8_t v = 0x02;
	bus_dispatch(&f->trap, BUS_PIO, 0xcf9, &v, 1, true, 0);
	assert_int_equal(f->host.resets, 0);
	v = 0;
	bus_dispatch(&f->trap, BUS_PIO, 0xcf9, &v, 1, false, 0);
	assert_int_equal(v, 0x02);
	uint16_t w = 0x0606; /* not a byte write: ignored */
	bus_dispatch(&f->trap, BUS_PIO, 0xcf9, &w, 2, true, 0);
	assert_int_equal(f->host.resets, 0);
	v = 0x06;
	bus_dispatch(&f->trap, BUS_PIO, 0xcf9, &v, 1, true, 0);
	assert_int_equal(f->host.resets, 1);
}

static void test_bar_sizing(void **state)
{
	struct fx *f = *state;
	struct bus *b = &f->trap;
	struct tdev *t = fx_add(f, false);
	assert_int_equal(t->pci.slot, 1);
	assert_int_equal(cfg_rd(b, 1, 0, 4), 0x56781234);
	uint32_t lo = cfg_rd(b, 1, PCI_BAR0, 4), hi = cfg_rd(b, 1, PCI_BAR0 + 4, 4);
	assert_int_equal(lo & 0xf, PCI_BAR_MEM_TYPE_64);
	uint64_t addr = ((uint64_t)hi << 32) | (lo & ~0xfu);
	assert_true(addr >= LAYOUT_PCI_MMIO_START && addr + 0x4000 <= LAYOUT_PCI_MMIO_END);
	assert_int_equal(addr % 0x4000, 0);

	cfg_wr(b, 1, PCI_BAR0, 4, 0xffffffff);
	assert_int_equal(cfg_rd(b, 1, PCI_BAR0, 4), 0xffffc004);
	cfg_wr(b, 1, PCI_BAR0 + 4, 4, 0xffffffff);
	assert_int_equal(cfg_rd(b, 1, PCI_BAR0 + 4, 4), 0xffffffff);
	cfg_wr(b, 1, PCI_BAR0, 4, lo);
	cfg_wr(b, 1, PCI_BAR0 + 4, 4, hi);
	assert_int_equal(cfg_bar64(b, 1, 0), addr);
	/* Unimplemented BARs and the expansion ROM size to 0. */
	for (uint32_t reg = PCI_BAR0 + 8; reg <= 0x30; reg += 4) {
		if (reg > PCI_BAR0 + 20 && reg < 0x30)
			continue;
		cfg_wr(b, 1, reg, 4, 0xffffffff);
		assert_int_equal(cfg_rd(b, 1, reg, 4), 0);
	}
	/* Byte writes merge into the BAR. */
	cfg_wr(b, 1, PCI_BAR0 + 3, 1, 0xd0);
	assert_int_equal(cfg_bar64(b, 1, 0), (addr & ~0xff000000ULL) | 0xd0000000ULL);
	assert_int_equal(cfg_rd(b, 1, PCI_INTERRUPT_PIN, 1), 1);
	assert_int_equal(cfg_rd(b, 1, PCI_INTERRUPT_LINE, 1), pci_intx_gsi(1, 0));
}

static void test_bar_mapping(void **state)
{
	struct fx *f = *state;
	struct bus *b = &f->trap;
	struct tdev *t = fx_add(f, false), *u = fx_add(f, false);
	uint64_t addr = cfg_bar64(b, 1, 0), uaddr = cfg_bar64(b, 2, 0);
	struct bus_region r;
	assert_int_not_equal(addr, uaddr);
	assert_false(bus_find(b, BUS_MMIO, addr, &r)); /* decoding off */
	assert_int_equal(mmio_rd(b, addr, 4), 0xffffffff);
	assert_int_equal(t->reads, 0);

	cfg_wr(b, 1, PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	assert_int_equal(cfg_rd(b, 1, PCI_COMMAND, 2), PCI_COMMAND_MEMORY);
	assert_true(bus_find(b, BUS_MMIO, addr, &r));
	assert_string_equal(r.name, "tdev");
	assert_int_equal(r.len, 0x4000);
	assert_int_equal(t->maps, 1);
	assert_int_equal(t->mapped_at, addr);
	assert_int_equal(mmio_rd(b, addr + 0x10, 4), 0xabababab);
	assert_int_equal(t->last_off, 0x10);

	/* Relocation while decoding: the region follows the BAR. */
	cfg_wr(b, 1, PCI_BAR0, 4, 0xd0000000);
	assert_false(bus_find(b, BUS_MMIO, addr, &r));
	assert_true(bus_find(b, BUS_MMIO, 0xd0000000, &r));
	assert_int_equal(t->unmaps, 1);
	assert_int_equal(t->mapped_at, 0xd0000000);
	/* Above 4 GiB through the high dword. */
	cfg_wr(b, 1, PCI_BAR0 + 4, 4, 0x1);
	assert_false(bus_find(b, BUS_MMIO, 0xd0000000, &r));
	assert_true(bus_find(b, BUS_MMIO, 0x1d0000000ULL, &r));
	assert_int_equal(t->mapped_at, 0x1d0000000ULL);
	/* A BAR moved onto another one's range is not decoded. */
	cfg_wr(b, 2, PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	assert_int_equal(u->maps, 1);
	cfg_wr(b, 2, PCI_BAR0, 4, 0xd0000000); /* free since t moved */
	assert_int_equal(u->maps, 2);
	cfg_wr(b, 2, PCI_BAR0 + 4, 4, 0x1); /* now on top of t */
	assert_int_equal(u->unmaps, 2);
	assert_int_equal(u->maps, 2);
	assert_false(u->pci.bars[0].mapped);
	assert_true(bus_find(b, BUS_MMIO, 0x1d0000000ULL, &r));
	assert_ptr_equal(r.opaque, t);
	/* Sizing with decoding on: a BAR that would wrap is not decoded. */
	cfg_wr(b, 1, PCI_BAR0 + 4, 4, 0xffffffff);
	cfg_wr(b, 1, PCI_BAR0, 4, 0xffffffff);
	assert_false(bus_find(b, BUS_MMIO, 0x1d0000000ULL, &r));
	assert_int_equal(f->trap.space[BUS_MMIO].count, 0);
	/* Memory decoding off unmaps. */
	cfg_wr(b, 1, PCI_BAR0 + 4, 4, 0);
	cfg_wr(b, 1, PCI_BAR0, 4, (uint32_t)addr);
	assert_true(bus_find(b, BUS_MMIO, addr, &r));
	cfg_wr(b, 1, PCI_COMMAND, 2, 0);
	assert_false(bus_find(b, BUS_MMIO, addr, &r));
}

/* 32-bit, prefetchable 64-bit and I/O BARs: type bits, sizing masks, the
 * windows they are placed in, and decoding by COMMAND.MEMORY / IO. */
static void test_bar_kinds(void **state)
{
	struct fx *f = *state;
	struct bus *b = &f->trap;
	struct tdev *t = calloc(1, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "kinds");
	pci_device_init(&t->pci, t->name, 0x1234, 0x9abc, 0xff0000, 0);
	t->pci.ops = &tdev_ops;
	struct bus_region r = {.handler = tdev_bar, .opaque = t, .name = t->name};
	assert_int_equal(pci_device_add_bar_flags(&t->pci, 0, 0x20000, 0, &r), 0);
	assert_int_equal(pci_device_add_bar_flags(&t->pci, 1, 0x20, PCI_BAR_IO, &r), 0);
	assert_int_equal(pci_device_add_bar_flags(&t->pci, 2, 0x4000,
						  PCI_BAR_MEM_TYPE_64 | PCI_BAR_MEM_PREFETCH, &r),
			 0);
	/* Slot 3 is BAR2's upper half; bad sizes are refused. */
	assert_int_equal(pci_device_add_bar_flags(&t->pci, 3, 0x1000, 0, &r), -1);
	assert_int_equal(pci_device_add_bar_flags(&t->pci, 4, 0x30, PCI_BAR_IO, &r), -1);
	assert_int_equal(pci_device_add_bar_flags(&t->pci, 4, 0x800, 0, &r), -1);
	char err[128];
	assert_int_equal(pci_bus_add_device(f->pci, &t->pci, err, sizeof(err)), 0);
	uint32_t b0 = cfg_rd(b, 1, PCI_BAR0, 4), b1 = cfg_rd(b, 1, PCI_BAR0 + 4, 4);
	assert_int_equal(b0 & 0xf, 0);
	assert_true(b0 >= LAYOUT_PCI_MMIO_START && b0 % 0x20000 == 0);
	assert_int_equal(b1 & 0x3, PCI_BAR_IO);
	assert_true((b1 & ~3u) >= PCI_PIO_START && (b1 & ~3u) + 0x20 <= PCI_PIO_END);
	assert_int_equal(cfg_rd(b, 1, PCI_BAR0 + 8, 4) & 0xf,
			 PCI_BAR_MEM_TYPE_64 | PCI_BAR_MEM_PREFETCH);
	/* Sizing: the size in the writable bits, the type bits kept. */
	cfg_wr(b, 1, PCI_BAR0, 4, 0xffffffff);
	assert_int_equal(cfg_rd(b, 1, PCI_BAR0, 4), 0xfffe0000);
	cfg_wr(b, 1, PCI_BAR0 + 4, 4, 0xffffffff);
	assert_int_equal(cfg_rd(b, 1, PCI_BAR0 + 4, 4), 0xffffffe1);
	cfg_wr(b, 1, PCI_BAR0 + 8, 4, 0xffffffff);
	assert_int_equal(cfg_rd(b, 1, PCI_BAR0 + 8, 4), 0xffffc00c);
	cfg_wr(b, 1, PCI_BAR0, 4, b0);
	cfg_wr(b, 1, PCI_BAR0 + 4, 4, b1);
	cfg_wr(b, 1, PCI_BAR0 + 8, 4, 0xd0000000);
	/* I/O decoding alone maps only the I/O BAR. */
	struct bus_region out;
	cfg_wr(b, 1, PCI_COMMAND, 2, PCI_COMMAND_IO);
	assert_int_equal(cfg_rd(b, 1, PCI_COMMAND, 2), PCI_COMMAND_IO);
	assert_true(bus_find(b, BUS_PIO, b1 & ~3u, &out));
	assert_int_equal(out.len, 0x20);
	assert_false(bus_find(b, BUS_MMIO, b0, &out));
	cfg_wr(b, 1, PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	assert_false(bus_find(b, BUS_PIO, b1 & ~3u, &out));
	assert_true(bus_find(b, BUS_MMIO, b0, &out));
	assert_true(bus_find(b, BUS_MMIO, 0xd0000000, &out));
	/* The 32-bit BAR moves with one dword. */
	cfg_wr(b, 1, PCI_BAR0, 4, 0xe0000000);
	assert_true(bus_find(b, BUS_MMIO, 0xe0000000, &out));
	assert_false(bus_find(b, BUS_MMIO, b0, &out));
	assert_int_equal(t->mapped_at, 0xe0000000);
}

static void test_capability_list(void **state)
{
	struct fx *f = *state;
	struct bus *b = &f->trap;
	struct tdev *t = tdev_new(true);
	uint8_t vcap[8] = {PCI_CAP_ID_VNDR, 0xee, 8, 7, 1, 2, 3, 4};
	int off = pci_device_add_cap(&t->pci, vcap, sizeof(vcap));
	assert_true(off >= PCI_CAP_START && off % 4 == 0);
	static const uint8_t rw[1] = {0xff};
	pci_device_set_wmask(&t->pci, (uint32_t)off + 4, rw, 1);
	char err[128];
	assert_int_equal(pci_bus_add_device(f->pci, &t->pci, err, sizeof(err)), 0);

	assert_true(cfg_rd(b, 1, PCI_STATUS, 2) & PCI_STATUS_CAP_LIST);
	uint32_t msix = cfg_find_cap(b, 1, PCI_CAP_ID_MSIX, 0);
	uint32_t vndr = cfg_find_cap(b, 1, PCI_CAP_ID_VNDR, 7);
	assert_int_equal(msix, cfg_rd(b, 1, PCI_CAPABILITY_LIST, 1)); /* first added */
	assert_int_equal(vndr, (uint32_t)off);
	assert_int_equal(cfg_rd(b, 1, vndr + 1, 1), 0); /* end of the list */
	assert_int_equal(cfg_rd(b, 1, vndr + 4, 4), 0x04030201);
	cfg_wr(b, 1, vndr, 4, 0);	       /* read-only */
	cfg_wr(b, 1, vndr + 4, 4, 0x55555555); /* only byte 4 writable */
	assert_int_equal(cfg_rd(b, 1, vndr, 1), PCI_CAP_ID_VNDR);
	assert_int_equal(cfg_rd(b, 1, vndr + 1, 1), 0);
	assert_int_equal(cfg_rd(b, 1, vndr + 4, 4), 0x04030255);

	/* Config space full: a capability that does not fit is refused. */
	uint8_t big[200] = {PCI_CAP_ID_VNDR};
	assert_int_equal(pci_device_add_cap(&t->pci, big, sizeof(big)), -1);
}

static void test_slots_full(void **state)
{
	struct fx *f = *state;
	for (int i = 1; i < PCI_MAX_DEVICES; i++)
		assert_int_equal(fx_add(f, false)->pci.slot, (unsigned int)i);
	struct tdev *t = tdev_new(false);
	char err[128] = "";
	assert_int_equal(pci_bus_add_device(f->pci, &t->pci, err, sizeof(err)), -1);
	assert_string_equal(err, "no free PCI slot (max 31 devices)");
	free(t);
}

static void test_intx_shared_line(void **state)
{
	struct fx *f = *state;
	struct bus *b = &f->trap;
	struct tdev *d[9];
	for (int i = 0; i < 9; i++)
		d[i] = fx_add(f, false);
	struct tdev *x = d[0], *y = d[8]; /* slots 1 and 9: both on GSI 17 */
	assert_int_equal(x->pci.intx_gsi, 17);
	assert_int_equal(y->pci.intx_gsi, 17);
	assert_int_equal(cfg_rd(b, 9, PCI_INTERRUPT_LINE, 1), 17);

	pci_intx_set(&x->pci, true);
	assert_int_equal(f->host.line[17], 1);
	assert_true(cfg_rd(b, 1, PCI_STATUS, 2) & PCI_STATUS_INTERRUPT);
	pci_intx_set(&y->pci, true);
	int changes = f->host.line_changes;
	pci_intx_set(&x->pci, false);
	assert_int_equal(f->host.line[17], 1); /* y still asserts */
	assert_false(cfg_rd(b, 1, PCI_STATUS, 2) & PCI_STATUS_INTERRUPT);
	pci_intx_set(&y->pci, false);
	assert_int_equal(f->host.line[17], 0);
	assert_int_equal(f->host.line_changes, changes + 1);

	/* COMMAND.INTX_DISABLE masks the line but not the status bit. */
	pci_intx_set(&x->pci, true);
	cfg_wr(b, 1, PCI_COMMAND, 2, PCI_COMMAND_INTX_DISABLE);
	assert_int_equal(f->host.line[17], 0);
	assert_true(cfg_rd(b, 1, PCI_STATUS, 2) & PCI_STATUS_INTERRUPT);
	cfg_wr(b, 1, PCI_COMMAND, 2, 0);
	assert_int_equal(f->host.line[17], 1);
	pci_intx_set(&x->pci, false);
	assert_int_equal(f->host.line[17], 0);
}

static void test_msix(void **state)
{
	struct fx *f = *state;
	struct bus *b = &f->trap;
	struct tdev *t = fx_add(f, true);
	uint32_t cap = cfg_find_cap(b, 1, PCI_CAP_ID_MSIX, 0);
	assert_int_not_equal(cap, 0);
	assert_int_equal(cfg_rd(b, 1, cap + PCI_MSIX_FLAGS, 2), 3); /* 4 vectors, off */
	assert_int_equal(cfg_rd(b, 1, cap + PCI_MSIX_TABLE, 4), PCI_MSIX_TABLE_OFFSET | 2);
	assert_int_equal(cfg_rd(b, 1, cap + PCI_MSIX_PBA, 4), PCI_MSIX_PBA_OFFSET | 2);
	cfg_wr(b, 1, PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	uint64_t tab = cfg_bar64(b, 1, 2), pba = tab + PCI_MSIX_PBA_OFFSET;
	struct bus_region r;
	assert_true(bus_find(b, BUS_MMIO, tab, &r));
	assert_string_equal(r.reg_name(r.opaque, 0, false), "msix table");
	assert_string_equal(r.reg_name(r.opaque, PCI_MSIX_PBA_OFFSET, false), "msix pba");
	for (int i = 0; i < 4; i++) /* reset state: every vector masked */
		assert_int_equal(mmio_rd(b, tab + 16 * i + 12, 4), PCI_MSIX_ENTRY_CTRL_MASKBIT);

	uint64_t seq0, seq;
	assert_int_equal(pci_msix_vector_seq(&t->pci, 0, &seq0), -1);	      /* off */
	assert_int_equal(pci_msix_notify(&t->pci, 0), PCI_MSIX_OFF);	      /* INTx then */
	cfg_wr(b, 1, cap + PCI_MSIX_FLAGS, 2, PCI_MSIX_FLAGS_ENABLE | 0x7ff); /* size is RO */
	assert_int_equal(pci_msix_vector_seq(&t->pci, 4, &seq0), -1);	      /* no such vector */
	assert_int_equal(pci_msix_vector_seq(&t->pci, 1, &seq), 0);
	assert_int_equal(pci_msix_vector_seq(&t->pci, 0, &seq0), 0);
	assert_true(seq != seq0); /* nothing sent on either: the vector differs */
	assert_int_equal(cfg_rd(b, 1, cap + PCI_MSIX_FLAGS, 2), PCI_MSIX_FLAGS_ENABLE | 3);
	assert_true(pci_msix_enabled(&t->pci));
	assert_int_equal(pci_msix_notify(&t->pci, 0), PCI_MSIX_PENDING);
	assert_int_equal(mmio_rd(b, pba, 8), 1);
	assert_int_equal(f->host.nr_routes, 0); /* no route before first unmask */
	/* Pending counts (it is delivered after); another vector's does not
	 * change, nor equal it (the vector is part of the value). */
	assert_int_equal(pci_msix_vector_seq(&t->pci, 0, &seq), 0);
	assert_true(seq != seq0);
	assert_int_equal(pci_msix_vector_seq(&t->pci, 1, &seq0), 0);
	assert_true(seq != seq0);
	assert_int_equal(pci_msix_vector_seq(&t->pci, 1, &seq), 0);
	assert_true(seq == seq0);
	assert_int_equal(pci_msix_vector_seq(&t->pci, 0, &seq0), 0);

	mmio_wr(b, tab, 8, 0xfee00000ULL); /* qword write: address lo + hi */
	mmio_wr(b, tab + 8, 4, 0x4041);
	mmio_wr(b, tab + 12, 4, 0xfffffffe); /* unmask; reserved bits stay 0 */
	assert_int_equal(mmio_rd(b, tab + 12, 4), 0);
	assert_int_equal(f->host.nr_routes, 1);
	assert_int_equal(f->host.routes[0].addr, 0xfee00000ULL);
	assert_int_equal(f->host.routes[0].data, 0x4041);
	assert_int_equal(f->host.irqfd_gsi[0], 24);
	int efd = f->host.irqfd_efd[0];
	assert_int_equal(efd_take(efd), 1); /* the pending one, on unmask */
	assert_int_equal(mmio_rd(b, pba, 8), 0);
	assert_int_equal(pci_msix_notify(&t->pci, 0), PCI_MSIX_SENT);
	assert_int_equal(pci_msix_vector_seq(&t->pci, 0, &seq), 0);
	assert_true(seq != seq0);
	assert_int_equal(pci_msix_notify(&t->pci, 0), PCI_MSIX_SENT);
	assert_int_equal(efd_take(efd), 2);

	/* Function mask: pending, then delivered when cleared. */
	cfg_wr(b, 1, cap + PCI_MSIX_FLAGS, 2, PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL);
	assert_int_equal(pci_msix_notify(&t->pci, 0), PCI_MSIX_PENDING);
	assert_int_equal(efd_take(efd), 0);
	assert_int_equal(mmio_rd(b, pba, 4), 1);
	cfg_wr(b, 1, cap + PCI_MSIX_FLAGS, 2, PCI_MSIX_FLAGS_ENABLE);
	assert_int_equal(efd_take(efd), 1);
	assert_int_equal(mmio_rd(b, pba, 4), 0);

	/* The route follows the table; one GSI per vector, ever. */
	mmio_wr(b, tab + 8, 4, 0x4042);
	assert_int_equal(f->host.route_updates, 1);
	assert_int_equal(f->host.routes[0].data, 0x4042);
	mmio_wr(b, tab + 12, 4, 1);
	mmio_wr(b, tab + 12, 4, 0);
	assert_int_equal(f->host.nr_routes, 1);
	assert_int_equal(f->host.route_updates, 1); /* unchanged message */
	assert_int_equal(pci_msix_notify(&t->pci, 4), PCI_MSIX_DROPPED);
	assert_int_equal(pci_msix_notify(&t->pci, 0xffff), PCI_MSIX_DROPPED);

	/* Accesses the spec does not allow are ignored; reads give 0. */
	assert_int_equal(mmio_rd(b, tab + 8, 2), 0);
	mmio_wr(b, tab + 8, 2, 0x1111);
	mmio_wr(b, tab + 10, 4, 0x11111111);
	mmio_wr(b, tab + 4, 8, 0x1111111111111111ULL); /* misaligned qword */
	assert_int_equal(mmio_rd(b, tab + 8, 4), 0x4042);
	mmio_wr(b, pba, 8, ~0ULL);
	assert_int_equal(mmio_rd(b, pba, 8), 0);
	assert_int_equal(mmio_rd(b, tab + 16 * 4, 4), 0); /* past the table */
	assert_int_equal(mmio_rd(b, pba + 8, 8), 0);	  /* past the PBA */
	assert_int_equal(mmio_rd(b, tab + 0xffc, 4), 0);

	/* MSI-X off again: the caller falls back to INTx. */
	cfg_wr(b, 1, cap + PCI_MSIX_FLAGS, 2, 0);
	assert_int_equal(pci_msix_notify(&t->pci, 0), PCI_MSIX_OFF);
}

/* A backend that writes a vector's eventfd itself (vhost) must not get
 * through a mask: masking unbinds the irqfd, the write shows in the PBA,
 * and unmasking binds it again (KVM injects a non-zero count on bind). */
static void test_msix_backend_masking(void **state)
{
	struct fx *f = *state;
	struct bus *b = &f->trap;
	struct tdev *t = fx_add(f, true);
	uint32_t cap = cfg_find_cap(b, 1, PCI_CAP_ID_MSIX, 0);
	cfg_wr(b, 1, PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	uint64_t tab = cfg_bar64(b, 1, 2), pba = tab + PCI_MSIX_PBA_OFFSET;
	assert_int_equal(pci_msix_vector_fd(&t->pci, 1), -1); /* MSI-X off */
	cfg_wr(b, 1, cap + PCI_MSIX_FLAGS, 2, PCI_MSIX_FLAGS_ENABLE);
	int efd = pci_msix_vector_fd(&t->pci, 1); /* masked, never routed: still given */
	assert_true(efd >= 0);
	assert_int_equal(pci_msix_vector_fd(&t->pci, 4), -1);
	uint64_t one = 1;
	assert_int_equal(write(efd, &one, 8), 8); /* the backend signals while masked */
	assert_int_equal(mmio_rd(b, pba, 8), 2);  /* pending, and taken into the PBA */
	assert_int_equal(efd_take(efd), 0);

	mmio_wr(b, tab + 16, 8, 0xfee00000ULL);
	mmio_wr(b, tab + 16 + 8, 4, 0x4051);
	mmio_wr(b, tab + 16 + 12, 4, 0); /* unmask: route, bind, fire the pending one */
	assert_int_equal(f->host.irqfd_gsi[0], 24);
	assert_int_equal(f->host.irqfd_efd[0], efd);
	assert_int_equal(efd_take(efd), 1);
	assert_int_equal(mmio_rd(b, pba, 8), 0);

	mmio_wr(b, tab + 16 + 12, 4, 1); /* mask: unbound */
	assert_int_equal(f->host.irqfd_gsi[0], -1);
	assert_int_equal(write(efd, &one, 8), 8);
	mmio_wr(b, tab + 16 + 8, 4, 0x4052);		  /* new message while masked */
	mmio_wr(b, tab + 16 + 12, 4, 0);		  /* unmask without a PBA read */
	assert_int_equal(f->host.routes[0].data, 0x4052); /* routed before bound */
	assert_int_equal(f->host.irqfd_gsi[0], 24);
	assert_int_equal(efd_take(efd), 1); /* left for KVM to inject on bind */

	/* The function mask unbinds too. */
	cfg_wr(b, 1, cap + PCI_MSIX_FLAGS, 2, PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL);
	assert_int_equal(f->host.irqfd_gsi[0], -1);
	cfg_wr(b, 1, cap + PCI_MSIX_FLAGS, 2, PCI_MSIX_FLAGS_ENABLE);
	assert_int_equal(f->host.irqfd_gsi[0], 24);
	assert_int_equal(pci_msix_notify(&t->pci, 1), PCI_MSIX_SENT);
	assert_int_equal(efd_take(efd), 1);
}

/* The trap table is sorted and no two regions overlap. */
static void assert_trap_table_sane(const struct bus *b)
{
	const struct bus_table *t = &b->space[BUS_MMIO];
	for (unsigned int i = 0; i + 1 < t->count; i++)
		assert_true(t->regions[i].base + t->regions[i].len <= t->regions[i + 1].base);
}

/* Random config cycles (widths 1/2/4 and string I/O, as the vCPU loop
 * splits rep outs/ins) and MMIO of every width 1..8 at every device. After
 * each step the trap table is sane and the read-only IDs read back; after
 * the loop, both devices can be put back to work. Memory errors: ASan in
 * make unit-asan. tests/fuzz/fuzz_pci.c does this with coverage feedback. */
static void test_fuzz(void **state)
{
	struct fx *f = *state;
	struct bus *b = &f->trap;
	struct tdev *t[2] = {fx_add(f, true), fx_add(f, false)};
	srand(1234);
	for (int i = 0; i < 20000; i++) {
		uint32_t slot = (uint32_t)rand() % 4, reg = (uint32_t)rand() % 256;
		uint32_t lens[] = {1, 2, 4}, len = lens[rand() % 3];
		uint32_t count = rand() % 8 ? 1 : 1 + (uint32_t)rand() % 4; /* string I/O */
		uint32_t v[4], a = cfg_addr(slot, reg);
		for (uint32_t k = 0; k < 4; k++)
			v[k] = (uint32_t)rand() * 2654435761u;
		bus_dispatch(b, BUS_PIO, 0xcf8, &a, 4, true, 0);
		uint32_t port = 0xcfc + (uint32_t)rand() % 4;
		bool wr = rand() % 2;
		for (uint32_t k = 0; k < count; k++)
			bus_dispatch(b, BUS_PIO, port, &v[k], len, wr, 0);
		uint64_t addr = LAYOUT_PCI_MMIO_START + (uint64_t)rand() % 0x20000;
		uint64_t d = v[0];
		bus_dispatch(b, BUS_MMIO, addr, &d, 1 + (uint32_t)rand() % 8, rand() % 2, 0);
		assert_trap_table_sane(b);
		assert_int_equal(cfg_rd(b, 0, PCI_VENDOR_ID, 4), 0x00081b36);
		assert_int_equal(cfg_rd(b, 1 + (uint32_t)i % 2, PCI_VENDOR_ID, 4), 0x56781234);
	}
	/* Whatever the loop left: BAR 0 of each device at a known place,
	 * decoding on, and an access reaches it. */
	for (unsigned int k = 0; k < 2; k++)
		cfg_wr(b, 1 + k, PCI_COMMAND, 2, 0);
	for (unsigned int k = 0; k < 2; k++) {
		uint64_t base = LAYOUT_PCI_MMIO_START + 0x100000 + 0x10000 * k;
		cfg_wr(b, 1 + k, PCI_BAR0, 4, (uint32_t)base);
		cfg_wr(b, 1 + k, PCI_BAR0 + 4, 4, 0);
		cfg_wr(b, 1 + k, PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
		int writes = t[k]->writes;
		mmio_wr(b, base + 8, 4, 1);
		assert_int_equal(t[k]->writes, writes + 1);
		assert_int_equal(t[k]->last_off, 8);
	}
}

static void test_aml_resources(void **state)
{
	(void)state;
	uint8_t out[64];
	static const uint8_t bus[] = {0x88, 0x0d, 0, 2, 0x0c, 0, 0, 0, 0, 0, 0xff, 0, 0, 0, 0, 1};
	assert_int_equal(aml_res_word_bus(out, 0, 0xff), sizeof(bus));
	assert_memory_equal(out, bus, sizeof(bus));
	static const uint8_t io[] = {0x88, 0x0d, 0,    1,    0x0c, 3, 0, 0,
				     0,	   0x0d, 0xff, 0xff, 0,	   0, 0, 0xf3};
	assert_int_equal(aml_res_word_io(out, 0x0d00, 0xffff), sizeof(io));
	assert_memory_equal(out, io, sizeof(io));
	static const uint8_t mem[] = {0x87, 0x17, 0,	0,    0x0c, 1, 0, 0, 0, 0, 0, 0,    0,
				      0xc0, 0xff, 0xff, 0xbf, 0xfe, 0, 0, 0, 0, 0, 0, 0xc0, 0x3e};
	assert_int_equal(aml_res_dword_mem(out, 0xc0000000, 0xfebfffff), sizeof(mem));
	assert_memory_equal(out, mem, sizeof(mem));

	/* QWordMemory (ResourceProducer, PosDecode, MinFixed, MaxFixed,
	 * Cacheable, ReadWrite, 0, 0x100000000, 0xFCFFFFFFFF, 0, 0xFC00000000),
	 * as iasl encodes it */
	static const uint8_t q[] = {0x8a, 0x2b, 0,    0, 0x0c, 0x03, 0,	   0, 0, 0, 0,	  0,
				    0,	  0,	0,    0, 0,    0,    1,	   0, 0, 0, 0xff, 0xff,
				    0xff, 0xff, 0xfc, 0, 0,    0,    0,	   0, 0, 0, 0,	  0,
				    0,	  0,	0,    0, 0,    0,    0xfc, 0, 0, 0};
	assert_int_equal(aml_res_qword_mem(out, 0x100000000ull, 0xfcffffffffull), sizeof(q));
	assert_memory_equal(out, q, sizeof(q));

	/* Name (_PRT, Package { 0x1FFFF, Package { Zero } }) */
	static struct aml a;
	aml_init(&a);
	aml_name(&a, "_PRT");
	aml_package_open(&a, 2);
	aml_int(&a, 0x1ffff);
	aml_package_open(&a, 1);
	aml_int(&a, 0);
	aml_close(&a);
	aml_close(&a);
	static const uint8_t pkg[] = {0x08, '_',  'P',	'R', 'T',  0x12, 0x0b, 0x02, 0x0c,
				      0xff, 0xff, 0x01, 0,   0x12, 0x03, 0x01, 0x00};
	assert_false(a.overflow);
	assert_int_equal(a.len, sizeof(pkg));
	assert_memory_equal(a.buf, pkg, sizeof(pkg));
}

/* A device whose BAR 0 is `size` bytes with `flags`; NULL (and freed) if
 * the bus refuses it, with the reason in err. */
static struct tdev *big_bar_dev(struct fx *f, uint64_t size, uint32_t flags, char *err,
				size_t errlen)
{
	struct tdev *t = calloc(1, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "big");
	pci_device_init(&t->pci, t->name, 0x1af4, 0x1110, 0x050000, 0);
	t->pci.ops = &tdev_ops;
	struct bus_region r = {.handler = tdev_bar, .opaque = t, .name = t->name};
	assert_int_equal(pci_device_add_bar_flags(&t->pci, 0, size, flags, &r), 0);
	if (pci_bus_add_device(f->pci, &t->pci, err, errlen) < 0) {
		free(t);
		return NULL;
	}
	return t;
}

static uint64_t bar64_rd(struct bus *b, unsigned int slot)
{
	return (cfg_rd(b, slot, PCI_BAR0, 4) & ~0xfull) | (uint64_t)cfg_rd(b, slot, PCI_BAR0 + 4, 4)
							      << 32;
}

/* An expansion ROM (issue 37.1): placed below 4 GiB, sized through
 * PCI_ROM_ADDRESS like a BAR, decoded only with COMMAND.MEMORY and its
 * enable bit, and moved by the guest. */
static void test_rom(void **state)
{
	struct fx *f = *state;
	struct bus *b = &f->trap;
	struct tdev *t = tdev_new(false);
	struct bus_region r = {.handler = tdev_bar, .opaque = t, .name = t->name};
	assert_int_equal(pci_device_add_rom(&t->pci, 0x400, &r), -1); /* under 2 KiB */
	assert_int_equal(pci_device_add_rom(&t->pci, 0x1000, &r), 0);
	assert_int_equal(pci_device_add_rom(&t->pci, 0x10000, &r), -1); /* one ROM only */
	char err[128];
	assert_int_equal(pci_bus_add_device(f->pci, &t->pci, err, sizeof(err)), 0);
	uint32_t rom = cfg_rd(b, 1, PCI_ROM_ADDRESS, 4);
	assert_int_equal(rom & PCI_ROM_ENABLE, 0);
	assert_true(rom >= LAYOUT_PCI_MMIO_START && rom + 0x1000 <= LAYOUT_PCI_MMIO_END);
	assert_int_equal(rom % 0x1000, 0);
	cfg_wr(b, 1, PCI_ROM_ADDRESS, 4, 0xfffff800);
	assert_int_equal(cfg_rd(b, 1, PCI_ROM_ADDRESS, 4), 0xfffff000);
	cfg_wr(b, 1, PCI_ROM_ADDRESS, 4, rom);
	struct bus_region out;
	cfg_wr(b, 1, PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	assert_false(bus_find(b, BUS_MMIO, rom, &out)); /* not enabled */
	cfg_wr(b, 1, PCI_ROM_ADDRESS, 4, rom | PCI_ROM_ENABLE);
	assert_true(bus_find(b, BUS_MMIO, rom + 0xfff, &out));
	assert_int_equal(out.len, 0x1000);
	cfg_wr(b, 1, PCI_ROM_ADDRESS, 4, 0xe0000000 | PCI_ROM_ENABLE);
	assert_false(bus_find(b, BUS_MMIO, rom, &out));
	assert_true(bus_find(b, BUS_MMIO, 0xe0000000, &out));
	cfg_wr(b, 1, PCI_COMMAND, 2, 0);
	assert_false(bus_find(b, BUS_MMIO, 0xe0000000, &out));
}

/* A small 64-bit prefetchable BAR goes above 4 GiB too (as OVMF places
 * them), a small 64-bit non-prefetchable one below. */
static void test_bar_mmio64_small(void **state)
{
	struct fx *f = *state;
	char err[160];
	pci_bus_set_mmio64(f->pci, 4ull << 30, 64ull << 30);
	assert_non_null(
	    big_bar_dev(f, 0x4000, PCI_BAR_MEM_TYPE_64 | PCI_BAR_MEM_PREFETCH, err, sizeof(err)));
	assert_int_equal(bar64_rd(&f->trap, 1), 4ull << 30);
	assert_non_null(big_bar_dev(f, 0x4000, PCI_BAR_MEM_TYPE_64, err, sizeof(err)));
	assert_true(bar64_rd(&f->trap, 2) < LAYOUT_PCI_MMIO_END);
}

/* The 64-bit window (issue 37.1): where it lies for a RAM size and a CPU. */
static void test_mmio64_layout(void **state)
{
	(void)state;
	assert_int_equal(layout_pci_mmio64_start(512ull << 20), 4ull << 30);
	assert_int_equal(layout_pci_mmio64_start(4ull << 30), 4ull << 30);
	/* 6 GiB of RAM: 3 below 4 GiB, 3 above, to 7 GiB; 7 GiB + 1 byte
	 * rounds to the next GiB. */
	assert_int_equal(layout_pci_mmio64_start(7ull << 30), 7ull << 30);
	assert_int_equal(layout_pci_mmio64_start((7ull << 30) + 1), 8ull << 30);
	assert_int_equal(layout_pci_mmio64_end(36), 64ull << 30);
	assert_int_equal(layout_pci_mmio64_end(39), 512ull << 30);
	assert_int_equal(layout_pci_mmio64_end(40), LAYOUT_AMD_HT_HOLE);
	assert_int_equal(layout_pci_mmio64_end(52), LAYOUT_AMD_HT_HOLE);
}

/* 64-bit prefetchable BARs of any size that fits go to the 64-bit window;
 * a 64-bit BAR the 32-bit window cannot hold goes there too; a 32-bit BAR
 * never does; what fits nowhere is one line naming the BAR. */
static void test_bar_mmio64(void **state)
{
	struct fx *f = *state;
	struct bus *b = &f->trap;
	char err[160];
	const uint32_t m64 = PCI_BAR_MEM_TYPE_64, pf64 = PCI_BAR_MEM_TYPE_64 | PCI_BAR_MEM_PREFETCH;
	/* No 64-bit window yet (a bus from pci_bus_create_with): 8 GiB fits
	 * nowhere, and the error says which BAR. */
	assert_null(big_bar_dev(f, 8ull << 30, pf64, err, sizeof(err)));
	assert_non_null(strstr(err, "big: BAR0 (8192 MiB)"));
	assert_non_null(strstr(err, "32-bit MMIO"));
	pci_bus_set_mmio64(f->pci, 8ull << 30, 64ull << 30);
	/* slot 1: ivshmem-like, 8 GiB prefetchable, at the window's start */
	assert_non_null(big_bar_dev(f, 8ull << 30, pf64, err, sizeof(err)));
	assert_int_equal(bar64_rd(b, 1), 8ull << 30);
	assert_int_equal(cfg_rd(b, 1, PCI_BAR0, 4) & 0xf, pf64);
	/* slot 2: NVMe-like, 16 KiB 64-bit non-prefetchable: below 4 GiB */
	assert_non_null(big_bar_dev(f, 0x4000, m64, err, sizeof(err)));
	uint64_t a2 = bar64_rd(b, 2);
	assert_true(a2 >= LAYOUT_PCI_MMIO_START && a2 + 0x4000 <= LAYOUT_PCI_MMIO_END);
	/* slot 3: 2 GiB non-prefetchable 64-bit: too big below, so above,
	 * naturally aligned after the 8 GiB one */
	assert_non_null(big_bar_dev(f, 2ull << 30, m64, err, sizeof(err)));
	assert_int_equal(bar64_rd(b, 3), 16ull << 30);
	/* a 2 GiB 32-bit BAR cannot go above 4 GiB */
	assert_null(big_bar_dev(f, 2ull << 30, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "32-bit MMIO"));
	/* 64 GiB does not fit what is left of [8, 64) GiB */
	assert_null(big_bar_dev(f, 64ull << 30, pf64, err, sizeof(err)));
	assert_non_null(strstr(err, "64-bit MMIO"));
	/* 32 GiB does: at 32 GiB */
	assert_non_null(big_bar_dev(f, 32ull << 30, pf64, err, sizeof(err)));
	assert_int_equal(bar64_rd(b, 4), 32ull << 30);
	/* Enabled, the 8 GiB BAR decodes at its top byte. */
	struct bus_region out;
	cfg_wr(b, 1, PCI_COMMAND, 2, PCI_COMMAND_MEMORY);
	assert_true(bus_find(b, BUS_MMIO, (16ull << 30) - 1, &out));
	assert_int_equal(out.len, 8ull << 30);
}

/* Issue 37.1's "64 GiB on paper": with 39 physical address bits (a
 * common host's), the window reaches 512 GiB and a 64 GiB prefetchable
 * BAR lands naturally aligned above RAM. */
static void test_bar_64g(void **state)
{
	struct fx *f = *state;
	char err[160];
	const uint32_t pf64 = PCI_BAR_MEM_TYPE_64 | PCI_BAR_MEM_PREFETCH;
	pci_bus_set_mmio64(f->pci, layout_pci_mmio64_start(6ull << 30), layout_pci_mmio64_end(39));
	assert_non_null(big_bar_dev(f, 64ull << 30, pf64, err, sizeof(err)));
	assert_int_equal(bar64_rd(&f->trap, 1), 64ull << 30);
	/* a second one goes on at 128 GiB; 512 GiB no longer fits */
	assert_non_null(big_bar_dev(f, 64ull << 30, pf64, err, sizeof(err)));
	assert_int_equal(bar64_rd(&f->trap, 2), 128ull << 30);
	assert_null(big_bar_dev(f, 512ull << 30, pf64, err, sizeof(err)));
	assert_non_null(strstr(err, "64-bit MMIO"));
}

static const uint8_t *memfind(const uint8_t *h, size_t hn, const void *n, size_t nn)
{
	for (size_t i = 0; i + nn <= hn; i++)
		if (!memcmp(h + i, n, nn))
			return h + i;
	return NULL;
}

/* The DSDT has \_SB.PCI0 with _HID PNP0A03, its window and a _PRT. */
static void test_dsdt_pci_root(void **state)
{
	(void)state;
	static uint8_t buf[0x10000];
	assert_int_not_equal(
	    acpi_build(buf, LAYOUT_BIOS_START, sizeof(buf), 2, 8ull << 30, LAYOUT_AMD_HT_HOLE), 0);
	const uint8_t *dsdt = memfind(buf, sizeof(buf), "DSDT", 4);
	assert_non_null(dsdt);
	uint32_t len;
	memcpy(&len, dsdt + 4, 4);
	assert_int_equal(acpi_checksum(dsdt, len), 0);
	const uint8_t *pci0 = memfind(dsdt, len, "PCI0", 4);
	assert_non_null(pci0);
	uint32_t hid = aml_eisaid("PNP0A03");
	assert_non_null(memfind(pci0, len - (size_t)(pci0 - dsdt), &hid, 4));
	uint8_t mem[AML_RES_DWORD_LEN];
	aml_res_dword_mem(mem, (uint32_t)LAYOUT_PCI_MMIO_START, (uint32_t)LAYOUT_PCI_MMIO_END - 1);
	assert_non_null(memfind(pci0, len - (size_t)(pci0 - dsdt), mem, sizeof(mem)));
	/* The 64-bit window, as given */
	uint8_t q[AML_RES_QWORD_LEN];
	aml_res_qword_mem(q, 8ull << 30, LAYOUT_AMD_HT_HOLE - 1);
	assert_non_null(memfind(pci0, len - (size_t)(pci0 - dsdt), q, sizeof(q)));
	const uint8_t *prt = memfind(pci0, len - (size_t)(pci0 - dsdt), "_PRT", 4);
	assert_non_null(prt);
	assert_int_equal(prt[4], 0x12);	  /* Package */
	assert_int_equal(prt[7], 31 * 4); /* NumElements after a 2-byte PkgLength */
	/* The last entry: slot 31, INTD -> pci_intx_gsi(31, 3) */
	uint8_t last[] = {0x12,
			  0x0c,
			  0x04,
			  0x0c,
			  0xff,
			  0xff,
			  0x1f,
			  0x00,
			  0x0a,
			  0x03,
			  0x00,
			  0x0a,
			  (uint8_t)pci_intx_gsi(31, 3)};
	assert_non_null(memfind(prt, len - (size_t)(prt - dsdt), last, sizeof(last)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_host_bridge, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_reset_port, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_bar_sizing, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_bar_mapping, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_bar_kinds, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_capability_list, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_slots_full, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_intx_shared_line, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_msix, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_msix_backend_masking, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_fuzz, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_bar_mmio64, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_bar_64g, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_bar_mmio64_small, fx_setup, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_rom, fx_setup, fx_teardown),
	    cmocka_unit_test(test_mmio64_layout),
	    cmocka_unit_test(test_aml_resources),
	    cmocka_unit_test(test_dsdt_pci_root),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
