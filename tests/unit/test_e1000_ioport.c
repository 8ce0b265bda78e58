// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the e1000's I/O BAR and its TX and RX state across a
 * reset or a driver's down/up (issue 32, src/devices/e1000/e1000_io.c, e1000.c,
 * e1000_tx.c): Linux's 82540 reset goes through IOADDR/IODATA, a packet
 * half gathered when the ring is reset is dropped, not glued to the next
 * one. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "e1000_fx.h"

static uint16_t io_base(struct fx *f)
{
	uint32_t bar = cfg_rd(&f->trap, 1, PCI_BAR0 + 4 * E1000_IO_BAR, 4);
	assert_int_equal(bar & PCI_BAR_IO, PCI_BAR_IO);
	return (uint16_t)(bar & ~3u);
}

static void outl(struct fx *f, uint16_t port, uint32_t len, uint32_t v)
{
	bus_dispatch(&f->trap, BUS_PIO, port, &v, len, true, 0);
}

static uint32_t inl(struct fx *f, uint16_t port, uint32_t len)
{
	uint32_t v = 0xdeadbeef;
	bus_dispatch(&f->trap, BUS_PIO, port, &v, len, false, 0);
	return v;
}

/* Linux's E1000_WRITE_REG_IO and its read. */
static void io_wr(struct fx *f, uint32_t reg, uint32_t v)
{
	outl(f, io_base(f), 4, reg);
	outl(f, io_base(f) + 4, 4, v);
}

static uint32_t io_rd(struct fx *f, uint32_t reg)
{
	outl(f, io_base(f), 4, reg);
	return inl(f, io_base(f) + 4, 4);
}

/* An 8-byte I/O BAR: IOADDR selects a register, IODATA reaches it with the
 * memory BAR's effects; CTRL.RST through it resets the device (what
 * Linux's e1000_reset_hw does on an 82540). Odd accesses read 0. */
static void test_io_bar_reaches_registers_and_reset(void **state)
{
	struct fx *f = *state;
	uint16_t port = io_base(f);
	assert_true(port != 0);
	io_wr(f, E1000_TIPG, 0x00123456);
	assert_int_equal(rd(f, E1000_TIPG), 0x00123456);
	assert_int_equal(inl(f, port, 4), E1000_TIPG); /* IOADDR reads back */
	wr(f, E1000_ITR, 77);
	assert_int_equal(io_rd(f, E1000_ITR), 77);
	wr(f, E1000_IMS, E1000_ICR_LSC);
	io_wr(f, E1000_CTRL, rd(f, E1000_CTRL) | E1000_CTRL_RST);
	assert_int_equal(rd(f, E1000_IMS), 0);
	assert_int_equal(rd(f, E1000_ITR), 0);
	/* a 2-byte access, and a dword past IODATA: read 0, ignored */
	assert_int_equal(inl(f, port, 2) & 0xffff, 0);
	outl(f, port + 4, 2, 0);
	outl(f, port, 4, E1000_ITR);
	outl(f, port + 4, 2, 5);
	assert_int_equal(rd(f, E1000_ITR), 0);
	/* an IOADDR beyond the BAR wraps inside it, never out of it */
	outl(f, port, 4, 0xfffffff0);
	assert_int_equal(inl(f, port, 4), E1000_BAR_SIZE - 16);
	assert_int_equal(inl(f, port + 4, 4), 0);
}

/* Sends one 60-byte packet in a single legacy descriptor filled with
 * `fill`, at ring slot i; returns what the wire got (length, or -1). */
static ssize_t tx_whole(struct fx *f, uint32_t i, uint8_t fill, uint8_t *got, size_t max)
{
	uint64_t b = BUF + 0x1000;
	memset(fake_mem_at(&f->fm, b), fill, 60);
	txd_legacy(f, i, b, 60, E1000_TXD_CMD_EOP | E1000_TXD_CMD_RS, 0, 0, 0);
	tx_go(f, i + 1);
	return wire_recv(f, got, max);
}

/* Half a packet (no EOP) in slot 0. */
static void tx_half(struct fx *f)
{
	tx_setup(f);
	memset(fake_mem_at(&f->fm, BUF), 0xaa, 40);
	txd_legacy(f, 0, BUF, 40, E1000_TXD_CMD_RS, 0, 0, 0);
	tx_go(f, 1);
	assert_int_equal(f->d->tx_len, 40);
}

/* A reset (through the I/O BAR, as Linux does it) drops the half-gathered
 * packet: the next packet goes alone, not behind its stale start. */
static void test_reset_drops_half_gathered_tx(void **state)
{
	struct fx *f = *state;
	uint8_t got[512], want[60];
	memset(want, 0x55, sizeof(want));
	tx_half(f);
	io_wr(f, E1000_CTRL, rd(f, E1000_CTRL) | E1000_CTRL_RST);
	assert_int_equal(f->d->stats.tx_dropped, 1);
	tx_setup(f);
	assert_int_equal(tx_whole(f, 0, 0x55, got, sizeof(got)), HDR + 60);
	assert_memory_equal(got + HDR, want, 60);
}

/* The driver's down/up (TCTL.EN clear, then the ring set up again from
 * TDH 0) drops it too. */
static void test_down_up_drops_half_gathered_tx(void **state)
{
	struct fx *f = *state;
	uint8_t got[512], want[60];
	memset(want, 0x66, sizeof(want));
	tx_half(f);
	wr(f, E1000_TCTL, 0);
	assert_int_equal(f->d->stats.tx_dropped, 1);
	tx_setup(f);
	assert_int_equal(tx_whole(f, 0, 0x66, got, sizeof(got)), HDR + 60);
	assert_memory_equal(got + HDR, want, 60);
	/* the ring set up again with TX left on: the same */
	tx_half(f);
	wr(f, E1000_TDH, 0);
	wr(f, E1000_TDT, 0);
	assert_int_equal(f->d->stats.tx_dropped, 2);
	assert_int_equal(tx_whole(f, 0, 0x66, got, sizeof(got)), HDR + 60);
	assert_int_equal(f->d->stats.tx_packets, 2);
}

/* coalesce=on: a polling driver's RDT write sits in KVM's ring after RX
 * parked, and the guest never exits again. The parked RX's timer drains
 * the ring (the test fires it directly): the batched write lands, RX
 * resumes on its turn and the frame is delivered. A timer that finds
 * nothing leaves RX parked and re-armed, counting no starvation. */
static void test_batched_rdt_wakes_parked_rx(void **state)
{
	struct fx *f = *state;
	uint8_t fr[60];
	memcpy(fr, MAC, 6);
	memcpy(fr + 6, PEER, 6);
	memset(fr + 12, 0x08, sizeof(fr) - 12);
	rx_setup(f, 0, E1000_RCTL_EN); /* no buffers */
	wire_send(f, fr, sizeof(fr));
	e1000_rx_run(f->d);
	assert_true(f->d->rx_parked);
	assert_true(f->d->rdt_armed);
	assert_int_equal(f->d->stats.rx_starved, 1);
	e1000_rdt_event(f->d, 0); /* nothing batched yet */
	assert_true(f->d->rx_parked);
	assert_true(f->d->rdt_armed);
	assert_int_equal(f->d->stats.rx_starved, 1);
	f->pending_rdt = 4; /* the driver's RDT write, batched */
	int before = f->flushes;
	e1000_rdt_event(f->d, 0);
	assert_int_equal(f->flushes, before + 1);
	assert_false(f->d->rx_parked);
	assert_false(f->d->rdt_armed);
	e1000_sched_event(f->d, 0); /* RX's turn on the I/O thread */
	assert_int_equal(f->d->stats.rx_packets, 1);
	assert_int_equal(rd(f, E1000_RDH), 1);
	/* unparked: a late timer does nothing */
	before = f->flushes;
	e1000_rdt_event(f->d, 0);
	assert_int_equal(f->flushes, before);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_io_bar_reaches_registers_and_reset),
	    T(test_reset_drops_half_gathered_tx),
	    T(test_down_up_drops_half_gathered_tx),
	    T(test_batched_rdt_wakes_parked_rx),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
