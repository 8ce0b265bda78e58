// SPDX-License-Identifier: Apache-2.0
/* A fixture for the e1000's unit tests (test_e1000_offload.c,
 * test_e1000_ioport.c): the device on a fake PCI bus and fake guest RAM, a
 * SOCK_SEQPACKET socketpair standing in for the tap (one packet per message
 * behind the 12-byte virtio-net header), and a fake coalesced ring holding
 * at most one batched RDT write, which a flush replays. The test plays the
 * driver through the real config, MMIO and port handlers. */
#ifndef SKIFF_TEST_E1000_FX_H
#define SKIFF_TEST_E1000_FX_H

#include <stdio.h>
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
#include "iothread/iothread.h"

#define RAM_SIZE (4u << 20)
#define TX_RING	 0x10000
#define RX_RING	 0x20000
#define NDESC	 8
#define BUF	 0x100000
#define RX_BUF	 0x200000
#define HDR	 VIRTIO_NET_HDR_LEN

static const uint8_t MAC[6] = {0x02, 0x73, 0x6b, 0x69, 0x66, 0x07};
static const uint8_t PEER[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};

struct fx {
	struct fake_mem fm;
	struct bus trap;
	struct fake_host host;
	struct pci_bus *pci;
	struct e1000 *d;
	int wire;
	uint64_t bar;
	int flushes;
	int64_t pending_rdt; /* a batched RDT write the next flush replays, or -1 */
	struct iothread io;  /* set up, never started */
};

static int fx_flush_calls __attribute__((unused));

static inline void fx_flush(void *o)
{
	struct fx *f = o;
	f->flushes++;
	fx_flush_calls++;
	if (f->pending_rdt >= 0) {
		uint32_t v = (uint32_t)f->pending_rdt;
		f->pending_rdt = -1;
		mmio_wr(&f->trap, f->bar + E1000_RDT, 4, v);
	}
}

static inline int fx_zone(void *o, uint64_t addr, uint32_t len)
{
	(void)o;
	(void)addr;
	(void)len;
	return 0;
}

static inline int fx_setup(void **state)
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
	f->pending_rdt = -1;
	assert_int_equal(iothread_init(&f->io, "io0"), 0);
	struct e1000_ctx ctx = {.name = "e1000-0",
				.gm = &f->fm.gm,
				.io = &f->io,
				.coalesce = E1000_COALESCE_ON,
				.zone_add = fx_zone,
				.zone_del = fx_zone,
				.flush = fx_flush,
				.cm_opaque = f};
	tap_from_fd(&ctx.tap, sv[0]);
	memcpy(ctx.mac, MAC, 6);
	f->d = e1000_create(&ctx, err, sizeof(err));
	assert_non_null(f->d);
	assert_int_equal(pci_bus_add_device(f->pci, e1000_pci(f->d), err, sizeof(err)), 0);
	cfg_wr(&f->trap, 1, PCI_COMMAND, 2,
	       PCI_COMMAND_IO | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	f->bar = cfg_bar64(&f->trap, 1, 0);
	assert_true(f->bar != 0);
	*state = f;
	return 0;
}

static inline int fx_teardown(void **state)
{
	struct fx *f = *state;
	pci_bus_destroy(f->pci);
	e1000_stop(f->d);
	e1000_destroy(f->d);
	iothread_destroy(&f->io);
	close(f->wire);
	bus_destroy(&f->trap);
	fake_mem_free(&f->fm);
	free(f);
	return 0;
}

static inline void wr(struct fx *f, uint32_t off, uint32_t v)
{
	mmio_wr(&f->trap, f->bar + off, 4, v);
}

static inline uint32_t rd(struct fx *f, uint32_t off)
{
	return (uint32_t)mmio_rd(&f->trap, f->bar + off, 4);
}

static inline uint8_t *desc(struct fx *f, uint64_t ring, uint32_t i)
{
	return fake_mem_at(&f->fm, ring + (uint64_t)i * E1000_DESC_LEN);
}

/* TX runs on the I/O thread's turn: the test takes that turn. */
static inline void tx_go(struct fx *f, uint32_t tdt)
{
	wr(f, E1000_TDT, tdt);
	e1000_sched_event(f->d, 0);
}

static inline void tx_setup(struct fx *f)
{
	wr(f, E1000_TDBAL, TX_RING);
	wr(f, E1000_TDBAH, 0);
	wr(f, E1000_TDLEN, NDESC * E1000_DESC_LEN);
	wr(f, E1000_TDH, 0);
	wr(f, E1000_TDT, 0);
	wr(f, E1000_TCTL, E1000_TCTL_EN);
}

/* A legacy descriptor: buffer, length, command bits (24-31), CSO, CSS,
 * special. */
static inline void txd_legacy(struct fx *f, uint32_t i, uint64_t buf, uint16_t len, uint32_t cmd,
			      uint8_t cso, uint8_t css, uint16_t special)
{
	uint8_t *d = desc(f, TX_RING, i);
	uint32_t lower = len | cmd;
	memset(d, 0, 16);
	memcpy(d, &buf, 8);
	memcpy(d + 8, &lower, 4);
	d[10] = cso;
	d[13] = css;
	memcpy(d + 14, &special, 2);
}

static inline void txd_data(struct fx *f, uint32_t i, uint64_t buf, uint32_t len, uint32_t cmd,
			    uint8_t popts, uint16_t special)
{
	uint8_t *d = desc(f, TX_RING, i);
	uint32_t lower = len | cmd | E1000_TXD_CMD_DEXT | E1000_TXD_DTYP_D;
	memset(d, 0, 16);
	memcpy(d, &buf, 8);
	memcpy(d + 8, &lower, 4);
	d[13] = popts;
	memcpy(d + 14, &special, 2);
}

/* A context descriptor: ipcss ipcso ipcse(2) tucss tucso tucse(2). */
static inline void txd_ctx(struct fx *f, uint32_t i, const uint8_t css_so[8], uint32_t paylen,
			   uint32_t tucmd, uint8_t hdr_len, uint16_t mss)
{
	uint8_t *d = desc(f, TX_RING, i);
	uint32_t lower = paylen | tucmd | E1000_TXD_CMD_DEXT;
	memcpy(d, css_so, 8);
	memcpy(d + 8, &lower, 4);
	d[12] = 0;
	d[13] = hdr_len;
	memcpy(d + 14, &mss, 2);
}

/* An IPv4/TCP frame to PEER at gpa (14 + 20 + 20 header bytes, then
 * payload bytes); returns its length. */
static inline size_t tcp_frame(struct fx *f, uint64_t gpa, size_t payload)
{
	uint8_t *p = fake_mem_at(&f->fm, gpa);
	size_t len = 54 + payload;
	memcpy(p, PEER, 6);
	memcpy(p + 6, MAC, 6);
	p[12] = 0x08;
	p[13] = 0x00;
	memset(p + 14, 0, 40);
	p[14] = 0x45;
	p[23] = 6; /* TCP */
	memcpy(p + 26, "\xa9\xfe\x0c\x02\xa9\xfe\x0c\x01", 8);
	p[14 + 20 + 12] = 0x50; /* data offset 5 */
	for (size_t i = 54; i < len; i++)
		p[i] = (uint8_t)i;
	return len;
}

/* The next message on the wire, or -1 if none. */
static inline ssize_t wire_recv(struct fx *f, void *buf, size_t len)
{
	return recv(f->wire, buf, len, MSG_DONTWAIT);
}

static inline void rx_setup(struct fx *f, uint32_t tail, uint32_t rctl)
{
	for (uint32_t i = 0; i < NDESC; i++) {
		uint64_t b = RX_BUF + 0x1000 * (uint64_t)i;
		memset(desc(f, RX_RING, i), 0, 16);
		memcpy(desc(f, RX_RING, i), &b, 8);
	}
	wr(f, E1000_RDBAL, RX_RING);
	wr(f, E1000_RDBAH, 0);
	wr(f, E1000_RDLEN, NDESC * E1000_DESC_LEN);
	wr(f, E1000_RDH, 0);
	wr(f, E1000_RDT, tail);
	wr(f, E1000_RCTL, rctl);
}

/* Sends frame p (len bytes) from the "host" behind a plain vnet header. */
static inline void wire_send(struct fx *f, const uint8_t *p, size_t len)
{
	static uint8_t pkt[HDR + 4096];
	assert_true(len <= 4096);
	memset(pkt, 0, HDR);
	memcpy(pkt + HDR, p, len);
	assert_int_equal(send(f->wire, pkt, HDR + len, 0), (ssize_t)(HDR + len));
}

#endif
