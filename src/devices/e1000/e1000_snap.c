// SPDX-License-Identifier: Apache-2.0
/* The e1000's state in a snapshot (docs/SNAPSHOT.md): the register file
 * (rings, interrupt causes and mask, ITR, filters, VLAN), the statistics
 * the guest has not read yet, the EEPROM's and the PHY's, the I/O BAR's
 * selected register and the last TX context. The PCI function (BAR
 * placement, INTx mask) is the device manager's section.
 *
 * What is the host's, not the guest's, is not saved: a frame half
 * gathered from TX descriptors is dropped, as a ring reset drops it (its
 * remaining descriptors up to EOP are consumed and counted, not sent); a
 * frame read from the tap and not yet placed is dropped, as a NIC may;
 * interrupt delays and ITR restart, and a cause a delay was holding is
 * set at once (an interrupt early, never lost). Writes waiting in KVM's
 * coalesced ring are applied before the registers are read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/epoll.h>

#include "core/snap.h"
#include "devices/e1000/e1000_priv.h"
#include "iothread/iothread.h"

#define E1000_SNAP_LAYOUT 1u

struct e1000_snap {
	uint32_t layout;
	uint32_t regs[E1000_REG_END / 4];
	uint32_t stat[(E1000_STATS_END - E1000_STATS) / 4];
	uint16_t eeprom[E1000_EEPROM_WORDS];
	uint16_t phy[32];
	uint32_t ee_in, ee_nin, ee_nout;
	int32_t ee_addr;
	uint32_t ioaddr;
	uint32_t delayed; /* RXT0/TXDW a delay timer was holding */
	uint8_t ee_do, tx_mid, zero[2];
	struct e1000_tx_ctx txc;
};

_Static_assert(sizeof(struct e1000_tx_ctx) == 16, "no padding in the saved TX context");
_Static_assert(sizeof(struct e1000_snap) == 4 + E1000_REG_END + 256 + 128 + 64 + 28 + 16,
	       "no padding in the saved e1000");

/* Bits a guest write can leave in a register (the rest stay 0); those
 * not listed take any value. Kept with e1000_reg_write's masks. */
static const struct {
	uint32_t off, bits;
} e1000_snap_masks[] = {
    {E1000_CTRL, ~(E1000_CTRL_RST | E1000_CTRL_PHY_RST)},
    {E1000_STATUS, 0}, /* computed on read */
    {E1000_EECD, E1000_EECD_SK | E1000_EECD_CS | E1000_EECD_DI | E1000_EECD_REQ},
    {E1000_ICR, E1000_ICR_VALID},
    {E1000_ICS, 0},
    {E1000_IMS, E1000_ICR_VALID},
    {E1000_IMC, 0},
    {E1000_RDLEN, 0xfff80},
    {E1000_TDLEN, 0xfff80},
    {E1000_RDH, 0xffff},
    {E1000_RDT, 0xffff},
    {E1000_TDH, 0xffff},
    {E1000_TDT, 0xffff},
    {E1000_RDTR, 0xffff},
    {E1000_TIDV, 0xffff},
};

int e1000_save(struct e1000 *d, struct snap_writer *w, uint32_t id, uint32_t instance, char *err,
	       size_t errlen)
{
	struct e1000_snap *s = calloc(1, sizeof(*s)); /* 25 KiB: off the stack */
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* The guest's last writes first: they may wait in the coalesced ring. */
	if (d->ctx.flush)
		d->ctx.flush(d->ctx.cm_opaque);
	pthread_mutex_lock(&d->lock);
	s->layout = E1000_SNAP_LAYOUT;
	memcpy(s->regs, d->regs, sizeof(s->regs));
	memcpy(s->stat, d->stat, sizeof(s->stat));
	memcpy(s->eeprom, d->eeprom, sizeof(s->eeprom));
	memcpy(s->phy, d->phy, sizeof(s->phy));
	s->ee_in = d->ee_in;
	s->ee_nin = d->ee_nin;
	s->ee_nout = d->ee_nout;
	s->ee_addr = d->ee_addr;
	s->ee_do = d->ee_do;
	s->ioaddr = d->ioaddr;
	s->delayed =
	    (d->rx_delay.due_ns ? E1000_ICR_RXT0 : 0) | (d->tx_delay.due_ns ? E1000_ICR_TXDW : 0);
	s->tx_mid = d->tx_first_seen;
	s->txc = d->txc;
	pthread_mutex_unlock(&d->lock);
	int r = snap_put(w, id, instance, s, sizeof(*s));
	free(s);
	if (r < 0)
		snprintf(err, errlen, "out of memory");
	return r;
}

static const char *e1000_snap_regs_odd(const struct e1000_snap *s)
{
	for (size_t i = 0; i < sizeof(e1000_snap_masks) / sizeof(e1000_snap_masks[0]); i++)
		if (s->regs[e1000_snap_masks[i].off / 4] & ~e1000_snap_masks[i].bits)
			return "a register holds bits no driver can set";
	for (uint32_t off = E1000_STATS; off < E1000_STATS_END; off += 4)
		if (s->regs[off / 4])
			return "a register holds bits no driver can set";
	return NULL;
}

/* Everything a driver could have left on this card, or why not. */
static const char *e1000_snap_odd(const struct e1000 *d, const struct e1000_snap *s)
{
	if (s->layout != E1000_SNAP_LAYOUT)
		return "its layout is unknown";
	if (s->zero[0] | s->zero[1] || s->ee_do > 1 || s->tx_mid > 1 ||
	    s->delayed & ~(E1000_ICR_RXT0 | E1000_ICR_TXDW))
		return "a reserved field is set";
	if (memcmp(s->eeprom, d->eeprom, sizeof(s->eeprom)))
		return "its EEPROM differs (another MAC)";
	if (s->ee_nin > 9 || s->ee_nout > 16 || s->ee_in >> s->ee_nin || s->ee_addr < -1 ||
	    s->ee_addr >= E1000_EEPROM_WORDS)
		return "its EEPROM access is in no state a driver can leave";
	if (s->ioaddr & ~(uint32_t)(E1000_BAR_SIZE - 4))
		return "its I/O window points outside its registers";
	if (!e1000_phy_fits(d, s->phy))
		return "a read-only PHY register differs";
	return e1000_snap_regs_odd(s);
}

/* Onto a card whose guest has not run: as the driver left it, less what
 * was the host's (see the top). Caller holds lock. */
static void e1000_snap_apply(struct e1000 *d, const struct e1000_snap *s)
{
	memcpy(d->regs, s->regs, sizeof(d->regs));
	memcpy(d->stat, s->stat, sizeof(d->stat));
	memcpy(d->phy, s->phy, sizeof(d->phy));
	d->ee_in = s->ee_in;
	d->ee_nin = s->ee_nin;
	d->ee_nout = s->ee_nout;
	d->ee_addr = s->ee_addr;
	d->ee_do = s->ee_do;
	d->ioaddr = s->ioaddr;
	e1000_tx_reset(d);
	d->txc = s->txc;
	/* The rest of a half-gathered frame is consumed up to its EOP, not
	 * sent: its start is gone. */
	d->tx_first_seen = d->tx_bad = s->tx_mid;
	e1000_rx_reset(d);
	d->rx_parked = false;
	e1000_delay_reset(d);
	d->itr_next_ns = 0;
	/* The line follows the causes and the mask, from low: INTx's
	 * count on the bus then matches what the guest sees in ICR. */
	d->irq_level = false;
	e1000_set_ics(d, s->delayed);
	/* Descriptors the guest handed over before the save but the device
	 * had not taken yet, and frames waiting in the tap. */
	d->tx_pending = (e1000_reg(d, E1000_TCTL) & E1000_TCTL_EN) &&
			e1000_reg(d, E1000_TDH) != e1000_reg(d, E1000_TDT);
	d->rx_wake = true;
}

int e1000_restore(struct e1000 *d, const void *data, size_t len, char *err, size_t errlen)
{
	struct e1000_snap *s = len == sizeof(*s) ? malloc(sizeof(*s)) : NULL;
	const char *why = len != sizeof(*s) ? "its size is wrong" : !s ? "out of memory" : NULL;
	pthread_mutex_lock(&d->lock);
	if (!why) {
		memcpy(s, data, sizeof(*s)); /* copied once, then checked */
		why = e1000_snap_odd(d, s);
	}
	if (!why)
		e1000_snap_apply(d, s);
	pthread_mutex_unlock(&d->lock);
	free(s);
	if (!why) {
		if (d->ctx.io)
			e1000_wake(d);
		return 0;
	}
	snprintf(err, errlen, "%s: saved state refused: %s", d->name, why);
	return -1;
}

int e1000_handover(struct e1000 *d, bool release, char *err, size_t errlen)
{
	struct tap *t = &d->ctx.tap;
	if (release) {
		if (t->fd >= 0) {
			if (d->ctx.io)
				iothread_del_fd(d->ctx.io, t->fd);
			close(t->fd);
			t->fd = -1;
		}
		return 0;
	}
	if (t->fd >= 0)
		return 0;
	struct tap n;
	if (tap_open(&n, t->name, err, errlen) < 0)
		return -1;
	t->fd = n.fd;
	int r = tap_set_offload(t, t->offload);
	if (r == 0 && d->ctx.io)
		r = iothread_add_fd(d->ctx.io, t->fd, EPOLLIN | EPOLLET, e1000_tap_event, d);
	if (r < 0) {
		snprintf(err, errlen, "%s: tap '%s' reopened but not set up again: %s", d->name,
			 t->name, strerror(-r));
		close(t->fd);
		t->fd = -1;
		return -1;
	}
	return 0;
}
