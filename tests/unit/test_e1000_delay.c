// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the e1000's interrupt delay timers (src/devices/
 * e1000_delay.c): RDTR/RADV hold RXT0, TIDV/TADV hold TXDW for descriptors
 * with IDE, FPD releases at once. The clock is the test's; the timer's
 * firing is a direct call of its handler. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/bus.h"
#include "devices/e1000/e1000.h"
#include "devices/e1000/e1000_priv.h"
#include "net/vnet_hdr.h"
#include "fake_mem.h"
#include "fake_pci_host.h"

#define RAM_SIZE (1u << 20)
#define TX_RING	 0x10000
#define RX_RING	 0x20000
#define NDESC	 8
#define BUF	 0x40000
#define US	 1000ull /* ns */

static const uint8_t MAC[6] = {0x02, 0x73, 0x6b, 0x69, 0x66, 0x07};

struct fx {
	struct fake_mem fm;
	struct bus trap;
	struct fake_host host;
	struct pci_bus *pci;
	struct e1000 *d;
	int wire;
	uint64_t bar;
	uint32_t gsi;
};

static uint64_t fake_now;

static uint64_t fake_clock(void)
{
	return fake_now;
}

static void wr(struct fx *f, uint32_t off, uint32_t v)
{
	mmio_wr(&f->trap, f->bar + off, 4, v);
}

static uint32_t rd(struct fx *f, uint32_t off)
{
	return (uint32_t)mmio_rd(&f->trap, f->bar + off, 4);
}

static int line(struct fx *f)
{
	return f->host.line[f->gsi % 32];
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	int sv[2];
	char err[128];
	assert_int_equal(fake_mem_init(&f->fm, RAM_SIZE), 0);
	bus_init(&f->trap);
	f->pci = pci_bus_create_with(&f->trap, &fake_host_ops, &f->host);
	assert_non_null(f->pci);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	f->wire = sv[1];
	struct e1000_ctx ctx = {.name = "e1000-0", .gm = &f->fm.gm, .coalesce = E1000_COALESCE_OFF};
	tap_from_fd(&ctx.tap, sv[0]);
	memcpy(ctx.mac, MAC, 6);
	f->d = e1000_create(&ctx, err, sizeof(err));
	assert_non_null(f->d);
	f->d->clock_ns = fake_clock;
	fake_now = 1000000;
	assert_int_equal(pci_bus_add_device(f->pci, e1000_pci(f->d), err, sizeof(err)), 0);
	cfg_wr(&f->trap, 1, PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	f->bar = cfg_bar64(&f->trap, 1, 0);
	f->gsi = pci_intx_gsi(1, 0);
	wr(f, E1000_IMS, E1000_ICR_TXDW | E1000_ICR_RXT0);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	pci_bus_destroy(f->pci);
	e1000_stop(f->d);
	e1000_destroy(f->d);
	close(f->wire);
	bus_destroy(&f->trap);
	fake_mem_free(&f->fm);
	free(f);
	return 0;
}

/* ---- TX ---- */

static void tx_setup(struct fx *f, uint32_t tidv, uint32_t tadv)
{
	wr(f, E1000_TDBAL, TX_RING);
	wr(f, E1000_TDLEN, NDESC * E1000_DESC_LEN);
	wr(f, E1000_TIDV, tidv);
	wr(f, E1000_TADV, tadv);
	wr(f, E1000_TCTL, E1000_TCTL_EN);
}

/* One 60-byte packet in descriptor i, sent (TDT = i + 1). */
static void tx_one(struct fx *f, uint32_t i, uint32_t cmd)
{
	uint8_t *d = fake_mem_at(&f->fm, TX_RING + (uint64_t)i * E1000_DESC_LEN);
	uint64_t buf = BUF;
	uint32_t lower = 60 | E1000_TXD_CMD_EOP | E1000_TXD_CMD_RS | cmd;
	memset(fake_mem_at(&f->fm, BUF), 0xff, 60);
	memset(d, 0, 16);
	memcpy(d, &buf, 8);
	memcpy(d + 8, &lower, 4);
	wr(f, E1000_TDT, i + 1);
}

static void test_tx_ide_waits_tidv_restarted_per_packet(void **state)
{
	struct fx *f = *state;
	tx_setup(f, 10, 0); /* 10.24 us, no bound */
	tx_one(f, 0, E1000_TXD_CMD_IDE);
	assert_int_equal(rd(f, E1000_TDH), 1); /* sent and written back ... */
	assert_int_equal(line(f), 0);	       /* ... but TXDW waits */
	fake_now += 8 * US;
	tx_one(f, 1, E1000_TXD_CMD_IDE); /* restarts: due at 18.24 us */
	fake_now += 8 * US;
	e1000_delay_event(f->d, 0);
	assert_int_equal(line(f), 0);
	assert_int_equal(rd(f, E1000_ICR) & E1000_ICR_TXDW, 0);
	fake_now += 3 * US;
	e1000_delay_event(f->d, 0);
	assert_int_equal(line(f), 1);
	assert_true(rd(f, E1000_ICR) & E1000_ICR_TXDW);
	/* nothing left waiting */
	fake_now += 100 * US;
	e1000_delay_event(f->d, 0);
	assert_int_equal(line(f), 0);
}

static void test_tx_tadv_bounds_the_wait(void **state)
{
	struct fx *f = *state;
	tx_setup(f, 10, 15); /* restarted 10.24 us, at most 15.36 us */
	tx_one(f, 0, E1000_TXD_CMD_IDE);
	fake_now += 8 * US;
	tx_one(f, 1, E1000_TXD_CMD_IDE);
	fake_now += 8 * US; /* 16 us after the first: the bound ran out */
	e1000_delay_event(f->d, 0);
	assert_int_equal(line(f), 1);
}

static void test_tx_without_ide_at_once(void **state)
{
	struct fx *f = *state;
	tx_setup(f, 10, 15);
	tx_one(f, 0, 0);
	assert_int_equal(line(f), 1);
	assert_true(rd(f, E1000_ICR) & E1000_ICR_TXDW);
}

static void test_tidv_fpd_releases_at_once(void **state)
{
	struct fx *f = *state;
	tx_setup(f, 1000, 0);
	tx_one(f, 0, E1000_TXD_CMD_IDE);
	assert_int_equal(line(f), 0);
	wr(f, E1000_TIDV, 1000 | E1000_DELAY_FPD);
	assert_int_equal(line(f), 1);
	assert_int_equal(rd(f, E1000_TIDV), 1000); /* FPD reads 0 */
}

static void test_masked_or_throttled_cause_set_at_once(void **state)
{
	struct fx *f = *state;
	tx_setup(f, 10, 0);
	/* masked (NAPI polling): TXDW is latched at once, no line */
	wr(f, E1000_IMC, E1000_ICR_TXDW);
	tx_one(f, 0, E1000_TXD_CMD_IDE);
	assert_int_equal(line(f), 0);
	assert_true(rd(f, E1000_ICR) & E1000_ICR_TXDW);
	/* ITR holds the line past TIDV anyway: the cause waits in ICR */
	wr(f, E1000_IMS, E1000_ICR_TXDW);
	wr(f, E1000_ITR, 1000);		  /* 256 us */
	wr(f, E1000_ICS, E1000_ICR_TXDW); /* an interrupt: the interval starts */
	assert_int_equal(line(f), 1);
	rd(f, E1000_ICR);
	tx_one(f, 1, E1000_TXD_CMD_IDE);
	assert_int_equal(line(f), 0);
	assert_int_equal(f->d->tx_delay.due_ns, 0); /* no delay timer ... */
	assert_true(f->d->itr_armed);		    /* ... ITR's instead */
	fake_now += 256 * US;
	e1000_itr_event(f->d, 0);
	assert_int_equal(line(f), 1);
}

/* ---- RX ---- */

static void rx_setup(struct fx *f, uint32_t rdtr, uint32_t radv)
{
	for (uint32_t i = 0; i < NDESC; i++) {
		uint64_t b = BUF + 0x1000 * (uint64_t)i;
		uint8_t *d = fake_mem_at(&f->fm, RX_RING + (uint64_t)i * E1000_DESC_LEN);
		memset(d, 0, 16);
		memcpy(d, &b, 8);
	}
	wr(f, E1000_RDBAL, RX_RING);
	wr(f, E1000_RDLEN, NDESC * E1000_DESC_LEN);
	wr(f, E1000_RDT, NDESC - 1);
	wr(f, E1000_RDTR, rdtr);
	wr(f, E1000_RADV, radv);
	wr(f, E1000_RCTL, E1000_RCTL_EN);
}

static void rx_one(struct fx *f)
{
	uint8_t pkt[VIRTIO_NET_HDR_LEN + 60];
	memset(pkt, 0, sizeof(pkt));
	memcpy(pkt + VIRTIO_NET_HDR_LEN, MAC, 6);
	assert_int_equal(send(f->wire, pkt, sizeof(pkt), 0), (ssize_t)sizeof(pkt));
	e1000_rx_run(f->d);
}

static void test_rx_rdtr_restarts_radv_bounds(void **state)
{
	struct fx *f = *state;
	rx_setup(f, 10, 15);
	rx_one(f);
	assert_int_equal(rd(f, E1000_RDH), 1);
	assert_int_equal(line(f), 0);
	fake_now += 8 * US;
	rx_one(f); /* RDTR restarts: due at 18.24 us, but RADV says 15.36 */
	fake_now += 6 * US;
	e1000_delay_event(f->d, 0);
	assert_int_equal(line(f), 0);
	fake_now += 2 * US;
	e1000_delay_event(f->d, 0);
	assert_int_equal(line(f), 1);
	assert_true(rd(f, E1000_ICR) & E1000_ICR_RXT0);
}

static void test_rx_rdtr_zero_at_once(void **state)
{
	struct fx *f = *state;
	rx_setup(f, 0, 15); /* RADV alone does nothing */
	rx_one(f);
	assert_int_equal(line(f), 1);
}

static void test_rdtr_fpd_and_reset(void **state)
{
	struct fx *f = *state;
	rx_setup(f, 1000, 0);
	rx_one(f);
	assert_int_equal(line(f), 0);
	wr(f, E1000_RDTR, 1000 | E1000_DELAY_FPD);
	assert_int_equal(line(f), 1);
	assert_true(rd(f, E1000_ICR) & E1000_ICR_RXT0);
	/* a reset forgets a waiting cause */
	rx_one(f);
	wr(f, E1000_CTRL, E1000_CTRL_RST);
	wr(f, E1000_IMS, E1000_ICR_RXT0);
	fake_now += 10000 * US;
	e1000_delay_event(f->d, 0);
	assert_int_equal(line(f), 0);
}

#define T(t) cmocka_unit_test_setup_teardown(t, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_tx_ide_waits_tidv_restarted_per_packet),
	    T(test_tx_tadv_bounds_the_wait),
	    T(test_tx_without_ide_at_once),
	    T(test_tidv_fpd_releases_at_once),
	    T(test_masked_or_throttled_cause_set_at_once),
	    T(test_rx_rdtr_restarts_radv_bounds),
	    T(test_rx_rdtr_zero_at_once),
	    T(test_rdtr_fpd_and_reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
