// SPDX-License-Identifier: Apache-2.0
/* VFIO passthrough (src/devices/vfio/) over a fake device whose configuration
 * space, regions and interrupt counts come from the input: building the
 * virtual config space from a hostile device (capability lists that loop,
 * overlap or run off the end, odd BARs, MSI-X tables anywhere), then the
 * guest's config cycles (BAR sizing and moves, the command register, MSI
 * and MSI-X set-up, FLR, the device's own registers), MMIO on the BARs
 * (the MSI-X table at every width and offset, mmap on or off), memory slot
 * deletes that fail, and stop/start.
 *
 * Checked beyond ASan/UBSan: live memory slots never overlap (unless a
 * delete failed) and always point into the device's mapped BARs; every slot is gone after destroy;
 * the trap table is empty after the bus goes. */
#include <errno.h>
#include <linux/vfio.h>
#include <string.h>

#include "core/bus.h"
#include "fake_pci_host.h"
#include "fuzz_common.h"
#include "pci/pci.h"
#include "devices/vfio/vfio.h"
#include "devices/vfio/vfio_dev.h"

#define FV_BAR	  0x10000u /* bytes behind each BAR region */
#define FV_SLOTS  32
#define REGION(i) ((uint64_t)(i) << 40)

struct fv {
	uint8_t cfg[256];
	struct vfio_region regions[VFIO_PCI_NUM_REGIONS];
	uint8_t bar[PCI_NUM_BARS][FV_BAR];
	uint32_t irqs[VFIO_PCI_NUM_IRQS];
	struct {
		uint64_t gpa, size;
		void *hva;
		bool used;
	} slots[FV_SLOTS];
	int fail_del;
	bool del_failed; /* some delete failed this run */
	int maps, unmaps;
};

static struct fv fv;

static int fv_region_info(void *h, unsigned int index, struct vfio_region *out)
{
	(void)h;
	if (index >= VFIO_PCI_NUM_REGIONS)
		return -EINVAL;
	*out = fv.regions[index];
	out->offset = REGION(index);
	return 0;
}

static uint32_t fv_irq_count(void *h, unsigned int index)
{
	(void)h;
	return index < VFIO_PCI_NUM_IRQS ? fv.irqs[index] : 0;
}

static int fv_set_irqs(void *h, unsigned int index, uint32_t flags, unsigned int start,
		       unsigned int count, const int32_t *fds)
{
	(void)h;
	(void)flags;
	(void)fds;
	FZ_CHECK(index < VFIO_PCI_NUM_IRQS && start + count <= fv.irqs[index]);
	return fz_u8() == 0xee ? -EINVAL : 0;
}

static int fv_reset(void *h)
{
	(void)h;
	return fz_u8() == 0xee ? -EIO : 0;
}

static uint8_t *fv_bytes(uint64_t off, size_t len)
{
	unsigned int index = (unsigned int)(off >> 40);
	uint64_t rel = off & ((1ull << 40) - 1);
	if (index == VFIO_PCI_CONFIG_REGION_INDEX)
		return rel + len <= sizeof(fv.cfg) ? fv.cfg + rel : NULL;
	if (index < PCI_NUM_BARS && rel + len <= FV_BAR && rel + len <= fv.regions[index].size)
		return fv.bar[index] + rel;
	return NULL;
}

static ssize_t fv_pread(void *h, void *buf, size_t len, uint64_t off)
{
	(void)h;
	uint8_t *p = fv_bytes(off, len);
	if (!p)
		return -EINVAL;
	memcpy(buf, p, len);
	return (ssize_t)len;
}

static ssize_t fv_pwrite(void *h, const void *buf, size_t len, uint64_t off)
{
	(void)h;
	uint8_t *p = fv_bytes(off, len);
	if (!p)
		return -EINVAL;
	memcpy(p, buf, len);
	return (ssize_t)len;
}

static void *fv_mmap(void *h, uint64_t off, uint64_t len)
{
	(void)h;
	uint8_t *p = fv_bytes(off, len);
	fv.maps += p != NULL;
	return p;
}

static void fv_munmap(void *h, void *p, uint64_t len)
{
	(void)h;
	(void)p;
	(void)len;
	fv.unmaps++;
}

static int fv_group_fd(void *h)
{
	(void)h;
	return 99;
}

static void fv_close(void *h)
{
	(void)h;
}

static const struct vfio_dev_ops fv_ops = {
    .region_info = fv_region_info,
    .irq_count = fv_irq_count,
    .set_irqs = fv_set_irqs,
    .reset = fv_reset,
    .pread = fv_pread,
    .pwrite = fv_pwrite,
    .mmap = fv_mmap,
    .munmap = fv_munmap,
    .group_fd = fv_group_fd,
    .close = fv_close,
};

static bool in_bars(const void *p, uint64_t len)
{
	const uint8_t *b = (const uint8_t *)fv.bar, *q = p;
	return q >= b && q + len <= b + sizeof(fv.bar);
}

static int slot_add(void *h, uint64_t gpa, uint64_t size, void *hva)
{
	(void)h;
	FZ_CHECK(size && in_bars(hva, size));
	/* KVM refuses an overlap; only a slot left behind by a failed delete
	 * (another BAR moved onto it) may cause one. */
	for (int i = 0; i < FV_SLOTS; i++) {
		if (fv.slots[i].used && gpa + size > fv.slots[i].gpa &&
		    fv.slots[i].gpa + fv.slots[i].size > gpa) {
			FZ_CHECK(fv.del_failed);
			return -EEXIST;
		}
	}
	for (int i = 0; i < FV_SLOTS; i++) {
		if (!fv.slots[i].used) {
			fv.slots[i].gpa = gpa;
			fv.slots[i].size = size;
			fv.slots[i].hva = hva;
			fv.slots[i].used = true;
			return i;
		}
	}
	return -ENOSPC;
}

static int slot_del(void *h, int slot)
{
	(void)h;
	FZ_CHECK(slot >= 0 && slot < FV_SLOTS && fv.slots[slot].used);
	if (fv.fail_del > 0) {
		fv.fail_del--;
		fv.del_failed = true;
		return -EIO;
	}
	fv.slots[slot].used = false;
	return 0;
}

static int kvm_vfio_add(void *h, int group_fd)
{
	(void)h;
	FZ_CHECK(group_fd == 99);
	return 0;
}

/* The device from the input: config bytes (usually with a plausible
 * header), region sizes and flags, interrupt counts. */
static void fv_build(void)
{
	memset(&fv, 0, sizeof(fv));
	fz_bytes(fv.cfg, sizeof(fv.cfg));
	if (fz_u8() & 1) {
		fv.cfg[PCI_HEADER_TYPE] = 0;
		fv.cfg[PCI_STATUS] |= PCI_STATUS_CAP_LIST;
	}
	uint32_t rf = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE;
	for (unsigned int i = 0; i < PCI_NUM_BARS; i++) {
		uint8_t k = fz_u8();
		uint64_t size =
		    k & 0x80 ? (uint64_t)fz_u32() << (k & 7) : (uint64_t)(k & 0x1f) << 11;
		fv.regions[i] = (struct vfio_region){
		    .flags = rf | (k & 0x40 ? VFIO_REGION_INFO_FLAG_MMAP : 0), .size = size};
		if (k & 0x20) {
			fv.regions[i].nr_areas = 1 + fz_u8() % 3;
			for (unsigned int a = 0; a < fv.regions[i].nr_areas; a++) {
				fv.regions[i].areas[a].offset = fz_u16() & ~0xfffu;
				fv.regions[i].areas[a].size = fz_u16();
			}
		}
	}
	fv.regions[VFIO_PCI_CONFIG_REGION_INDEX] = (struct vfio_region){.flags = rf, .size = 256};
	fv.irqs[VFIO_PCI_INTX_IRQ_INDEX] = fz_u8() & 1;
	fv.irqs[VFIO_PCI_MSI_IRQ_INDEX] = fz_u8() % 33;
	fv.irqs[VFIO_PCI_MSIX_IRQ_INDEX] = fz_u8() % 65;
}

static void cfg_access(struct bus *b)
{
	uint8_t sel = fz_u8();
	static const uint32_t widths[] = {1, 2, 4};
	uint32_t len = widths[(sel >> 1) % 3], reg = fz_u8();
	uint32_t v = sel & 0x10 ? 0xffffffff : fz_u32();
	uint32_t a = cfg_addr(1, reg);
	bus_dispatch(b, BUS_PIO, 0xcf8, &a, 4, true, 0);
	bus_dispatch(b, BUS_PIO, 0xcfc + (reg & 3), &v, len, sel & 1, 0);
}

/* An access inside one of the device's BARs (where it is now), or near. */
static void bar_access(struct bus *b, struct pci_device *d)
{
	uint8_t sel = fz_u8();
	const struct pci_bar *bar = &d->bars[sel % PCI_NUM_BARS];
	uint64_t v = fz_u64(), a = bar->addr + fz_u32() % (bar->size + 16);
	bus_dispatch(b, bar->flags & PCI_BAR_IO ? BUS_PIO : BUS_MMIO, a, &v, 1 + fz_u8() % 8,
		     sel & 0x80, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bus trap;
	struct fake_host host;
	fz_begin_noram(data, size);
	fv_build();
	memset(&host, 0, sizeof(host));
	host.resample_efd = host.resample_trigger = -1;
	bus_init(&trap);
	struct pci_bus *pci = pci_bus_create_with(&trap, &fake_host_ops, &host);
	if (!pci)
		abort();
	struct vfio_ctx ctx = {.host = NULL,
			       .memslot_add = slot_add,
			       .memslot_del = slot_del,
			       .kvm_vfio_add = kvm_vfio_add};
	struct vfio_pci *v = NULL;
	char err[200];
	bool mmap = fz_u8() & 1;
	if (vfio_pci_create_with(&fv_ops, NULL, "0000:00:04.0", mmap, &ctx, &v, err, sizeof(err)) <
	    0) {
		FZ_CHECK(err[0] && fv.maps == fv.unmaps);
		goto out;
	}
	/* BARs too big for the window together: refused with a reason. */
	err[0] = 0;
	if (pci_bus_add_device(pci, vfio_pci_dev(v), err, sizeof(err)) < 0 ||
	    vfio_pci_start(v, err, sizeof(err)) < 0) {
		FZ_CHECK(err[0]);
		goto out;
	}
	struct pci_device *d = vfio_pci_dev(v);
	for (unsigned int steps = 0; fz_more() && steps < 512; steps++) {
		uint8_t op = fz_u8();
		switch (op % 8) {
		case 0:
		case 1:
		case 2:
			cfg_access(&trap);
			break;
		case 3:
		case 4:
			bar_access(&trap, d);
			break;
		case 5:
			fv.fail_del = op >> 6;
			break;
		case 6:
			/* The device changes its own config registers. */
			fv.cfg[fz_u8()] = fz_u8();
			break;
		default:
			vfio_pci_stop(v);
			/* It may fail (INTx refused): with a reason. */
			err[0] = 0;
			if (vfio_pci_start(v, err, sizeof(err)) < 0)
				FZ_CHECK(err[0]);
		}
	}
out:
	if (v)
		vfio_pci_stop(v);
	fv.fail_del = 0;
	pci_bus_destroy(pci);
	vfio_pci_destroy(v);
	for (int i = 0; i < FV_SLOTS; i++)
		FZ_CHECK(!fv.slots[i].used);
	FZ_CHECK(trap.space[BUS_MMIO].count == 0);
	bus_destroy(&trap);
	return 0;
}
