// SPDX-License-Identifier: Apache-2.0
/* e1000: the EEPROM (a 64-word microwire part, bit-banged by the driver
 * through EECD; EERD reads a word directly) and the PHY behind MDIC (a
 * Marvell 88E1011 at address 1 with the link up and autonegotiation done). */
#include <string.h>

#include "devices/e1000/e1000_priv.h"

/* EEPROM words the driver reads (8254x SDM 5.6): the MAC (0-2), init
 * control words (0x0a, 0x0f: no pause, no APM), the PCI IDs (0x0b-0x0e);
 * word 0x3f makes the sum E1000_EEPROM_CHECKSUM. */
#define EE_INIT_CTRL1 0x0a
#define EE_SUBSYS_ID  0x0b
#define EE_SUBSYS_VEN 0x0c
#define EE_DEV_ID     0x0d
#define EE_VEN_ID     0x0e
#define EE_INIT_CTRL2 0x0f
#define EE_CHECKSUM   0x3f

#define EE_OPCODE_BITS 3
#define EE_ADDR_BITS   6
#define EE_READ_OPCODE 0x6 /* start bit 1, read 10 */

void e1000_eeprom_init(struct e1000 *d)
{
	uint16_t *w = d->eeprom;
	memset(d->eeprom, 0, sizeof(d->eeprom));
	for (int i = 0; i < 3; i++)
		w[i] = (uint16_t)(d->ctx.mac[2 * i] | d->ctx.mac[2 * i + 1] << 8);
	w[EE_INIT_CTRL1] = 0x0000;
	w[EE_SUBSYS_ID] = 0x001e;
	w[EE_SUBSYS_VEN] = 0x8086;
	w[EE_DEV_ID] = 0x100e;
	w[EE_VEN_ID] = 0x8086;
	w[EE_INIT_CTRL2] = 0x0000;
	uint16_t sum = 0;
	for (int i = 0; i < EE_CHECKSUM; i++)
		sum = (uint16_t)(sum + w[i]);
	w[EE_CHECKSUM] = (uint16_t)(E1000_EEPROM_CHECKSUM - sum);
}

/* Microwire: while CS is high, each rising SK edge samples DI; after the
 * 3-bit read opcode and 6 address bits, each further rising edge puts the
 * next data bit (MSB first) on DO. CS low ends the command. */
void e1000_eecd_write(struct e1000 *d, uint32_t v)
{
	uint32_t old = d->regs[E1000_EECD / 4];
	d->regs[E1000_EECD / 4] =
	    v & (E1000_EECD_SK | E1000_EECD_CS | E1000_EECD_DI | E1000_EECD_REQ);
	if (!(v & E1000_EECD_CS)) {
		d->ee_nin = d->ee_nout = 0;
		d->ee_in = 0;
		d->ee_addr = -1;
		d->ee_do = false;
		return;
	}
	if (!(v & E1000_EECD_SK) || (old & E1000_EECD_SK))
		return; /* not a rising edge */
	if (d->ee_addr >= 0) {
		/* Past the 16 bits the part would start the next word; the
		 * driver never reads that far, so give zeros. */
		d->ee_do = d->ee_nout < 16 && (d->eeprom[d->ee_addr] >> (15 - d->ee_nout)) & 1;
		if (d->ee_nout < 16)
			d->ee_nout++;
		return;
	}
	if (d->ee_nin >= EE_OPCODE_BITS + EE_ADDR_BITS)
		return; /* an unknown command: ignore the rest until CS drops */
	d->ee_in = d->ee_in << 1 | !!(v & E1000_EECD_DI);
	if (++d->ee_nin == EE_OPCODE_BITS + EE_ADDR_BITS &&
	    d->ee_in >> EE_ADDR_BITS == EE_READ_OPCODE) {
		d->ee_addr = (int)(d->ee_in & ((1u << EE_ADDR_BITS) - 1));
		d->ee_nout = 0;
	}
}

uint32_t e1000_eecd_read(struct e1000 *d)
{
	uint32_t v = d->regs[E1000_EECD / 4] | E1000_EECD_PRES;
	if (v & E1000_EECD_REQ)
		v |= E1000_EECD_GNT; /* no firmware competes for the EEPROM */
	if (d->ee_do)
		v |= E1000_EECD_DO;
	return v;
}

void e1000_eerd_write(struct e1000 *d, uint32_t v)
{
	if (!(v & E1000_EERD_START)) {
		d->regs[E1000_EERD / 4] = v;
		return;
	}
	uint32_t addr = (v >> E1000_EERD_ADDR_SHIFT) & 0xff;
	uint16_t data = addr < E1000_EEPROM_WORDS ? d->eeprom[addr] : 0;
	d->regs[E1000_EERD / 4] = (addr << E1000_EERD_ADDR_SHIFT) | E1000_EERD_DONE |
				  (uint32_t)data << E1000_EERD_DATA_SHIFT;
}

/* ---- PHY ---- */

/* Writable bits per register; the rest read back fixed. */
static const uint16_t phy_wmask[32] = {
    [PHY_CTRL] = 0xffff,       [PHY_AUTONEG_ADV] = 0xffff,
    [PHY_1000T_CTRL] = 0xffff, [M88_PHY_SPEC_CTRL] = 0xffff,
    [0x12] = 0xffff,	       [0x14] = 0xffff,
    [0x16] = 0xffff,	       [0x18] = 0xffff,
    [0x1a] = 0xffff,	       [0x1d] = 0xffff,
    [0x1e] = 0xffff,
};

void e1000_phy_reset(struct e1000 *d)
{
	memset(d->phy, 0, sizeof(d->phy));
	d->phy[PHY_CTRL] = 0x1140;	  /* autonegotiation on, 1000 Mb/s full duplex */
	d->phy[PHY_STATUS] = 0x796d;	  /* link up, autonegotiation complete */
	d->phy[PHY_ID1] = 0x0141;	  /* Marvell */
	d->phy[PHY_ID2] = 0x0c20;	  /* 88E1011 */
	d->phy[PHY_AUTONEG_ADV] = 0x0de1; /* 10/100 both duplexes, pause */
	d->phy[PHY_LP_ABILITY] = 0x45e1;  /* the partner: the same, acknowledged */
	d->phy[PHY_1000T_CTRL] = 0x0e00;
	d->phy[PHY_1000T_STATUS] = 0x3c00; /* partner 1000 Mb/s, receivers OK */
	d->phy[PHY_EXT_STATUS] = 0x3000;
	d->phy[M88_PHY_SPEC_CTRL] = 0x0068;
	d->phy[M88_PHY_SPEC_STATUS] = 0xac00; /* 1000 FD resolved, link up */
}

void e1000_mdic_write(struct e1000 *d, uint32_t v)
{
	uint32_t reg = (v >> E1000_MDIC_REG_SHIFT) & 0x1f;
	uint32_t phy = (v >> E1000_MDIC_PHY_SHIFT) & 0x1f;
	uint32_t out = v & ~(E1000_MDIC_READY | E1000_MDIC_ERROR);
	if (phy != E1000_PHY_ADDR) {
		out |= E1000_MDIC_ERROR; /* nobody answers at that address */
	} else if (v & E1000_MDIC_OP_READ) {
		out = (out & ~E1000_MDIC_DATA) | d->phy[reg];
	} else if (v & E1000_MDIC_OP_WRITE) {
		uint16_t val = (uint16_t)(v & E1000_MDIC_DATA);
		d->phy[reg] = (uint16_t)((d->phy[reg] & ~phy_wmask[reg]) | (val & phy_wmask[reg]));
		/* Reset and autonegotiation restart complete at once. */
		if (reg == PHY_CTRL)
			d->phy[PHY_CTRL] &= (uint16_t) ~(PHY_CTRL_RESET | PHY_CTRL_RESTART_AN);
	} else {
		out |= E1000_MDIC_ERROR;
	}
	/* The access is done before the guest can poll for it. */
	d->regs[E1000_MDIC / 4] = out | E1000_MDIC_READY;
	if (v & E1000_MDIC_INT_EN)
		e1000_set_ics(d, E1000_ICR_MDAC);
}

bool e1000_phy_fits(const struct e1000 *d, const uint16_t *phy)
{
	for (unsigned int r = 0; r < 32; r++)
		if ((phy[r] ^ d->phy[r]) & ~phy_wmask[r])
			return false;
	return true;
}
