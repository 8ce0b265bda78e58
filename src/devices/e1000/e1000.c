// SPDX-License-Identifier: Apache-2.0
/* e1000 (82540EM): setup, the register file, interrupts and the coalesced
 * MMIO zones. EEPROM/PHY in e1000_eeprom.c, packets in e1000_tx.c and
 * e1000_rx.c. */
#include "devices/e1000/e1000.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <linux/if_tun.h>

#include "core/clock.h"
#include "core/log.h"
#include "devices/e1000/e1000_priv.h"
#include "iothread/iothread.h"

#define E1000_VENDOR	0x8086
#define E1000_DEVICE	0x100e /* 82540EM */
#define E1000_SUBSYS	0x001e
#define E1000_CLASS_NET 0x020000
#define E1000_REVISION	0x03

/* Registers whose writes KVM may batch in its coalesced ring (coalesce=on).
 *
 * The rule: a write may wait in the ring only if nothing the guest expects
 * to happen without a further access of its own depends on it. So never a
 * doorbell that starts work (TDT), interrupt state (ICR, ICS, IMS, IMC),
 * control or reset (CTRL, CTRL_EXT, RCTL, TCTL), the PHY and EEPROM
 * handshakes (MDIC, EECD, EERD), statistics, nor anything whose read has a
 * side effect. What is left is configuration the device only consults
 * when one of those happens (ring bases and lengths, the delay bounds RADV
 * and TADV, filters) and
 * RDT, which qualifies only because the RX path drains the ring before it
 * concludes that the guest has no buffers (e1000_rx.c). Not RDTR or TIDV:
 * written with FPD they raise a delayed interrupt at once. Reads in a zone
 * still exit, and every read drains the ring first. coalesce=all adds TDT:
 * the field's latency trap (a packet waits for an unrelated exit), for
 * benchmarks only. */
static const struct e1000_zone {
	uint32_t off, len;
	bool all_only;
} e1000_zones[] = {
    {E1000_ITR, 4, false},				  /* interrupt throttling interval */
    {E1000_TIPG, 4, false},				  /* inter-packet gap */
    {E1000_RDBAL, E1000_RDTR - E1000_RDBAL, false},	  /* RDBAL..RDT, not RDTR */
    {E1000_RADV, 4, false},				  /* RX absolute delay */
    {E1000_TDBAL, E1000_TDT - E1000_TDBAL, false},	  /* TDBAL..TDH, not TDT */
    {E1000_TXDCTL, E1000_TADV + 4 - E1000_TXDCTL, false}, /* TXDCTL, TADV, not TIDV */
    {E1000_RXCSUM, E1000_WUC - E1000_RXCSUM, false},	  /* RXCSUM, MTA, RA, VFTA */
    {E1000_TDT, 4, true},				  /* coalesce=all only: the trap */
};

void e1000_log_once(struct e1000 *d, enum e1000_log kind, const char *fmt, ...)
{
	if (atomic_load(&d->logged[kind]))
		return; /* said already: spare the formatting */
	va_list ap;
	va_start(ap, fmt);
	char msg[200];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_once_at(&d->logged[kind], LOG_WARN, "%s: %s (logged once)", d->name, msg);
}

static struct e1000 *e1000_of(struct pci_device *p)
{
	return (struct e1000 *)((char *)p - offsetof(struct e1000, pci));
}

/* ---- statistics registers ---- */

void e1000_stat_add(struct e1000 *d, uint32_t off, uint64_t n)
{
	uint32_t *s = &d->stat[off / 4];
	*s = *s + n > UINT32_MAX ? UINT32_MAX : (uint32_t)(*s + n); /* they saturate */
}

void e1000_stat_add64(struct e1000 *d, uint32_t off, uint64_t n)
{
	uint64_t v = ((uint64_t)d->stat[off / 4 + 1] << 32 | d->stat[off / 4]) + n;
	d->stat[off / 4] = (uint32_t)v;
	d->stat[off / 4 + 1] = (uint32_t)(v >> 32);
}

/* ---- reset ---- */

static void e1000_regs_reset(struct e1000 *d)
{
	memset(d->regs, 0, sizeof(d->regs));
	memset(d->stat, 0, sizeof(d->stat));
	d->regs[E1000_CTRL / 4] =
	    E1000_CTRL_FD | E1000_CTRL_ASDE | E1000_CTRL_SLU | E1000_CTRL_SPD_1000;
	d->regs[E1000_PBA / 4] = 0x00100030; /* 48 KiB RX, 16 KiB TX */
	d->regs[E1000_LEDCTL / 4] = 0x07068302;
	d->regs[E1000_TIPG / 4] = 0x0060200a;
	d->regs[E1000_VET / 4] = E1000_VLAN_TPID;
	/* The MAC from the EEPROM in receive address 0, valid. */
	d->regs[E1000_RA / 4] = (uint32_t)d->ctx.mac[0] | (uint32_t)d->ctx.mac[1] << 8 |
				(uint32_t)d->ctx.mac[2] << 16 | (uint32_t)d->ctx.mac[3] << 24;
	d->regs[E1000_RA / 4 + 1] =
	    (uint32_t)d->ctx.mac[4] | (uint32_t)d->ctx.mac[5] << 8 | E1000_RAH_AV;
	d->ee_nin = d->ee_nout = 0;
	d->ee_in = 0;
	d->ee_addr = -1;
	e1000_phy_reset(d);
	e1000_delay_reset(d);
	e1000_tx_reset(d);
	e1000_rx_reset(d);
	e1000_irq_update(d);
}

/* ---- register file ---- */

static uint32_t e1000_status(const struct e1000 *d)
{
	(void)d; /* the link is always up at 1000 Mb/s full duplex */
	return E1000_STATUS_FD | E1000_STATUS_LU | E1000_STATUS_SPEED_1000 | E1000_STATUS_ASDV_1000;
}

uint32_t e1000_reg_read(struct e1000 *d, uint32_t off)
{
	if (off >= E1000_STATS && off < E1000_STATS_END) {
		uint32_t v = d->stat[(off - E1000_STATS) / 4];
		d->stat[(off - E1000_STATS) / 4] = 0;
		return v;
	}
	if (off >= E1000_REG_END)
		return 0;
	switch (off) {
	case E1000_STATUS:
		return e1000_status(d);
	case E1000_EECD:
		return e1000_eecd_read(d);
	case E1000_ICR:
		return e1000_icr_read(d);
	case E1000_ICS:
	case E1000_IMC:
		return 0; /* write-only */
	default:
		return d->regs[off / 4];
	}
}

/* A TDT or TCTL write. With an I/O thread, it transmits, as a NIC's DMA
 * engine would: the vCPU goes back to the guest at once instead of waiting
 * while the host's stack takes each frame inside writev (and sends its
 * answers inside it too). Without one (tests), at once. Caller holds lock. */
static void e1000_tx_kick(struct e1000 *d)
{
	if (!d->ctx.io) {
		e1000_tx_run(d, UINT_MAX);
		return;
	}
	d->tx_pending = true;
	e1000_wake(d);
}

void e1000_reg_write(struct e1000 *d, uint32_t off, uint32_t v)
{
	if (off >= E1000_REG_END || (off >= E1000_STATS && off < E1000_STATS_END))
		return;
	switch (off) {
	case E1000_CTRL:
		if (v & E1000_CTRL_RST) {
			e1000_regs_reset(d);
			return;
		}
		d->regs[off / 4] = v & ~E1000_CTRL_PHY_RST;
		return;
	case E1000_STATUS:
		return; /* read-only */
	case E1000_EECD:
		e1000_eecd_write(d, v);
		return;
	case E1000_EERD:
		e1000_eerd_write(d, v);
		return;
	case E1000_MDIC:
		e1000_mdic_write(d, v);
		return;
	case E1000_ICR:
		d->regs[off / 4] &= ~v; /* write 1 to clear */
		e1000_irq_update(d);
		return;
	case E1000_ICS:
		e1000_set_ics(d, v);
		return;
	case E1000_IMS:
		d->regs[off / 4] |= v & E1000_ICR_VALID;
		e1000_irq_update(d);
		return;
	case E1000_IMC:
		d->regs[E1000_IMS / 4] &= ~v;
		e1000_irq_update(d);
		return;
	case E1000_RDH:
	case E1000_RDT:
	case E1000_TDH:
	case E1000_TDT:
		if (off == E1000_TDH)
			e1000_tx_abort(d); /* the driver (re)starts its ring */
		d->regs[off / 4] = v & 0xffff;
		if (off == E1000_TDT)
			e1000_tx_kick(d);
		else if (off == E1000_RDT)
			e1000_rx_kick(d);
		return;
	case E1000_RDTR:
	case E1000_TIDV:
		d->regs[off / 4] = v & 0xffff;
		if (v & E1000_DELAY_FPD)
			e1000_delay_flush(d, off == E1000_RDTR ? E1000_ICR_RXT0 : E1000_ICR_TXDW);
		return;
	case E1000_RDLEN:
	case E1000_TDLEN:
		/* Bits 19:7: at most 65536 descriptors, so one TDT write walks
		 * at most that many (the guest cannot make it 2^28). */
		d->regs[off / 4] = v & 0xfff80;
		return;
	case E1000_RCTL:
		d->regs[off / 4] = v;
		e1000_rx_kick(d); /* enabling RX may let a waiting frame in */
		return;
	case E1000_TCTL:
		if (!(v & E1000_TCTL_EN))
			e1000_tx_abort(d); /* the driver going down */
		d->regs[off / 4] = v;
		e1000_tx_kick(d);
		return;
	default:
		d->regs[off / 4] = v;
	}
}

static void e1000_mmio(void *opaque, struct bus_access *acc)
{
	struct e1000 *d = opaque;
	uint64_t off = acc->offset;
	/* Dword registers; a qword is two of them. Anything else is not
	 * something the driver does: answer 0, ignore writes. */
	if ((acc->len != 4 && acc->len != 8) || (off & 3) || off + acc->len > E1000_BAR_SIZE) {
		pthread_mutex_lock(&d->lock);
		e1000_log_once(d, E1000_LOG_ACCESS, "%u-byte access at BAR offset %#llx ignored",
			       acc->len, (unsigned long long)off);
		pthread_mutex_unlock(&d->lock);
		if (!acc->is_write)
			memset(acc->data, 0, acc->len);
		return;
	}
	/* A read must see every write the guest made before it, batched ones
	 * included (the vCPU loop drained already; other callers may not). */
	if (!acc->is_write && d->ctx.flush)
		d->ctx.flush(d->ctx.cm_opaque);
	pthread_mutex_lock(&d->lock);
	for (uint32_t i = 0; i < acc->len; i += 4) {
		uint32_t v;
		if (acc->is_write) {
			memcpy(&v, acc->data + i, 4);
			e1000_reg_write(d, (uint32_t)off + i, v);
		} else {
			v = e1000_reg_read(d, (uint32_t)off + i);
			memcpy(acc->data + i, &v, 4);
		}
	}
	pthread_mutex_unlock(&d->lock);
}

/* ---- coalesced zones: they follow the BAR ---- */

static void e1000_zones_set(struct e1000 *d, uint64_t base, bool on)
{
	if (d->ctx.coalesce == E1000_COALESCE_OFF || !d->ctx.zone_add || on == d->zones_on)
		return;
	for (size_t i = 0; i < sizeof(e1000_zones) / sizeof(e1000_zones[0]); i++) {
		const struct e1000_zone *z = &e1000_zones[i];
		if (z->all_only && d->ctx.coalesce != E1000_COALESCE_ALL)
			continue;
		int r = on ? d->ctx.zone_add(d->ctx.cm_opaque, base + z->off, z->len)
			   : d->ctx.zone_del(d->ctx.cm_opaque, base + z->off, z->len);
		if (r < 0 && on)
			log_ratelimited(LOG_WARN, "%s: coalesced MMIO zone at %#llx: %s", d->name,
					(unsigned long long)(base + z->off), strerror(-r));
	}
	d->zones_on = on;
	d->bar_addr = base;
}

static void e1000_bar_map(struct pci_device *p, unsigned int bar, uint64_t addr, bool mapped)
{
	struct e1000 *d = e1000_of(p);
	if (bar != 0)
		return;
	e1000_zones_set(d, addr, mapped);
	/* Writes batched at the old address must land before it goes: drain
	 * after the zones are gone (another vCPU could batch one more between
	 * a drain and their removal) and before the bus forgets the BAR. */
	if (!mapped && d->ctx.flush)
		d->ctx.flush(d->ctx.cm_opaque);
}

static const struct pci_device_ops e1000_pci_ops = {
    .bar_map = e1000_bar_map,
};

/* ---- I/O thread ---- */

void e1000_wake(struct e1000 *d)
{
	uint64_t one = 1;
	if (write(d->sched_fd, &one, sizeof(one)) < 0) {
		/* counter full: a wakeup is pending anyway */
	}
}

void e1000_sched_event(void *opaque, uint32_t events)
{
	struct e1000 *d = opaque;
	uint64_t n;
	(void)events;
	if (read(d->sched_fd, &n, sizeof(n)) < 0) {
		/* EAGAIN: already consumed; the flags say what to do */
	}
	pthread_mutex_lock(&d->lock);
	bool rx = d->rx_wake;
	d->rx_wake = false;
	if (d->tx_pending) {
		/* A budget per turn, as virtio-net's: the thread's other
		 * devices get theirs before the rest of a long ring. */
		d->tx_pending = e1000_tx_run(d, E1000_TX_BUDGET);
		if (d->tx_pending)
			e1000_wake(d);
	}
	pthread_mutex_unlock(&d->lock);
	/* Only when RX asked: with its ring full it would count a missed
	 * packet (RNBC) on every transmit's wakeup. */
	if (rx)
		e1000_rx_run(d);
}

void e1000_tap_event(void *opaque, uint32_t events)
{
	(void)events;
	e1000_rx_run(opaque);
}

/* ---- lifecycle ---- */

struct e1000 *e1000_create(const struct e1000_ctx *ctx, char *err, size_t errlen)
{
	struct e1000 *d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(err, errlen, "out of memory");
		struct tap t = ctx->tap;
		tap_close(&t);
		return NULL;
	}
	d->ctx = *ctx;
	snprintf(d->name, sizeof(d->name), "%s", ctx->name ? ctx->name : "e1000");
	d->ctx.name = d->name;
	pthread_mutex_init(&d->lock, NULL);
	d->clock_ns = monotonic_ns;
	/* Without a timer, ITR is not honoured (interrupts are never lost). */
	d->itr_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	d->delay_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	d->rdt_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	d->sched_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (d->sched_fd < 0) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		e1000_destroy(d);
		return NULL;
	}
	e1000_eeprom_init(d);
	e1000_regs_reset(d);
	/* Frames towards the guest may come with a partial checksum, which
	 * RX completes (e1000_rx.c), and TCP may come unsegmented, which RX
	 * cuts (e1000_rx_gso.c): the host's stack then does neither, and one
	 * read brings up to 64 KiB. RX cuts TCP over IPv4 and IPv6 (options
	 * but no routing header) behind up to two VLAN tags; anything else
	 * is counted and dropped. A tap that refuses keeps doing them
	 * itself: nothing lost. */
	if (tap_set_offload(&d->ctx.tap, TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6) < 0 &&
	    tap_set_offload(&d->ctx.tap, TUN_F_CSUM) < 0)
		log_warn("%s: tap '%s' keeps checksumming frames itself", d->name, d->ctx.tap.name);

	struct pci_device *p = &d->pci;
	pci_device_init(p, d->name, E1000_VENDOR, E1000_DEVICE, E1000_CLASS_NET, E1000_REVISION);
	pci_device_set_subsystem(p, E1000_VENDOR, E1000_SUBSYS);
	p->ops = &e1000_pci_ops;
	struct bus_region r = {
	    .handler = e1000_mmio, .reg_name = e1000_reg_name, .opaque = d, .name = d->name};
	struct bus_region rp = {
	    .handler = e1000_pio, .reg_name = e1000_pio_name, .opaque = d, .name = d->name};
	if (pci_device_add_bar(p, 0, E1000_BAR_SIZE, &r) < 0 ||
	    pci_device_add_bar_flags(p, E1000_IO_BAR, E1000_IO_SIZE, PCI_BAR_IO, &rp) < 0) {
		snprintf(err, errlen, "cannot declare the register BARs");
		e1000_destroy(d);
		return NULL;
	}
	if (ctx->io) {
		int e = iothread_add_fd(ctx->io, d->sched_fd, EPOLLIN, e1000_sched_event, d);
		if (e == 0 && d->itr_fd >= 0)
			e = iothread_add_fd(ctx->io, d->itr_fd, EPOLLIN, e1000_itr_event, d);
		if (e == 0 && d->delay_fd >= 0)
			e = iothread_add_fd(ctx->io, d->delay_fd, EPOLLIN, e1000_delay_event, d);
		if (e == 0 && d->rdt_fd >= 0)
			e = iothread_add_fd(ctx->io, d->rdt_fd, EPOLLIN, e1000_rdt_event, d);
		if (e == 0)
			e = iothread_add_fd(ctx->io, d->ctx.tap.fd, EPOLLIN | EPOLLET,
					    e1000_tap_event, d);
		if (e < 0) {
			snprintf(err, errlen, "cannot watch tap '%s': %s", d->ctx.tap.name,
				 strerror(-e));
			iothread_del_fd(ctx->io, d->sched_fd);
			if (d->itr_fd >= 0)
				iothread_del_fd(ctx->io, d->itr_fd);
			if (d->delay_fd >= 0)
				iothread_del_fd(ctx->io, d->delay_fd);
			if (d->rdt_fd >= 0)
				iothread_del_fd(ctx->io, d->rdt_fd);
			e1000_destroy(d);
			return NULL;
		}
	}
	return d;
}

struct pci_device *e1000_pci(struct e1000 *d)
{
	return &d->pci;
}

void e1000_stop(struct e1000 *d)
{
	if (d->ctx.io) {
		iothread_del_fd(d->ctx.io, d->ctx.tap.fd);
		iothread_del_fd(d->ctx.io, d->sched_fd);
		if (d->itr_fd >= 0)
			iothread_del_fd(d->ctx.io, d->itr_fd);
		if (d->delay_fd >= 0)
			iothread_del_fd(d->ctx.io, d->delay_fd);
		if (d->rdt_fd >= 0)
			iothread_del_fd(d->ctx.io, d->rdt_fd);
	}
	/* Every DMA happens under the lock after checking `stopped`. */
	pthread_mutex_lock(&d->lock);
	d->stopped = true;
	pthread_mutex_unlock(&d->lock);
}

void e1000_destroy(struct e1000 *d)
{
	if (!d)
		return;
	tap_close(&d->ctx.tap);
	if (d->sched_fd >= 0)
		close(d->sched_fd);
	if (d->itr_fd >= 0)
		close(d->itr_fd);
	if (d->delay_fd >= 0)
		close(d->delay_fd);
	if (d->rdt_fd >= 0)
		close(d->rdt_fd);
	pthread_mutex_destroy(&d->lock);
	free(d);
}
