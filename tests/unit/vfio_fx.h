// SPDX-License-Identifier: Apache-2.0
/* The fixture of the VFIO tests (test_vfio.c, test_review_vfio.c): a fake
 * device fd (config and BAR bytes in arrays, SET_IRQS calls recorded, the
 * ROM region after the BARs), a fake PCI host recording routes, irqfds and
 * injections, KVM memory slots, and fx_setup/fx_teardown/fx_add. Included
 * once per test program. */
#ifndef SKIFF_TEST_VFIO_FX_H
#define SKIFF_TEST_VFIO_FX_H

#define FV_BAR_BYTES 0x20000
#define REGION(i)    ((uint64_t)(i) << 40)

struct fv_call {
	unsigned int index;
	uint32_t flags;
	unsigned int start, count;
	int32_t fd0;
	int32_t fds[32]; /* the first 32 eventfds */
};

struct fake_vfio {
	uint8_t cfg[256];
	struct vfio_region regions[VFIO_PCI_NUM_REGIONS];
	uint8_t bar[PCI_NUM_RES][FV_BAR_BYTES]; /* the ROM region last */
	uint32_t irqs[VFIO_PCI_NUM_IRQS];
	struct fv_call calls[32];
	int nr_calls;
	int resets, closed, bar_reads, bar_writes, maps, unmaps;
	int reset_ret;	       /* what reset answers */
	unsigned int msi_give; /* MSI vectors the host can give; 0: any */
};

static int fv_region_info(void *h, unsigned int index, struct vfio_region *out)
{
	struct fake_vfio *f = h;
	if (index >= VFIO_PCI_NUM_REGIONS)
		return -EINVAL;
	*out = f->regions[index];
	out->offset = REGION(index);
	return 0;
}

static uint32_t fv_irq_count(void *h, unsigned int index)
{
	return ((struct fake_vfio *)h)->irqs[index];
}

static int fv_set_irqs(void *h, unsigned int index, uint32_t flags, unsigned int start,
		       unsigned int count, const int32_t *fds)
{
	struct fake_vfio *f = h;
	if (f->nr_calls < 32) {
		struct fv_call *c = &f->calls[f->nr_calls++];
		*c = (struct fv_call){index, flags, start, count, count && fds ? fds[0] : -1, {0}};
		for (unsigned int i = 0; fds && i < count && i < 32; i++)
			c->fds[i] = fds[i];
	}
	/* VFIO answers how many it could give, as the kernel does. */
	if (index == VFIO_PCI_MSI_IRQ_INDEX && f->msi_give && count > f->msi_give)
		return (int)f->msi_give;
	return 0;
}

static int fv_reset(void *h)
{
	((struct fake_vfio *)h)->resets++;
	return ((struct fake_vfio *)h)->reset_ret;
}

/* The byte range of the fake's memory at fd offset off, or NULL. */
static uint8_t *fv_bytes(struct fake_vfio *f, uint64_t off, size_t len)
{
	unsigned int index = (unsigned int)(off >> 40);
	uint64_t rel = off & ((1ull << 40) - 1);
	if (index == VFIO_PCI_CONFIG_REGION_INDEX)
		return rel + len <= sizeof(f->cfg) ? f->cfg + rel : NULL;
	if (index < PCI_NUM_RES && rel + len <= FV_BAR_BYTES)
		return f->bar[index] + rel;
	return NULL;
}

static ssize_t fv_pread(void *h, void *buf, size_t len, uint64_t off)
{
	struct fake_vfio *f = h;
	uint8_t *p = fv_bytes(f, off, len);
	if (!p)
		return -EINVAL;
	if (off >> 40 < PCI_NUM_BARS)
		f->bar_reads++;
	memcpy(buf, p, len);
	return (ssize_t)len;
}

static ssize_t fv_pwrite(void *h, const void *buf, size_t len, uint64_t off)
{
	struct fake_vfio *f = h;
	uint8_t *p = fv_bytes(f, off, len);
	if (!p)
		return -EINVAL;
	if (off >> 40 < PCI_NUM_BARS)
		f->bar_writes++;
	memcpy(p, buf, len);
	return (ssize_t)len;
}

static void *fv_mmap(void *h, uint64_t off, uint64_t len)
{
	struct fake_vfio *f = h;
	uint8_t *p = fv_bytes(f, off, len);
	f->maps += p != NULL;
	return p;
}

static void fv_munmap(void *h, void *p, uint64_t len)
{
	(void)p;
	(void)len;
	((struct fake_vfio *)h)->unmaps++;
}

static int fv_group_fd(void *h)
{
	(void)h;
	return 77;
}

static void fv_close(void *h)
{
	((struct fake_vfio *)h)->closed++;
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

static void put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* Like QEMU's e1000e: BAR0 128 KiB and BAR1 128 KiB 32-bit memory, BAR2
 * 32 bytes of I/O, BAR3 16 KiB 64-bit prefetchable (slots 3-4) holding the
 * MSI-X table (5 vectors, offset 0) and PBA (0x2000). Capabilities: PM at
 * 0x40, MSI (64-bit, maskable: 24 bytes) at 0x50, PCIe at 0x70, MSI-X at
 * 0xb0, vendor (6 bytes) at 0xc8; the device's own registers in between
 * and from 0xd0. INTA, ROM present. */
static void fv_init(struct fake_vfio *f)
{
	memset(f, 0, sizeof(*f));
	uint8_t *c = f->cfg;
	put16(c + PCI_VENDOR_ID, 0x8086);
	put16(c + PCI_DEVICE_ID, 0x10d3);
	put16(c + PCI_COMMAND, 0x0000);
	put16(c + PCI_STATUS, PCI_STATUS_CAP_LIST | 0x0010 | 0x0100 /* parity error */);
	c[PCI_REVISION_ID] = 0x05;
	c[0x0b] = 0x02; /* network controller */
	put32(c + PCI_BAR0, 0xfeb80000);
	put32(c + PCI_BAR0 + 4, 0xfeba0000);
	put32(c + PCI_BAR0 + 8, 0xc041);
	put32(c + PCI_BAR0 + 12, 0xfebc000c);
	put32(c + PCI_BAR0 + 16, 0);
	put16(c + PCI_SUBSYSTEM_VENDOR_ID, 0x8086);
	put16(c + PCI_SUBSYSTEM_ID, 0x0000);
	put32(c + PCI_ROM_ADDRESS, 0xfeb40000);
	c[PCI_CAPABILITY_LIST] = 0x40;
	c[PCI_INTERRUPT_PIN] = 1;
	c[0x40] = PCI_CAP_ID_PM, c[0x41] = 0x50;
	c[0x50] = PCI_CAP_ID_MSI, c[0x51] = 0x70;
	put16(c + 0x52, 0x0180 | 0x6); /* 64-bit, per-vector mask, 8 vectors */
	c[0x70] = PCI_CAP_ID_EXP, c[0x71] = 0xb0;
	put16(c + 0x72, 0x0002);
	put32(c + 0x74, 0x10008cc0); /* device capabilities: FLR */
	c[0xb0] = PCI_CAP_ID_MSIX, c[0xb1] = 0xc8;
	put16(c + 0xb2, 4); /* 5 vectors */
	put32(c + 0xb4, 0x0000 | 3);
	put32(c + 0xb8, 0x2000 | 3);
	c[0xc8] = PCI_CAP_ID_VNDR, c[0xc9] = 0, c[0xca] = 6;
	uint32_t rf = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE;
	f->regions[0] =
	    (struct vfio_region){.flags = rf | VFIO_REGION_INFO_FLAG_MMAP, .size = 0x20000};
	f->regions[1] =
	    (struct vfio_region){.flags = rf | VFIO_REGION_INFO_FLAG_MMAP, .size = 0x20000};
	f->regions[2] = (struct vfio_region){.flags = rf, .size = 0x20};
	f->regions[3] =
	    (struct vfio_region){.flags = rf | VFIO_REGION_INFO_FLAG_MMAP, .size = 0x4000};
	f->regions[VFIO_PCI_ROM_REGION_INDEX] =
	    (struct vfio_region){.flags = VFIO_REGION_INFO_FLAG_READ, .size = 0x40000};
	f->regions[VFIO_PCI_CONFIG_REGION_INDEX] = (struct vfio_region){.flags = rf, .size = 256};
	f->irqs[VFIO_PCI_INTX_IRQ_INDEX] = 1;
	f->irqs[VFIO_PCI_MSI_IRQ_INDEX] = 1;
	f->irqs[VFIO_PCI_MSIX_IRQ_INDEX] = 5;
}

struct fake_slot {
	uint64_t gpa, size;
	void *hva;
	bool used;
};

struct fx {
	struct bus trap;
	struct fake_host host;
	struct pci_bus *pci;
	struct fake_vfio dev;
	struct fake_slot slots[16];
	struct vfio_pci *v;
	uint16_t cmd_at_add; /* the device's command register at the last slot add */
	int fail_del;	     /* the next slot deletes that fail with -EIO */
	int kvm_group;	     /* the group KVM's VFIO device was told of, or -1 */
	int kvm_ret;	     /* what telling it answers */
};

static int kvm_vfio_add(void *h, int group_fd)
{
	struct fx *f = h;
	f->kvm_group = group_fd;
	return f->kvm_ret;
}

static int slot_add(void *h, uint64_t gpa, uint64_t size, void *hva)
{
	struct fx *f = h;
	memcpy(&f->cmd_at_add, f->dev.cfg + PCI_COMMAND, 2);
	for (int i = 0; i < 16; i++) {
		if (!f->slots[i].used) {
			f->slots[i] = (struct fake_slot){gpa, size, hva, true};
			return i + 2;
		}
	}
	return -ENOSPC;
}

static int slot_del(void *h, int slot)
{
	struct fx *f = h;
	assert_true(slot >= 2 && slot < 18 && f->slots[slot - 2].used);
	if (f->fail_del > 0) {
		f->fail_del--;
		return -EIO;
	}
	f->slots[slot - 2].used = false;
	return 0;
}

static int nr_slots(const struct fx *f)
{
	int n = 0;
	for (int i = 0; i < 16; i++)
		n += f->slots[i].used;
	return n;
}

/* The slot at gpa, or NULL. */
static __attribute__((unused)) struct fake_slot *slot_at(struct fx *f, uint64_t gpa)
{
	for (int i = 0; i < 16; i++)
		if (f->slots[i].used && f->slots[i].gpa == gpa)
			return &f->slots[i];
	return NULL;
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	bus_init(&f->trap);
	f->pci = pci_bus_create_with(&f->trap, &fake_host_ops, &f->host);
	f->host.resample_efd = f->host.resample_trigger = -1;
	f->kvm_group = -1;
	fv_init(&f->dev);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	/* The device manager's order: stop, the bus, then the device. */
	if (f->v)
		vfio_pci_stop(f->v);
	pci_bus_destroy(f->pci);
	vfio_pci_destroy(f->v);
	assert_int_equal(nr_slots(f), 0); /* every slot removed */
	assert_int_equal(f->trap.space[BUS_MMIO].count, 0);
	assert_int_equal(f->dev.maps, f->dev.unmaps);
	assert_int_equal(f->dev.closed, 1);
	bus_destroy(&f->trap);
	free(f);
	return 0;
}

/* Creates the passthrough function over the fake, adds it (slot 1) and
 * starts it. */
static void fx_add(struct fx *f, bool mmap)
{
	struct vfio_ctx ctx = {.mem = NULL,
			       .host = f,
			       .memslot_add = slot_add,
			       .memslot_del = slot_del,
			       .kvm_vfio_add = kvm_vfio_add};
	char err[200] = "";
	int r = vfio_pci_create_with(&fv_ops, &f->dev, "0000:00:04.0", mmap, &ctx, &f->v, err,
				     sizeof(err));
	if (r < 0)
		fail_msg("create: %s", err);
	assert_int_equal(pci_bus_add_device(f->pci, vfio_pci_dev(f->v), err, sizeof(err)), 0);
	assert_int_equal(vfio_pci_start(f->v, err, sizeof(err)), 0);
}

#endif
