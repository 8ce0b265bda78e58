// SPDX-License-Identifier: Apache-2.0
/* The e1000's snapshot section (src/devices/e1000/e1000_snap.c) with its
 * PCI function's: a driven card saved, restored onto a fresh one over a
 * copy of guest memory, reads back register for register (statistics,
 * PHY, EEPROM, the I/O window) with the same interrupt line; a write
 * waiting in the coalesced ring is in the saved state; a frame half
 * gathered is dropped, not glued to the next. Every cut and every field
 * a driver cannot leave is refused with the card as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include <sys/socket.h>

#include "core/snap.h"
#include "e1000_fx.h"

struct pair {
	struct fx *a, *b;
};

static int pair_setup(void **state)
{
	struct pair *p = calloc(1, sizeof(*p));
	void *s;
	fx_setup(&s);
	p->a = s;
	fx_setup(&s);
	p->b = s;
	*state = p;
	return 0;
}

static int pair_teardown(void **state)
{
	struct pair *p = *state;
	void *s = p->a;
	fx_teardown(&s);
	s = p->b;
	fx_teardown(&s);
	free(p);
	return 0;
}

static uint16_t io_base(struct fx *f)
{
	return (uint16_t)(cfg_rd(&f->trap, 1, PCI_BAR0 + 4 * E1000_IO_BAR, 4) & ~3u);
}

static uint32_t io_rw(struct fx *f, uint32_t off, bool write, uint32_t v)
{
	bus_dispatch(&f->trap, BUS_PIO, io_base(f) + off, &v, 4, write, 0);
	return v;
}

static uint32_t phy_rd(struct fx *f, uint32_t reg)
{
	wr(f, E1000_MDIC,
	   E1000_MDIC_OP_READ | reg << E1000_MDIC_REG_SHIFT |
	       E1000_PHY_ADDR << E1000_MDIC_PHY_SHIFT);
	return rd(f, E1000_MDIC);
}

/* A driver's work: rings, filters, VLAN, throttling, a PHY write, an
 * EEPROM read half shifted out, the I/O window, a received frame (its
 * statistics), a pending cause with the line up, and a TX frame half
 * gathered after a context descriptor. */
static void drive(struct fx *f)
{
	static const uint8_t bcast[60] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	static const uint8_t css[8] = {14, 24, 33, 0, 34, 50, 0, 0};
	tx_setup(f);
	rx_setup(f, 4, E1000_RCTL_EN | E1000_RCTL_BAM);
	wr(f, E1000_IMS, E1000_ICR_RXT0 | E1000_ICR_TXDW | E1000_ICR_LSC);
	wire_send(f, bcast, sizeof(bcast));
	e1000_rx_run(f->d);
	wr(f, E1000_ICS, E1000_ICR_LSC);
	wr(f, E1000_ITR, 0x100);
	wr(f, E1000_MTA + 12, 0x80000001);
	wr(f, E1000_RA + 8, 0x12345678);
	wr(f, E1000_RA + 12, 0x9abc | E1000_RAH_AV);
	wr(f, E1000_VFTA + 20, 0x10);
	wr(f, E1000_VET, 0x88a8);
	wr(f, E1000_CTRL, rd(f, E1000_CTRL) | E1000_CTRL_VME);
	wr(f, E1000_RDTR, 3);
	wr(f, E1000_TADV, 9);
	wr(f, E1000_MDIC,
	   E1000_MDIC_OP_WRITE | PHY_AUTONEG_ADV << E1000_MDIC_REG_SHIFT |
	       E1000_PHY_ADDR << E1000_MDIC_PHY_SHIFT | 0x01e1);
	/* EEPROM word 1 by microwire: opcode 110, address 000001, two bits out */
	unsigned int bits[] = {1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0};
	for (unsigned int i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		uint32_t di = bits[i] ? E1000_EECD_DI : 0;
		wr(f, E1000_EECD, E1000_EECD_CS | di);
		wr(f, E1000_EECD, E1000_EECD_CS | E1000_EECD_SK | di);
	}
	io_rw(f, 0, true, E1000_RCTL);
	txd_ctx(f, 0, css, 0, E1000_TXD_CMD_IP, 0, 0);
	memset(fake_mem_at(&f->fm, BUF), 0xaa, 40);
	txd_data(f, 1, BUF, 40, 0, E1000_TXD_POPTS_IXSM, 0);
	tx_go(f, 2);
	assert_true(f->d->tx_first_seen);
}

/* The card's state and its PCI function's, as devmgr_save writes them. */
static const uint8_t *save(struct fx *f, struct snap_writer *w, struct snap_image *img)
{
	char err[200] = "";
	size_t len;
	snap_writer_init(w);
	assert_int_equal(e1000_save(f->d, w, SNAP_ID_DEVICE, 0, err, sizeof(err)), 0);
	assert_int_equal(pci_device_save(e1000_pci(f->d), w, 0, err, sizeof(err)), 0);
	const uint8_t *b = snap_writer_image(w, &len);
	assert_int_equal(snap_parse(img, b, len, err, sizeof(err)), 0);
	return b;
}

static int restore(struct fx *f, const struct snap_image *img, char *err, size_t errlen)
{
	const struct snap_section *s = snap_find(img, SNAP_ID_DEVICE, 0);
	const struct snap_section *p = snap_find(img, SNAP_ID_PCI_FN, 0);
	if (e1000_restore(f->d, s->data, s->len, err, errlen) < 0)
		return -1;
	return pci_device_restore(e1000_pci(f->d), p->data, p->len, err, errlen);
}

static void test_round_trip(void **state)
{
	struct pair *p = *state;
	struct fx *a = p->a, *b = p->b;
	drive(a);
	a->pending_rdt = 6; /* a batched RDT write: saved applied */
	int flushes = a->flushes;
	struct snap_writer w;
	struct snap_image img;
	save(a, &w, &img);
	assert_true(a->flushes > flushes);
	memcpy(b->fm.ram, a->fm.ram, RAM_SIZE); /* the memory file */
	char err[200] = "";
	assert_int_equal(restore(b, &img, err, sizeof(err)), 0);
	assert_memory_equal(a->host.line, b->host.line, sizeof(a->host.line));
	assert_int_equal(b->d->irq_level, true);
	assert_int_equal(rd(b, E1000_RDT), 6);
	assert_memory_equal(&a->d->txc, &b->d->txc, sizeof(a->d->txc));
	assert_int_equal(io_rw(a, 0, false, 0), io_rw(b, 0, false, 0));
	for (uint32_t r = 0; r < 32; r++)
		assert_int_equal(phy_rd(a, r), phy_rd(b, r));
	assert_int_equal(rd(a, E1000_EECD), rd(b, E1000_EECD));
	for (uint32_t off = 0; off < E1000_REG_END; off += 4)
		if (rd(a, off) != rd(b, off))
			fail_msg("register %#x differs", off);
	assert_int_equal(b->host.line[0], a->host.line[0]);
	/* The half-gathered frame's EOP, then a whole frame: only the
	 * second reaches the wire. */
	uint8_t got[512];
	txd_data(b, 2, BUF, 20, E1000_TXD_CMD_EOP, 0, 0);
	memset(fake_mem_at(&b->fm, BUF + 0x1000), 0x55, 60);
	txd_legacy(b, 3, BUF + 0x1000, 60, E1000_TXD_CMD_EOP, 0, 0, 0);
	tx_go(b, 4);
	assert_int_equal(wire_recv(b, got, sizeof(got)), HDR + 60);
	assert_int_equal(got[HDR], 0x55);
	assert_int_equal(wire_recv(b, got, sizeof(got)), -1);
	assert_int_equal(b->d->stats.tx_dropped, 1);
	snap_image_free(&img);
	snap_writer_free(&w);
}

/* The card's section with byte `at` xored with x (SIZE_MAX: none), cut
 * to n bytes, onto b: refused, and b as it was. */
static void refused(struct pair *p, const struct snap_image *img, size_t n, size_t at, uint32_t x,
		    const char *want)
{
	const struct snap_section *s = snap_find(img, SNAP_ID_DEVICE, 0);
	uint8_t *c = calloc(1, s->len + 1);
	memcpy(c, s->data, s->len);
	if (at < s->len)
		c[at] ^= (uint8_t)x;
	char err[200] = "";
	if (e1000_restore(p->b->d, c, n, err, sizeof(err)) != -1)
		fail_msg("accepted: cut to %zu, byte %zu ^ %#x", n, at, x);
	assert_true(err[0] && !strchr(err, '\n'));
	if (want)
		assert_string_equal(err, want);
	assert_int_equal(rd(p->b, E1000_RDBAL), 0);
	assert_int_equal(rd(p->b, E1000_IMS), 0);
	assert_int_equal(p->b->host.line_changes, 0);
	free(c);
}

static void test_hostile_refused(void **state)
{
	struct pair *p = *state;
	drive(p->a);
	struct snap_writer w;
	struct snap_image img;
	save(p->a, &w, &img);
	size_t n = snap_find(&img, SNAP_ID_DEVICE, 0)->len;
	for (size_t k = 0; k <= n + 1; k += (k < 64 || k > n - 64) ? 1 : 997)
		if (k != n)
			refused(p, &img, k, SIZE_MAX, 0, NULL);
	const size_t regs = 4, stat = regs + E1000_REG_END, eeprom = stat + 256, phy = eeprom + 128;
	const size_t ee = phy + 64, ioaddr = ee + 16, delayed = ioaddr + 4, flags = delayed + 4;
	static const char pre[] = "e1000-0: saved state refused: ";
	char want[200];
	struct {
		size_t at;
		uint32_t x;
		const char *why;
	} bad[] = {
	    {0, 2, "its layout is unknown"},
	    {flags + 2, 1, "a reserved field is set"},
	    {flags + 1, 2, "a reserved field is set"},
	    {delayed, 4, "a reserved field is set"},
	    {eeprom + 1, 1, "its EEPROM differs (another MAC)"},
	    {ee + 4, 0x20, "its EEPROM access is in no state a driver can leave"},
	    {ee + 12, 0x40, "its EEPROM access is in no state a driver can leave"},
	    {ioaddr + 2, 2, "its I/O window points outside its registers"},
	    {phy + 2 * PHY_ID1, 1, "a read-only PHY register differs"},
	    {regs + E1000_STATUS, 1, "a register holds bits no driver can set"},
	    {regs + E1000_RDLEN + 2, 0x10, "a register holds bits no driver can set"},
	    {regs + E1000_TDT + 2, 1, "a register holds bits no driver can set"},
	    {regs + E1000_IMS + 3, 0x80, "a register holds bits no driver can set"},
	    {regs + E1000_CTRL + 3, 0x04, "a register holds bits no driver can set"},
	    {regs + E1000_STATS + 8, 1, "a register holds bits no driver can set"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(want, sizeof(want), "%s%s", pre, bad[i].why);
		refused(p, &img, n, bad[i].at, bad[i].x, want);
	}
	snap_image_free(&img);
	snap_writer_free(&w);
}

/* A live migration's switch on one host: the card lets go of its tap (a
 * single-queue tap takes one process), twice harmlessly; a take back that
 * cannot reopen it is one line, and the card is still destroyed cleanly. */
static void test_handover(void **state)
{
	struct pair *p = *state;
	char err[200] = "", b;
	assert_int_equal(e1000_handover(p->a->d, true, err, sizeof(err)), 0);
	assert_int_equal(recv(p->a->wire, &b, 1, MSG_DONTWAIT), 0); /* closed */
	assert_int_equal(e1000_handover(p->a->d, true, err, sizeof(err)), 0);
	assert_int_equal(e1000_handover(p->a->d, false, err, sizeof(err)), -1);
	assert_true(err[0] != '\0');
	assert_null(strchr(err, '\n'));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_round_trip, pair_setup, pair_teardown),
	    cmocka_unit_test_setup_teardown(test_hostile_refused, pair_setup, pair_teardown),
	    cmocka_unit_test_setup_teardown(test_handover, pair_setup, pair_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
