/* The passthrough function's configuration space: built once from the
 * device's own, then served by src/pci from the image. The guest can only
 * change what the write masks allow; writes that matter to the device (the
 * command register) are forwarded, and the MSI and MSI-X controls drive
 * the interrupt set-up. Everything else stays virtual: the BARs (skiff's
 * addresses, not the host's), the ROM BAR (hidden, reads 0), and the
 * capability list, which keeps only what skiff virtualizes or can show
 * read-only. */
#include <linux/vfio.h>
#include <stdio.h>
#include <string.h>

#include "vfio/vfio_priv.h"

/* Command bits passed to the device: I/O and memory decoding, bus
 * mastering (DMA), parity and SERR reporting, INTx disable. */
#define VFIO_CMD_PASS 0x0547
#define CAP_WALK_MAX  48   /* 256 bytes hold at most 48 capabilities */
#define PCIE_CAP_LEN  0x3c /* version 2; version 1 ends at 0x24 */
#define PCIE_CAP_V1   0x24

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

/* MSI with one vector and no per-vector masking, 32- or 64-bit as the
 * device is: what skiff routes. */
static int cap_msi(struct vfio_pci *v, const uint8_t *dc)
{
	v->msi.is64 = get16(dc + 2) & 0x80;
	uint8_t cap[14] = {PCI_CAP_ID_MSI, 0, v->msi.is64 ? 0x80 : 0, 0};
	uint8_t len = v->msi.is64 ? 14 : 10;
	int off = pci_device_add_cap(&v->pci, cap, len);
	if (off < 0)
		return -1;
	static const uint8_t m_ctrl[2] = {0x01, 0},
			     m_addr[8] = {0xfc, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	static const uint8_t m_data[2] = {0xff, 0xff};
	pci_device_set_wmask(&v->pci, (uint32_t)off + 2, m_ctrl, 2);
	pci_device_set_wmask(&v->pci, (uint32_t)off + 4, m_addr, v->msi.is64 ? 8 : 4);
	pci_device_set_wmask(&v->pci, (uint32_t)off + (v->msi.is64 ? 12 : 8), m_data, 2);
	v->msi.cap = (unsigned int)off;
	return 0;
}

/* MSI-X: the device's table size and table/PBA locations (BAR numbers are
 * the guest's too), enable and function mask writable. */
static int cap_msix(struct vfio_pci *v, const uint8_t *dc, char *err, size_t errlen)
{
	uint8_t cap[12];
	memcpy(cap, dc, sizeof(cap));
	cap[2] = dc[2];
	cap[3] = dc[3] & 0x07; /* enable and mask start clear */
	int off = pci_device_add_cap(&v->pci, cap, sizeof(cap));
	if (off < 0) {
		snprintf(err, errlen, "%s: no room for the MSI-X capability", v->name);
		return -1;
	}
	static const uint8_t m_ctrl[2] = {0, 0xc0};
	pci_device_set_wmask(&v->pci, (uint32_t)off + 2, m_ctrl, 2);
	v->msix.cap = (unsigned int)off;
	return vfio_msix_init(v, dc, err, errlen);
}

/* Walks the device's list (bounded, offsets checked) and adds what skiff
 * keeps. Power management and the rest are hidden: skiff cannot honour
 * D-state changes the guest would expect to stick. */
static int caps_build(struct vfio_pci *v, const uint8_t *dc, char *err, size_t errlen)
{
	if (!(get16(dc + PCI_STATUS) & PCI_STATUS_CAP_LIST))
		return 0;
	unsigned int off = dc[PCI_CAPABILITY_LIST] & 0xfc;
	for (unsigned int n = 0; n < CAP_WALK_MAX && off >= PCI_CAP_START; n++) {
		const uint8_t *c = dc + off;
		int r = 0;
		if (c[0] == PCI_CAP_ID_MSIX && off + 12 <= PCI_CFG_SIZE && !v->msix.cap)
			r = cap_msix(v, c, err, errlen);
		else if (c[0] == PCI_CAP_ID_MSI && off + 14 <= PCI_CFG_SIZE && !v->msi.cap)
			r = cap_msi(v, c);
		else if (c[0] == PCI_CAP_ID_EXP && off + PCIE_CAP_LEN <= PCI_CFG_SIZE)
			/* Read-only: link and device facts for the driver. */
			r = pci_device_add_cap(&v->pci, c,
					       (c[2] & 0xf) >= 2 ? PCIE_CAP_LEN : PCIE_CAP_V1) < 0
				? -1
				: 0;
		if (r < 0) {
			if (!err[0])
				snprintf(err, errlen, "%s: config space full", v->name);
			return -1;
		}
		off = c[1] & 0xfc;
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

void vfio_cfg_write(struct pci_device *dev, uint32_t off, uint32_t len)
{
	struct vfio_pci *v = (struct vfio_pci *)dev;
	if (overlaps(off, len, PCI_COMMAND, 2))
		vfio_cmd_forward(v);
	if (v->msi.cap && overlaps(off, len, v->msi.cap, v->msi.is64 ? 14 : 10))
		vfio_msi_ctrl_write(v);
	if (v->msix.cap && overlaps(off, len, v->msix.cap + 2, 2))
		vfio_msix_ctrl_write(v);
}
