// SPDX-License-Identifier: Apache-2.0
/* The passthrough function's configuration space: built once from the
 * device's own, then served by src/pci from the image. The guest can only
 * change what the write masks allow; writes that matter to the device (the
 * command register) are forwarded, and the MSI and MSI-X controls drive
 * the interrupt set-up. Everything else stays virtual: the BARs (skiff's
 * addresses, not the host's), the ROM BAR (hidden, reads 0), and the
 * capability list, which keeps only what skiff virtualizes or can show
 * read-only, each at the device's offset. Bytes past the header in no
 * capability are the device's own registers and pass through, as QEMU
 * does. */
#include <errno.h>
#include <linux/vfio.h>
#include <stdio.h>
#include <string.h>

#include "devices/vfio/vfio_priv.h"

/* Command bits passed to the device: I/O and memory decoding, bus
 * mastering (DMA), parity and SERR reporting, INTx disable. */
#define VFIO_CMD_PASS	0x0547
#define CAP_WALK_MAX	48   /* 256 bytes hold at most 48 capabilities */
#define PCIE_CAP_LEN	0x3c /* version 2, with the slot and root registers */
#define PCIE_CAP_V1	20   /* linux/pci_regs.h PCI_CAP_EXP_ENDPOINT_SIZEOF_V1 */
#define PCIE_DEVCAP	0x04
#define PCIE_DEVCAP_FLR 0x10000000u
#define PCIE_DEVCTL	0x08
#define PCIE_DEVCTL_FLR 0x8000u

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return get16(p) | (uint32_t)get16(p + 2) << 16;
}

static bool overlaps(uint32_t off, uint32_t len, uint32_t start, uint32_t n)
{
	return off < start + n && start < off + len;
}

/* Copies a kept capability to its device offset and links it in the
 * device's order: offsets stay the device's, so the device-specific bytes
 * around them can pass through where the device has them. */
static int cap_put(struct vfio_pci *v, unsigned int off, const uint8_t *cap, unsigned int len)
{
	struct pci_device *d = &v->pci;
	if (off + len > PCI_CFG_SIZE)
		return -1;
	memcpy(&d->cfg[off], cap, len);
	d->cfg[off + 1] = 0;
	if (d->cap_last)
		d->cfg[d->cap_last + 1] = (uint8_t)off;
	else
		d->cfg[PCI_CAPABILITY_LIST] = (uint8_t)off;
	d->cfg[PCI_STATUS] |= PCI_STATUS_CAP_LIST;
	d->cap_last = (uint8_t)off;
	return (int)off;
}

/* MSI, 32- or 64-bit and with per-vector masking as the device has it;
 * as many vectors as both the device (Multiple Message Capable) and VFIO
 * (which counts 2^MMC) offer, up to 32. */
static int cap_msi(struct vfio_pci *v, unsigned int at, const uint8_t *dc, char *err, size_t errlen)
{
	uint16_t dctrl = get16(dc + 2);
	unsigned int log_max = (dctrl >> 1) & 7;
	uint32_t n = v->ops->irq_count(v->h, VFIO_PCI_MSI_IRQ_INDEX);
	if (log_max > VFIO_MSI_LOG_MAX)
		log_max = VFIO_MSI_LOG_MAX;
	while (log_max && (1u << log_max) > n)
		log_max--;
	uint16_t ctrl = (uint16_t)((dctrl & 0x0180) | log_max << 1);
	if (vfio_msi_init(v, ctrl, log_max) < 0) {
		snprintf(err, errlen, "%s: cannot make MSI eventfds: %s", v->name, strerror(errno));
		return -1;
	}
	struct vfio_msi *m = &v->msi;
	uint8_t cap[24] = {PCI_CAP_ID_MSI, 0, (uint8_t)ctrl, (uint8_t)(ctrl >> 8)};
	int off = cap_put(v, at, cap, m->len);
	if (off < 0)
		return -1;
	/* Enable and Multiple Message Enable; the address (dword aligned),
	 * the data; a mask bit per offered vector. */
	static const uint8_t m_ctrl[2] = {0x71, 0},
			     m_addr[8] = {0xfc, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	static const uint8_t m_data[2] = {0xff, 0xff};
	pci_device_set_wmask(&v->pci, (uint32_t)off + 2, m_ctrl, 2);
	pci_device_set_wmask(&v->pci, (uint32_t)off + 4, m_addr, m->is64 ? 8 : 4);
	pci_device_set_wmask(&v->pci, (uint32_t)off + m->data_off, m_data, 2);
	if (m->maskable) {
		uint32_t bits =
		    log_max == VFIO_MSI_LOG_MAX ? 0xffffffffu : (1u << (1u << log_max)) - 1;
		uint8_t m_mask[4] = {(uint8_t)bits, (uint8_t)(bits >> 8), (uint8_t)(bits >> 16),
				     (uint8_t)(bits >> 24)};
		pci_device_set_wmask(&v->pci, (uint32_t)off + m->mask_off, m_mask, 4);
	}
	m->cap = (unsigned int)off;
	return 0;
}

/* MSI-X: the device's table size and table/PBA locations (BAR numbers are
 * the guest's too), enable and function mask writable. */
static int cap_msix(struct vfio_pci *v, unsigned int at, const uint8_t *dc, char *err,
		    size_t errlen)
{
	uint8_t cap[12];
	memcpy(cap, dc, sizeof(cap));
	cap[3] = dc[3] & 0x07; /* enable and mask start clear */
	int off = cap_put(v, at, cap, sizeof(cap));
	if (off < 0) {
		snprintf(err, errlen, "%s: no room for the MSI-X capability", v->name);
		return -1;
	}
	static const uint8_t m_ctrl[2] = {0, 0xc0};
	pci_device_set_wmask(&v->pci, (uint32_t)off + 2, m_ctrl, 2);
	v->msix.cap = (unsigned int)off;
	return vfio_msix_init(v, dc, err, errlen);
}

/* Read-only (link and device facts for the driver) but for DevCtl's
 * Initiate FLR when the device can: the guest's function reset reaches
 * VFIO as one (vfio_flr). */
static int cap_exp(struct vfio_pci *v, unsigned int at, const uint8_t *dc, unsigned int len)
{
	int off = cap_put(v, at, dc, len);
	if (off < 0)
		return -1;
	v->exp_cap = (unsigned int)off;
	/* A capability cut short (at the end of the space) has no DevCap/DevCtl. */
	if (len >= PCIE_DEVCTL + 2 && (get32(dc + PCIE_DEVCAP) & PCIE_DEVCAP_FLR)) {
		static const uint8_t m_flr[2] = {0, PCIE_DEVCTL_FLR >> 8};
		pci_device_set_wmask(&v->pci, (uint32_t)off + PCIE_DEVCTL, m_flr, 2);
	}
	return 0;
}

/* A capability's length in the device's config space: fixed by its ID,
 * said by the capability itself, or (unknown IDs) up to the next
 * capability or the end, as QEMU sizes them. PCI Express is cut at the
 * next capability or the end: a version 1 endpoint has 20 bytes, and
 * devices place it where only those fit (QEMU's e1000e at 0xe0). */
static unsigned int cap_len(const uint8_t *dc, unsigned int off, unsigned int next)
{
	static const uint8_t fixed[] = {
	    [PCI_CAP_ID_PM] = 8,    [0x03 /* VPD */] = 8,   [0x04 /* slot ID */] = 4,
	    [0x06 /* CHSWP */] = 4, [0x0d /* SSVID */] = 8, [0x12 /* SATA */] = 8,
	    [0x13 /* AF */] = 6,    [PCI_CAP_ID_MSIX] = 12,
	};
	const uint8_t *c = dc + off;
	uint16_t ctrl = get16(c + 2);
	if (c[0] == PCI_CAP_ID_MSI)
		return (ctrl & 0x80 ? 14 : 10) + (ctrl & 0x100 ? 10 : 0);
	if (c[0] == PCI_CAP_ID_EXP) {
		unsigned int len = (c[2] & 0xf) >= 2 ? PCIE_CAP_LEN : PCIE_CAP_V1;
		return len < next - off ? len : next - off;
	}
	if (c[0] == PCI_CAP_ID_VNDR)
		return c[2] > 3 ? c[2] : 3;
	if (c[0] < sizeof(fixed) && fixed[c[0]])
		return fixed[c[0]];
	return next - off;
}

/* The device's capability offsets in list order (bounded, in range, no
 * loop past CAP_WALK_MAX); their number. */
static unsigned int caps_list(const uint8_t *dc, uint8_t offs[CAP_WALK_MAX])
{
	unsigned int n = 0;
	if (!(get16(dc + PCI_STATUS) & PCI_STATUS_CAP_LIST))
		return 0;
	for (unsigned int off = dc[PCI_CAPABILITY_LIST] & 0xfc;
	     n < CAP_WALK_MAX && off >= PCI_CAP_START; off = dc[off + 1] & 0xfc)
		offs[n++] = (uint8_t)off;
	return n;
}

/* Bytes [off, off + len) as the capability's (not the device's own
 * registers); -1 if a kept capability would overlap another one. */
static int cap_claim(uint8_t *owner, unsigned int off, unsigned int len, bool kept)
{
	for (unsigned int i = off; i < off + len && i < PCI_CFG_SIZE; i++) {
		if (kept && owner[i] == 2)
			return -1;
		if (owner[i] < 2)
			owner[i] = kept ? 2 : 1;
	}
	return 0;
}

static int cap_keep(struct vfio_pci *v, unsigned int off, unsigned int len, const uint8_t *dc,
		    char *err, size_t errlen)
{
	const uint8_t *c = dc + off;
	if (c[0] == PCI_CAP_ID_MSIX && !v->msix.cap)
		return cap_msix(v, off, c, err, errlen);
	/* MSI only if VFIO offers it: a capability the host cannot enable
	 * would fail every guest attempt. */
	if (c[0] == PCI_CAP_ID_MSI && !v->msi.cap &&
	    v->ops->irq_count(v->h, VFIO_PCI_MSI_IRQ_INDEX) > 0)
		return cap_msi(v, off, c, err, errlen);
	if (c[0] == PCI_CAP_ID_EXP)
		return cap_exp(v, off, c, len);
	return 1; /* hidden */
}

/* Walks the device's list and keeps what skiff virtualizes, each at its
 * device offset. Power management and the rest are hidden (their bytes
 * read 0): skiff cannot honour D-state changes the guest would expect to
 * stick. Bytes past the header that belong to no capability are the
 * device's own registers and pass through (v->pass). */
static int caps_build(struct vfio_pci *v, const uint8_t *dc, char *err, size_t errlen)
{
	uint8_t offs[CAP_WALK_MAX], owner[PCI_CFG_SIZE] = {0};
	unsigned int n = caps_list(dc, offs);
	for (unsigned int i = 0; i < n; i++) {
		unsigned int next = PCI_CFG_SIZE;
		for (unsigned int j = 0; j < n; j++)
			if (offs[j] > offs[i] && offs[j] < next)
				next = offs[j];
		unsigned int len = cap_len(dc, offs[i], next);
		bool kept = dc[offs[i]] == PCI_CAP_ID_MSI || dc[offs[i]] == PCI_CAP_ID_MSIX ||
			    dc[offs[i]] == PCI_CAP_ID_EXP;
		int r = cap_claim(owner, offs[i], len, kept) < 0 ||
				(kept && offs[i] + len > PCI_CFG_SIZE)
			    ? -1
			    : cap_keep(v, offs[i], len, dc, err, errlen);
		if (r < 0) {
			if (!err[0])
				snprintf(err, errlen, "%s: capability at 0x%x overlaps another",
					 v->name, offs[i]);
			return -1;
		}
	}
	static const uint8_t all = 0xff;
	for (unsigned int i = PCI_CAP_START; i < PCI_CFG_SIZE; i++) {
		v->pass[i] = !owner[i];
		if (v->pass[i])
			pci_device_set_wmask(&v->pci, i, &all, 1);
	}
	return 0;
}

int vfio_cfg_build(struct vfio_pci *v, char *err, size_t errlen)
{
	struct vfio_region r;
	uint8_t dc[PCI_CFG_SIZE];
	err[0] = 0;
	if (v->ops->region_info(v->h, VFIO_PCI_CONFIG_REGION_INDEX, &r) < 0 ||
	    v->ops->pread(v->h, dc, sizeof(dc), r.offset) != (ssize_t)sizeof(dc)) {
		snprintf(err, errlen, "%s: cannot read its configuration space", v->name);
		return -1;
	}
	v->cfg_offset = r.offset;
	if ((dc[PCI_HEADER_TYPE] & 0x7f) != 0) {
		snprintf(err, errlen, "%s: not a type-0 function (a bridge?)", v->name);
		return -1;
	}
	pci_device_init(&v->pci, v->name, get16(dc + PCI_VENDOR_ID), get16(dc + PCI_DEVICE_ID),
			get32(dc + PCI_REVISION_ID) >> 8, dc[PCI_REVISION_ID]);
	pci_device_set_subsystem(&v->pci, get16(dc + PCI_SUBSYSTEM_VENDOR_ID),
				 get16(dc + PCI_SUBSYSTEM_ID));
	/* Status: only the static facts (66 MHz, fast back-to-back, DEVSEL
	 * timing); the capability bit follows our own list. */
	uint16_t st = get16(dc + PCI_STATUS) & 0x06a0;
	memcpy(&v->pci.cfg[PCI_STATUS], &st, 2);
	v->intx.present =
	    dc[PCI_INTERRUPT_PIN] != 0 && v->ops->irq_count(v->h, VFIO_PCI_INTX_IRQ_INDEX) > 0;
	if (caps_build(v, dc, err, errlen) < 0)
		return -1;
	/* After the capabilities: the BAR slots depend on where the MSI-X
	 * table and PBA are. */
	return vfio_bars_init(v, dc, err, errlen);
}

void vfio_cmd_forward(struct vfio_pci *v)
{
	uint8_t cur[2];
	if (v->ops->pread(v->h, cur, 2, v->cfg_offset + PCI_COMMAND) != 2) {
		vfio_log(v, "reading the command register", -1);
		return;
	}
	uint16_t want =
	    (get16(cur) & ~VFIO_CMD_PASS) | (get16(&v->pci.cfg[PCI_COMMAND]) & VFIO_CMD_PASS);
	if (want == get16(cur))
		return;
	uint8_t out[2] = {(uint8_t)want, (uint8_t)(want >> 8)};
	if (v->ops->pwrite(v->h, out, 2, v->cfg_offset + PCI_COMMAND) != 2)
		vfio_log(v, "writing the command register", -1);
}

/* The next run of the device's own bytes in [*at, end): its length, *at
 * moved to its start; 0 if none. */
static uint32_t pass_run(const struct vfio_pci *v, uint32_t *at, uint32_t end)
{
	while (*at < end && !v->pass[*at])
		(*at)++;
	uint32_t n = 0;
	while (*at + n < end && v->pass[*at + n])
		n++;
	return n;
}

/* STATUS.INTERRUPT is the device's: its INTx goes through KVM's irqfd and
 * VFIO, never through skiff's line state. */
static void status_intx(struct vfio_pci *v, uint8_t *st)
{
	uint8_t d;
	if (v->ops->pread(v->h, &d, 1, v->cfg_offset + PCI_STATUS) != 1)
		return;
	*st = (uint8_t)((*st & ~PCI_STATUS_INTERRUPT) | (d & PCI_STATUS_INTERRUPT));
}

void vfio_cfg_read(struct pci_device *dev, uint32_t off, uint8_t *data, uint32_t len)
{
	struct vfio_pci *v = (struct vfio_pci *)dev;
	if (off >= PCI_CFG_SIZE || len > PCI_CFG_SIZE - off)
		return;
	if (overlaps(off, len, PCI_STATUS, 1))
		status_intx(v, &data[PCI_STATUS - off]);
	if (v->msi.maskable && overlaps(off, len, v->msi.cap + v->msi.pend_off, 4))
		vfio_msi_cfg_read(v, off, data, len);
	uint32_t at = off, n;
	while ((n = pass_run(v, &at, off + len)) > 0) {
		uint8_t *p = data + (at - off);
		if (v->ops->pread(v->h, p, n, v->cfg_offset + at) != (ssize_t)n) {
			vfio_log(v, "reading its config space", -1);
			memset(p, 0xff, n);
		}
		at += n;
	}
}

void vfio_cfg_write(struct pci_device *dev, uint32_t off, uint32_t len)
{
	struct vfio_pci *v = (struct vfio_pci *)dev;
	if (overlaps(off, len, PCI_COMMAND, 2))
		vfio_cmd_forward(v);
	if (v->msi.cap && overlaps(off, len, v->msi.cap, v->msi.len))
		vfio_msi_ctrl_write(v);
	if (v->msix.cap && overlaps(off, len, v->msix.cap + 2, 2))
		vfio_msix_ctrl_write(v);
	if (v->exp_cap && overlaps(off, len, v->exp_cap + PCIE_DEVCTL, 2) &&
	    (get16(&v->pci.cfg[v->exp_cap + PCIE_DEVCTL]) & PCIE_DEVCTL_FLR)) {
		v->pci.cfg[v->exp_cap + PCIE_DEVCTL + 1] &= (uint8_t) ~(PCIE_DEVCTL_FLR >> 8);
		vfio_flr(v);
	}
	/* The device's own registers: what the guest wrote (the write mask
	 * lets all of it into the image) goes on to the device. */
	uint32_t at = off, n;
	while (off < PCI_CFG_SIZE && (n = pass_run(v, &at, off + len)) > 0) {
		if (v->ops->pwrite(v->h, &v->pci.cfg[at], n, v->cfg_offset + at) != (ssize_t)n)
			vfio_log(v, "writing its config space", -1);
		at += n;
	}
}
