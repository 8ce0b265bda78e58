// SPDX-License-Identifier: Apache-2.0
/* A type-0 configuration space: the header image with per-bit write masks,
 * BAR sizing and mapping, the capability list. The guest can write only
 * the bits in wmask, so sizing (write all ones, read back the mask) and
 * alignment come out of the masks with no special case. */
#include <stdio.h>
#include <string.h>

#include "pci/pci.h"
#include "pci/pci_msix.h"

/* Command bits a driver may set: memory decoding, bus mastering, parity
 * and SERR reporting, INTx disable; I/O decoding once the device has an
 * I/O BAR (pci_device_add_bar_flags). */
#define PCI_COMMAND_WMASK 0x0546

static void cfg_put16(struct pci_device *dev, uint32_t off, uint16_t v)
{
	memcpy(&dev->cfg[off], &v, 2);
}

static uint16_t cfg_get16(const struct pci_device *dev, uint32_t off)
{
	uint16_t v;
	memcpy(&v, &dev->cfg[off], 2);
	return v;
}

void pci_device_init(struct pci_device *dev, const char *name, uint16_t vendor, uint16_t device,
		     uint32_t class_code, uint8_t revision)
{
	memset(dev, 0, sizeof(*dev));
	dev->name = name;
	cfg_put16(dev, PCI_VENDOR_ID, vendor);
	cfg_put16(dev, PCI_DEVICE_ID, device);
	dev->cfg[PCI_REVISION_ID] = revision;
	dev->cfg[PCI_CLASS_PROG] = (uint8_t)class_code;
	dev->cfg[PCI_CLASS_PROG + 1] = (uint8_t)(class_code >> 8);
	dev->cfg[PCI_CLASS_PROG + 2] = (uint8_t)(class_code >> 16);
	uint16_t cmd_mask = PCI_COMMAND_WMASK;
	memcpy(&dev->wmask[PCI_COMMAND], &cmd_mask, 2);
	dev->wmask[0x0c] = 0xff; /* cache line size: scratch for the OS */
	dev->wmask[PCI_INTERRUPT_LINE] = 0xff;
}

void pci_device_set_subsystem(struct pci_device *dev, uint16_t vendor, uint16_t id)
{
	cfg_put16(dev, PCI_SUBSYSTEM_VENDOR_ID, vendor);
	cfg_put16(dev, PCI_SUBSYSTEM_ID, id);
}

int pci_device_add_bar_flags(struct pci_device *dev, unsigned int bar, uint64_t size,
			     uint32_t flags, const struct bus_region *r)
{
	bool io = flags & PCI_BAR_IO, is64 = !io && (flags & PCI_BAR_MEM_TYPE_64);
	uint64_t min = io ? PCI_IO_BAR_MIN : PCI_BAR_MIN_SIZE;
	if (bar >= PCI_NUM_BARS || (is64 && bar + 1 >= PCI_NUM_BARS) || size < min ||
	    (size & (size - 1)) || (io && size > 0x100) || (!is64 && size > (1ull << 31)) ||
	    dev->bars[bar].size || (is64 && dev->bars[bar + 1].size) || !r->handler)
		return -1;
	/* The slot must not be the upper half of an earlier 64-bit BAR. */
	if (bar > 0 && (dev->bars[bar - 1].flags & PCI_BAR_MEM_TYPE_64) && dev->bars[bar - 1].size)
		return -1;
	struct pci_bar *b = &dev->bars[bar];
	b->size = size;
	b->flags = io ? PCI_BAR_IO : flags & (PCI_BAR_MEM_TYPE_64 | PCI_BAR_MEM_PREFETCH);
	b->region = *r;
	b->region.len = size;
	memcpy(&dev->cfg[PCI_BAR0 + 4 * bar], &b->flags, 4);
	/* Address bits above the size are writable; the type bits are not. */
	uint64_t mask = ~(size - 1);
	uint32_t mlo = (uint32_t)mask & (io ? ~0x3u : ~0xfu), mhi = (uint32_t)(mask >> 32);
	memcpy(&dev->wmask[PCI_BAR0 + 4 * bar], &mlo, 4);
	if (is64)
		memcpy(&dev->wmask[PCI_BAR0 + 4 * (bar + 1)], &mhi, 4);
	if (io)
		dev->wmask[PCI_COMMAND] |= PCI_COMMAND_IO;
	return 0;
}

int pci_device_add_rom(struct pci_device *dev, uint64_t size, const struct bus_region *r)
{
	if (size < PCI_ROM_MIN_SIZE || size > (16u << 20) || (size & (size - 1)) ||
	    dev->bars[PCI_ROM_SLOT].size || !r->handler)
		return -1;
	struct pci_bar *b = &dev->bars[PCI_ROM_SLOT];
	b->size = size;
	b->flags = 0;
	b->region = *r;
	b->region.len = size;
	/* Address bits [31:11] above the size and the enable bit. */
	uint32_t mask = (uint32_t) ~(size - 1) | PCI_ROM_ENABLE;
	memset(&dev->cfg[PCI_ROM_ADDRESS], 0, 4);
	memcpy(&dev->wmask[PCI_ROM_ADDRESS], &mask, 4);
	return 0;
}

int pci_device_add_bar(struct pci_device *dev, unsigned int bar, uint64_t size,
		       const struct bus_region *r)
{
	if (bar % 2)
		return -1;
	return pci_device_add_bar_flags(dev, bar, size, PCI_BAR_MEM_TYPE_64, r);
}

int pci_device_add_cap(struct pci_device *dev, const void *cap, uint8_t len)
{
	uint32_t off = dev->cap_end ? (dev->cap_end + 3u) & ~3u : PCI_CAP_START;
	if (len < 2 || off + len > PCI_CFG_SIZE)
		return -1;
	memcpy(&dev->cfg[off], cap, len);
	dev->cfg[off + 1] = 0; /* end of list until another is added */
	if (dev->cap_last)
		dev->cfg[dev->cap_last + 1] = (uint8_t)off;
	else
		dev->cfg[PCI_CAPABILITY_LIST] = (uint8_t)off;
	dev->cfg[PCI_STATUS] |= PCI_STATUS_CAP_LIST;
	dev->cap_last = (uint8_t)off;
	dev->cap_end = (uint8_t)(off + len);
	return (int)off;
}

void pci_device_set_wmask(struct pci_device *dev, uint32_t off, const void *mask, uint32_t len)
{
	const uint8_t *m = mask;
	for (uint32_t i = 0; i < len && off + i < PCI_CFG_SIZE; i++)
		dev->wmask[off + i] |= m[i];
}

static uint64_t bar_addr(const struct pci_device *dev, unsigned int i)
{
	uint32_t lo, hi = 0;
	if (i == PCI_ROM_SLOT) {
		memcpy(&lo, &dev->cfg[PCI_ROM_ADDRESS], 4);
		return lo & ~(uint32_t)(PCI_ROM_MIN_SIZE - 1);
	}
	memcpy(&lo, &dev->cfg[PCI_BAR0 + 4 * i], 4);
	if (dev->bars[i].flags & PCI_BAR_IO)
		return lo & ~0x3u;
	if (dev->bars[i].flags & PCI_BAR_MEM_TYPE_64)
		memcpy(&hi, &dev->cfg[PCI_BAR0 + 4 * (i + 1)], 4);
	return ((uint64_t)hi << 32) | (lo & ~0xfu);
}

static enum bus_space bar_space(const struct pci_bar *b)
{
	return b->flags & PCI_BAR_IO ? BUS_PIO : BUS_MMIO;
}

static void bar_unmap(struct pci_device *dev, unsigned int i)
{
	struct pci_bar *b = &dev->bars[i];
	if (!b->mapped)
		return;
	/* The device drops what it hung on the old address (ioeventfds,
	 * memory slots) before the region goes. */
	if (dev->ops && dev->ops->bar_map)
		dev->ops->bar_map(dev, i, b->addr, false);
	bus_unregister(pci_bus_trap(dev->bus), bar_space(b), b->addr, b->region.opaque);
	b->mapped = false;
}

static void bar_map(struct pci_device *dev, unsigned int i, uint64_t addr)
{
	struct pci_bar *b = &dev->bars[i];
	b->region.base = addr;
	b->region.len = b->size;
	int r = bus_register(pci_bus_trap(dev->bus), bar_space(b), &b->region);
	if (r < 0) {
		/* The guest put it on top of another BAR: real hardware
		 * would decode both; we decode the first and say so. */
		if (!b->failed) /* rate-limited: a guest can flip BARs */
			log_rl_at(&dev->bar_log_rl, LOG_WARN,
				  "%s: %s at 0x%llx overlaps another device; not mapped", dev->name,
				  pci_res_name(i), (unsigned long long)addr);
		b->failed = true;
		return;
	}
	b->failed = false;
	b->mapped = true;
	b->addr = addr;
	if (dev->ops && dev->ops->bar_map)
		dev->ops->bar_map(dev, i, addr, true);
}

void pci_bars_update(struct pci_device *dev)
{
	uint16_t cmd = cfg_get16(dev, PCI_COMMAND);
	for (unsigned int i = 0; i < PCI_NUM_RES; i++) {
		struct pci_bar *b = &dev->bars[i];
		if (!b->size)
			continue;
		bool io = b->flags & PCI_BAR_IO;
		bool on = cmd & (io ? PCI_COMMAND_IO : PCI_COMMAND_MEMORY);
		if (i == PCI_ROM_SLOT)
			on = on && (dev->cfg[PCI_ROM_ADDRESS] & PCI_ROM_ENABLE);
		uint64_t addr = bar_addr(dev, i);
		/* Address 0 is "unassigned"; one that wraps (or leaves the
		 * 16-bit port space) cannot decode. */
		bool want =
		    on && addr != 0 && addr + b->size > addr && (!io || addr + b->size <= 0x10000);
		if (b->mapped && (!want || b->addr != addr))
			bar_unmap(dev, i);
		if (want && !b->mapped)
			bar_map(dev, i, addr);
	}
}

void pci_bars_unmap(struct pci_device *dev)
{
	for (unsigned int i = 0; i < PCI_NUM_RES; i++)
		bar_unmap(dev, i);
}

static bool overlaps(uint32_t off, uint32_t len, uint32_t start, uint32_t n)
{
	return off < start + n && start < off + len;
}

void pci_cfg_read(struct pci_device *dev, uint32_t off, uint8_t *data, uint32_t len)
{
	if (off >= PCI_CFG_SIZE || len > PCI_CFG_SIZE - off) {
		memset(data, 0xff, len);
		return;
	}
	memcpy(data, &dev->cfg[off], len);
	/* STATUS.INTERRUPT follows the device's INTx request live. */
	if (overlaps(off, len, PCI_STATUS, 1) && atomic_load(&dev->intx_status))
		data[PCI_STATUS - off] |= PCI_STATUS_INTERRUPT;
	if (dev->ops && dev->ops->cfg_read)
		dev->ops->cfg_read(dev, off, data, len);
}

void pci_cfg_write(struct pci_device *dev, uint32_t off, const uint8_t *data, uint32_t len)
{
	if (off >= PCI_CFG_SIZE || len > PCI_CFG_SIZE - off)
		return;
	for (uint32_t i = 0; i < len; i++) {
		uint8_t m = dev->wmask[off + i];
		dev->cfg[off + i] = (uint8_t)((dev->cfg[off + i] & ~m) | (data[i] & m));
	}
	if (overlaps(off, len, PCI_COMMAND, 2)) {
		pci_bars_update(dev);
		pci_intx_update(dev);
	} else if (overlaps(off, len, PCI_BAR0, 4 * PCI_NUM_BARS) ||
		   (dev->bars[PCI_ROM_SLOT].size && overlaps(off, len, PCI_ROM_ADDRESS, 4))) {
		pci_bars_update(dev);
	}
	if (dev->msix)
		pci_msix_cfg_write(dev, off, len);
	if (dev->ops && dev->ops->cfg_write)
		dev->ops->cfg_write(dev, off, len);
}
