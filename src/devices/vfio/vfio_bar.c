// SPDX-License-Identifier: Apache-2.0
/* The passthrough BARs. Each BAR keeps the device's kind (I/O or memory,
 * 32- or 64-bit, prefetchable) and gets a size that src/pci can place: the
 * region's, rounded up to a power of two and at least a page for memory.
 *
 * Every BAR has a trap region covering all of it; with mmap on, KVM memory
 * slots over the VFIO region's mapping cover the mappable pages, so the
 * trap sees only what they leave: the pages holding the MSI-X table and
 * PBA (emulated table; the rest of those pages goes to the device through
 * pread/pwrite), parts VFIO will not map, and the padding past the region
 * (reads all ones, writes dropped). */
#include <linux/vfio.h>
#include <stdio.h>
#include <string.h>

#include "devices/vfio/vfio_priv.h"
#include "x86/layout.h"

static uint64_t pow2_up(uint64_t x)
{
	uint64_t p = 1;
	while (p < x && p)
		p <<= 1;
	return p;
}

static bool in_range(uint64_t off, uint64_t start, uint64_t len)
{
	return off >= start && off - start < len;
}

static void bar_trap(void *opaque, struct bus_access *acc)
{
	struct vfio_bar *b = opaque;
	struct vfio_pci *v = b->v;
	if (vfio_msix_access(v, b->index, acc->offset, acc->data, acc->len, acc->is_write))
		return;
	if (b->index == PCI_ROM_SLOT && acc->is_write)
		return; /* a ROM: writes go nowhere */
	if (acc->offset >= b->size || acc->len > b->size - acc->offset) {
		if (!acc->is_write)
			memset(acc->data, 0xff, acc->len);
		return;
	}
	ssize_t n = acc->is_write
			? v->ops->pwrite(v->h, acc->data, acc->len, b->offset + acc->offset)
			: v->ops->pread(v->h, acc->data, acc->len, b->offset + acc->offset);
	if (n != (ssize_t)acc->len) {
		vfio_log(v, acc->is_write ? "BAR write" : "BAR read", n < 0 ? (int)n : -1);
		if (!acc->is_write)
			memset(acc->data, 0xff, acc->len);
	}
}

static const char *bar_reg_name(void *opaque, uint64_t off, bool is_write)
{
	struct vfio_bar *b = opaque;
	const struct vfio_msix *mx = &b->v->msix;
	(void)is_write;
	if (mx->cap && b->index == mx->table_bar &&
	    in_range(off, mx->table_off, (uint64_t)mx->nr * 16))
		return "MSI-X table";
	if (mx->cap && b->index == mx->pba_bar &&
	    in_range(off, mx->pba_off, (mx->nr + 63) / 64 * 8))
		return "MSI-X PBA";
	return pci_res_name(b->index);
}

/* [lo, hi) in whole pages around [start, start + len). */
static void page_span(uint64_t start, uint64_t len, uint64_t *lo, uint64_t *hi)
{
	*lo = start & ~(VFIO_PAGE - 1);
	*hi = (start + len + VFIO_PAGE - 1) & ~(VFIO_PAGE - 1);
}

static void slot_add(struct vfio_bar *b, uint8_t *map, uint64_t map_off, uint64_t lo, uint64_t hi)
{
	if (lo >= hi || b->nr_slots == VFIO_BAR_MAX_SLOT)
		return;
	b->slots[b->nr_slots++] =
	    (struct vfio_slot){.off = lo, .len = hi - lo, .host = map + (lo - map_off), .slot = -1};
}

/* Slots for the mapped area [lo, hi) of the BAR, minus the MSI-X table and
 * PBA pages (at most two holes). */
static void slots_cut(struct vfio_bar *b, uint8_t *map, uint64_t lo, uint64_t hi)
{
	const struct vfio_msix *mx = &b->v->msix;
	uint64_t holes[2][2];
	unsigned int nh = 0;
	if (mx->cap && mx->table_bar == b->index)
		page_span(mx->table_off, (uint64_t)mx->nr * 16, &holes[nh][0], &holes[nh][1]), nh++;
	if (mx->cap && mx->pba_bar == b->index)
		page_span(mx->pba_off, (mx->nr + 63) / 64 * 8, &holes[nh][0], &holes[nh][1]), nh++;
	if (nh == 2 && holes[1][0] < holes[0][0]) {
		uint64_t t[2] = {holes[0][0], holes[0][1]};
		memcpy(holes[0], holes[1], sizeof(t));
		memcpy(holes[1], t, sizeof(t));
	}
	uint64_t at = lo;
	for (unsigned int i = 0; i < nh; i++) {
		if (holes[i][0] > at)
			slot_add(b, map, lo, at, holes[i][0] < hi ? holes[i][0] : hi);
		if (holes[i][1] > at)
			at = holes[i][1];
	}
	slot_add(b, map, lo, at, hi);
}

/* Whether [lo, hi) overlaps an area already mapped: sparse areas that
 * overlap would give KVM overlapping slots. */
static bool area_mapped(const struct vfio_bar *b, uint64_t lo, uint64_t hi)
{
	for (unsigned int m = 0; m < b->nr_maps; m++)
		if (lo < b->maps[m].off + b->maps[m].len && b->maps[m].off < hi)
			return true;
	return false;
}

/* mmaps the region's mappable areas (whole pages only) and cuts slots. */
static void bar_mmap(struct vfio_bar *b, const struct vfio_region *r)
{
	struct vfio_pci *v = b->v;
	unsigned int n = r->nr_areas ? r->nr_areas : 1;
	for (unsigned int i = 0; i < n && i < VFIO_MAX_AREAS; i++) {
		uint64_t off = r->nr_areas ? r->areas[i].offset : 0;
		uint64_t len = r->nr_areas ? r->areas[i].size : r->size;
		uint64_t lo = (off + VFIO_PAGE - 1) & ~(VFIO_PAGE - 1);
		uint64_t hi = (off + len) & ~(VFIO_PAGE - 1);
		if (off > r->size || len > r->size - off || lo >= hi || area_mapped(b, lo, hi))
			continue;
		void *p = v->ops->mmap(v->h, r->offset + lo, hi - lo);
		if (!p) {
			vfio_log(v, "mmap of a BAR (it will trap)", -1);
			continue;
		}
		b->maps[b->nr_maps].p = p;
		b->maps[b->nr_maps].off = lo;
		b->maps[b->nr_maps++].len = hi - lo;
		slots_cut(b, p, lo, hi);
	}
}

static int bar_init(struct vfio_pci *v, unsigned int i, uint32_t cfgbar, char *err, size_t errlen)
{
	struct vfio_region r;
	if (v->ops->region_info(v->h, VFIO_PCI_BAR0_REGION_INDEX + i, &r) < 0 || !r.size)
		return 0;
	bool io = cfgbar & PCI_BAR_IO;
	uint32_t flags = io ? PCI_BAR_IO : cfgbar & (PCI_BAR_MEM_TYPE_64 | PCI_BAR_MEM_PREFETCH);
	uint64_t size = pow2_up(r.size < PCI_BAR_MIN_SIZE && !io ? PCI_BAR_MIN_SIZE : r.size);
	/* A 64-bit BAR of any size may go above 4 GiB: whether it fits what
	 * is left of the 64-bit window is the bus's to say when the device is
	 * placed (pci_bus_add_device names the BAR). */
	uint64_t window = io ? 0x100 : LAYOUT_PCI_MMIO_END - LAYOUT_PCI_MMIO_START;
	if (!size || (size > window && (io || !(flags & PCI_BAR_MEM_TYPE_64)))) {
		snprintf(err, errlen, "%s: BAR%u (%llu bytes) cannot fit the PCI %s window",
			 v->name, i, (unsigned long long)r.size, io ? "I/O" : "32-bit MMIO");
		return -1;
	}
	struct vfio_bar *b = &v->bars[i];
	*b = (struct vfio_bar){.v = v, .index = i, .size = r.size, .offset = r.offset};
	struct bus_region br = {
	    .handler = bar_trap, .reg_name = bar_reg_name, .opaque = b, .name = v->name};
	if (pci_device_add_bar_flags(&v->pci, i, size, flags, &br) < 0) {
		snprintf(err, errlen, "%s: BAR%u cannot be declared", v->name, i);
		return -1;
	}
	if (v->mmap && !io && (r.flags & VFIO_REGION_INFO_FLAG_MMAP))
		bar_mmap(b, &r);
	return 0;
}

/* rom=on: the device's expansion ROM as the guest's ROM BAR, served from
 * VFIO's ROM region by the trap (a ROM is read once, by a driver or
 * firmware: no memory slot). A device without one shows none, as QEMU. */
static int rom_init(struct vfio_pci *v, char *err, size_t errlen)
{
	struct vfio_region r;
	if (v->ops->region_info(v->h, VFIO_PCI_ROM_REGION_INDEX, &r) < 0 || !r.size)
		return 0;
	uint64_t size = pow2_up(r.size < PCI_ROM_MIN_SIZE ? PCI_ROM_MIN_SIZE : r.size);
	struct vfio_bar *b = &v->bars[PCI_ROM_SLOT];
	*b = (struct vfio_bar){.v = v, .index = PCI_ROM_SLOT, .size = r.size, .offset = r.offset};
	struct bus_region br = {
	    .handler = bar_trap, .reg_name = bar_reg_name, .opaque = b, .name = v->name};
	if (!size || pci_device_add_rom(&v->pci, size, &br) < 0) {
		snprintf(err, errlen,
			 "%s: its expansion ROM (%llu bytes) cannot be shown (16 MiB at most)",
			 v->name, (unsigned long long)r.size);
		return -1;
	}
	return 0;
}

int vfio_bars_init(struct vfio_pci *v, const uint8_t *devcfg, char *err, size_t errlen)
{
	for (unsigned int i = 0; i < PCI_NUM_BARS; i++) {
		uint32_t cfgbar;
		memcpy(&cfgbar, devcfg + PCI_BAR0 + 4 * i, 4);
		if (bar_init(v, i, cfgbar, err, errlen) < 0)
			return -1;
		/* A 64-bit BAR takes the next slot as its upper half. */
		if (!(cfgbar & PCI_BAR_IO) && (cfgbar & 0x6) == PCI_BAR_MEM_TYPE_64)
			i++;
	}
	if (v->rom && rom_init(v, err, errlen) < 0)
		return -1;
	const struct vfio_msix *mx = &v->msix;
	if (mx->cap && (mx->table_bar >= PCI_NUM_BARS || !v->bars[mx->table_bar].size ||
			mx->table_off + (uint64_t)mx->nr * 16 > v->bars[mx->table_bar].size)) {
		snprintf(err, errlen, "%s: its MSI-X table is outside its BARs", v->name);
		return -1;
	}
	return 0;
}

/* Removes s's memory slot; on failure it stays recorded (retried at the
 * next unmap and at free), so it is never forgotten while KVM still maps
 * the BAR through it. 0 or -errno. */
static int slot_del(struct vfio_pci *v, struct vfio_slot *s)
{
	if (s->slot < 0)
		return 0;
	int r = v->ctx.memslot_del(v->ctx.host, s->slot);
	if (r < 0) {
		log_err("%s: removing a BAR memory slot failed: %s", v->name, strerror(-r));
		return r;
	}
	s->slot = -1;
	return 0;
}

void vfio_bars_free(struct vfio_pci *v)
{
	for (unsigned int i = 0; i < PCI_NUM_RES; i++) {
		struct vfio_bar *b = &v->bars[i];
		bool held = false;
		for (unsigned int s = 0; s < b->nr_slots; s++)
			held |= slot_del(v, &b->slots[s]) < 0;
		/* A slot KVM still has must keep its memory: unmapped, the
		 * address range could be reused under the guest's feet. */
		for (unsigned int m = 0; m < b->nr_maps && !held; m++)
			v->ops->munmap(v->h, b->maps[m].p, b->maps[m].len);
		b->nr_maps = 0;
		b->nr_slots = 0;
	}
}

void vfio_bar_map(struct pci_device *dev, unsigned int bar, uint64_t addr, bool mapped)
{
	struct vfio_pci *v = (struct vfio_pci *)dev;
	struct vfio_bar *b = &v->bars[bar];
	/* QEMU's order: the device decodes before guest accesses can reach
	 * it through the slots (a BAR mapping of a device with decoding
	 * off faults in the host). */
	if (mapped && b->nr_slots)
		vfio_cmd_forward(v);
	for (unsigned int i = 0; i < b->nr_slots; i++) {
		struct vfio_slot *s = &b->slots[i];
		/* A slot whose delete failed still maps the old address:
		 * retried here; while it lives, the trap serves the new one. */
		if (slot_del(v, s) < 0 || !mapped)
			continue;
		s->slot = v->ctx.memslot_add(v->ctx.host, addr + s->off, s->len, s->host);
		/* On failure the trap still serves those pages. */
		if (s->slot < 0)
			vfio_log(v, "adding a BAR memory slot", s->slot);
	}
}
