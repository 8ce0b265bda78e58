// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the e1000's transmit offloads and VLAN tags (issue 32,
 * src/devices/e1000/e1000_tx.c, e1000_rx.c): TSO contexts the host's GSO would
 * misread are dropped and counted, the legacy descriptor's checksum
 * insertion follows the 8254x manual, and 802.1Q tags are inserted (TX)
 * and stripped (RX) when CTRL.VME says so. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "e1000_fx.h"

#define TSO_CMD (E1000_TXD_CMD_TCP | E1000_TXD_CMD_IP | E1000_TXD_CMD_TSE)

/* ipcss ipcso ipcse, tucss tucso tucse: IPv4 at 14, TCP at 34 */
static const uint8_t tcp_ctx[8] = {14, 24, 33, 0, 34, 50, 0, 0};

/* One TSO packet through context `c` with MSS `mss`, its IPv4 header
 * `ihl` dwords long: whether it reached the tap (and its header in *h). */
static bool tso_send_ihl(struct fx *f, const uint8_t c[8], unsigned int ihl, uint16_t mss,
			 struct virtio_net_hdr_v1 *h)
{
	static uint8_t buf[E1000_TX_MAX + HDR];
	tx_setup(f);
	size_t len = tcp_frame(f, BUF, 4000);
	((uint8_t *)fake_mem_at(&f->fm, BUF))[14] =
	    (uint8_t)(0x40 | ihl); /* options: payload bytes */
	txd_ctx(f, 0, c, 4000, TSO_CMD, (uint8_t)(c[4] + 20), mss);
	txd_data(f, 1, BUF, (uint32_t)len, E1000_TXD_CMD_TSE | E1000_TXD_CMD_EOP | E1000_TXD_CMD_RS,
		 E1000_TXD_POPTS_TXSM, 0);
	tx_go(f, 2);
	assert_int_equal(desc(f, TX_RING, 1)[12], E1000_TXD_STAT_DD); /* completed anyway */
	ssize_t n = wire_recv(f, buf, sizeof(buf));
	if (n < 0)
		return false;
	assert_int_equal(n, HDR + (ssize_t)len);
	memcpy(h, buf, sizeof(*h));
	return true;
}

static bool tso_send(struct fx *f, const uint8_t c[8], uint16_t mss, struct virtio_net_hdr_v1 *h)
{
	return tso_send_ihl(f, c, 5, mss, h);
}

/* The checksum field must be TCP's (tucso = tucss + 16): anything else
 * would have the host write a checksum into the middle of a header or the
 * payload of every segment (CVE-2024-43897 class). */
static void test_tso_csum_offset_not_tcp_dropped(void **state)
{
	struct fx *f = *state;
	struct virtio_net_hdr_v1 h;
	static const uint8_t udp_off[8] = {14, 24, 33, 0, 34, 40, 0, 0}; /* +6: UDP's */
	static const uint8_t past[8] = {14, 24, 33, 0, 34, 52, 0, 0};	 /* +18 */
	assert_false(tso_send(f, udp_off, 1448, &h));
	assert_false(tso_send(f, past, 1448, &h));
	assert_int_equal(f->d->stats.tx_dropped, 2);
	assert_int_equal(f->d->stats.tx_tso, 0);
	assert_true(tso_send(f, tcp_ctx, 1448, &h));
	assert_int_equal(h.csum_start, 34);
	assert_int_equal(h.csum_offset, 16);
	assert_int_equal(f->d->stats.tx_tso, 1);
}

/* tucss must be where the IP header ends (ipcss + IHL): a TCP "header"
 * inside the IP options, or past a gap, is refused. */
static void test_tso_csum_start_not_after_ip_header_dropped(void **state)
{
	struct fx *f = *state;
	struct virtio_net_hdr_v1 h;
	static const uint8_t at38[8] = {14, 24, 33, 0, 38, 54, 0, 0};
	assert_false(tso_send_ihl(f, at38, 5, 1448, &h));    /* 4 bytes after the header */
	assert_false(tso_send_ihl(f, tcp_ctx, 6, 1448, &h)); /* inside the options */
	assert_int_equal(f->d->stats.tx_dropped, 2);
	assert_true(tso_send_ihl(f, at38, 6, 1448, &h)); /* right after them */
	assert_int_equal(h.csum_start, 38);
	assert_int_equal(f->d->stats.tx_tso, 1);
}

/* An MSS under NET_GSO_MIN_MSS would turn one 64 KiB descriptor into tens
 * of thousands of host segments: dropped and counted; the floor passes. */
static void test_tso_mss_floor(void **state)
{
	struct fx *f = *state;
	struct virtio_net_hdr_v1 h;
	assert_false(tso_send(f, tcp_ctx, 1, &h));
	assert_false(tso_send(f, tcp_ctx, NET_GSO_MIN_MSS - 1, &h));
	assert_int_equal(f->d->stats.tx_dropped, 2);
	assert_true(tso_send(f, tcp_ctx, NET_GSO_MIN_MSS, &h));
	assert_int_equal(h.gso_size, NET_GSO_MIN_MSS);
	assert_int_equal(f->d->stats.tx_tso, 1);
}

/* The one's complement sum, two bytes at a time: the definition. */
static uint16_t naive_csum(const uint8_t *p, size_t len)
{
	uint32_t s = 0;
	for (size_t i = 0; i + 1 < len; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Legacy IC: the checksum runs over the seed software left in the field
 * (8254x manual; QEMU's putsum keeps it), not over a zeroed field. */
static void test_legacy_ic_keeps_seed(void **state)
{
	struct fx *f = *state;
	uint8_t buf[512];
	tx_setup(f);
	size_t len = tcp_frame(f, BUF, 100);
	uint8_t *p = fake_mem_at(&f->fm, BUF);
	p[50] = 0x12; /* the seed at CSO 50 (TCP's checksum field) */
	p[51] = 0x34;
	uint8_t want[512];
	memcpy(want, p, len);
	uint16_t sum = naive_csum(want + 34, len - 34); /* with the seed */
	txd_legacy(f, 0, BUF, (uint16_t)len,
		   E1000_TXD_CMD_EOP | E1000_TXD_CMD_IC | E1000_TXD_CMD_RS, 50, 34, 0);
	tx_go(f, 1);
	assert_int_equal(wire_recv(f, buf, sizeof(buf)), HDR + (ssize_t)len);
	assert_int_equal(be16(buf + HDR + 50), sum);
	assert_int_equal(f->d->stats.tx_packets, 1);
}

/* A checksum offset past the packet skips the insertion (the manual,
 * QEMU): the packet goes unchanged, not dropped. IC and IXSM both. */
static void test_csum_offset_out_of_range_skips(void **state)
{
	struct fx *f = *state;
	uint8_t buf[512];
	static const uint8_t ixsm_past[8] = {14, 200, 33, 0, 34, 50, 0, 0};
	tx_setup(f);
	size_t len = tcp_frame(f, BUF, 100);
	const uint8_t *p = fake_mem_at(&f->fm, BUF);
	txd_legacy(f, 0, BUF, (uint16_t)len,
		   E1000_TXD_CMD_EOP | E1000_TXD_CMD_IC | E1000_TXD_CMD_RS, 200, 34, 0);
	txd_ctx(f, 1, ixsm_past, 0, E1000_TXD_CMD_TCP | E1000_TXD_CMD_IP, 0, 0);
	txd_data(f, 2, BUF, (uint32_t)len, E1000_TXD_CMD_EOP | E1000_TXD_CMD_RS,
		 E1000_TXD_POPTS_IXSM, 0);
	tx_go(f, 3);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(wire_recv(f, buf, sizeof(buf)), HDR + (ssize_t)len);
		assert_memory_equal(buf + HDR, p, len);
	}
	assert_int_equal(f->d->stats.tx_dropped, 0);
	assert_int_equal(f->d->stats.tx_packets, 2);
}

/* TXSM with a TUCSE before the end: the checksum covers [TUCSS, TUCSE]
 * only, so it is done here (the host's partial checksum would run to the
 * end); TUCSE 0 still goes to the host. */
static void test_txsm_honours_tucse(void **state)
{
	struct fx *f = *state;
	uint8_t buf[512];
	struct virtio_net_hdr_v1 h;
	static const uint8_t short_ctx[8] = {14, 24, 33, 0, 34, 50, 63, 0}; /* to byte 63 */
	tx_setup(f);
	size_t len = tcp_frame(f, BUF, 100);
	uint8_t *p = fake_mem_at(&f->fm, BUF);
	p[50] = 0xab; /* the pseudo header's sum, as a driver seeds it */
	p[51] = 0xcd;
	uint16_t sum = naive_csum(p + 34, 63 + 1 - 34);
	txd_ctx(f, 0, short_ctx, 0, E1000_TXD_CMD_TCP | E1000_TXD_CMD_IP, 0, 0);
	txd_data(f, 1, BUF, (uint32_t)len, E1000_TXD_CMD_EOP | E1000_TXD_CMD_RS,
		 E1000_TXD_POPTS_TXSM, 0);
	tx_go(f, 2);
	assert_int_equal(wire_recv(f, buf, sizeof(buf)), HDR + (ssize_t)len);
	memcpy(&h, buf, sizeof(h));
	assert_int_equal(h.flags, 0);
	assert_int_equal(be16(buf + HDR + 50), sum);
	/* TUCSE 0: to the end, by the host */
	txd_ctx(f, 2, tcp_ctx, 0, E1000_TXD_CMD_TCP | E1000_TXD_CMD_IP, 0, 0);
	txd_data(f, 3, BUF, (uint32_t)len, E1000_TXD_CMD_EOP | E1000_TXD_CMD_RS,
		 E1000_TXD_POPTS_TXSM, 0);
	tx_go(f, 4);
	assert_int_equal(wire_recv(f, buf, sizeof(buf)), HDR + (ssize_t)len);
	memcpy(&h, buf, sizeof(h));
	assert_int_equal(h.flags, VIRTIO_NET_HDR_F_NEEDS_CSUM);
	assert_int_equal(h.csum_start, 34);
	assert_int_equal(h.csum_offset, 16);
}

static void vme_on(struct fx *f)
{
	wr(f, E1000_CTRL, rd(f, E1000_CTRL) | E1000_CTRL_VME);
}

/* CTRL.VME and a descriptor's VLE: the 802.1Q tag (TPID from VET, TCI
 * from the descriptor's special field) goes after the MAC addresses, and
 * the tap header's offsets move with it; without VME, VLE is ignored. */
static void test_vlan_tx_insert(void **state)
{
	struct fx *f = *state;
	static uint8_t buf[E1000_TX_MAX + HDR];
	struct virtio_net_hdr_v1 h;
	tx_setup(f);
	size_t len = tcp_frame(f, BUF, 100);
	const uint8_t *p = fake_mem_at(&f->fm, BUF);
	uint32_t cmd = E1000_TXD_CMD_EOP | E1000_TXD_CMD_RS | E1000_TXD_CMD_VLE;
	txd_legacy(f, 0, BUF, (uint16_t)len, cmd, 0, 0, 0x2005);
	tx_go(f, 1); /* VME clear: untagged */
	assert_int_equal(wire_recv(f, buf, sizeof(buf)), HDR + (ssize_t)len);
	assert_memory_equal(buf + HDR, p, len);
	vme_on(f);
	assert_int_equal(rd(f, E1000_VET), 0x8100);
	txd_legacy(f, 1, BUF, (uint16_t)len, cmd, 0, 0, 0x2005);
	tx_go(f, 2);
	assert_int_equal(wire_recv(f, buf, sizeof(buf)), HDR + (ssize_t)len + 4);
	assert_memory_equal(buf + HDR, p, 12);
	assert_memory_equal(buf + HDR + 12, "\x81\x00\x20\x05", 4);
	assert_memory_equal(buf + HDR + 16, p + 12, len - 12);
	/* TSO and checksum offload: the host finds TCP 4 bytes further on */
	size_t big = tcp_frame(f, BUF, 4000);
	txd_ctx(f, 2, tcp_ctx, 4000, TSO_CMD, 54, 1448);
	txd_data(f, 3, BUF, (uint32_t)big,
		 E1000_TXD_CMD_TSE | E1000_TXD_CMD_EOP | E1000_TXD_CMD_RS | E1000_TXD_CMD_VLE,
		 E1000_TXD_POPTS_TXSM, 0x0064);
	tx_go(f, 4);
	assert_int_equal(wire_recv(f, buf, sizeof(buf)), HDR + (ssize_t)big + 4);
	memcpy(&h, buf, sizeof(h));
	assert_int_equal(h.gso_type, VIRTIO_NET_HDR_GSO_TCPV4);
	assert_int_equal(h.csum_start, 38);
	assert_int_equal(h.csum_offset, 16);
	assert_int_equal(h.hdr_len, 58);
	assert_memory_equal(buf + HDR + 12, "\x81\x00\x00\x64\x08\x00\x45", 7);
}

/* RX with CTRL.VME: a tagged frame reaches the guest without its tag,
 * the TCI in the descriptor's special field and status VP; without VME it
 * stays as it came. */
static void test_vlan_rx_strip(void **state)
{
	struct fx *f = *state;
	uint8_t fr[100];
	memcpy(fr, MAC, 6);
	memcpy(fr + 6, PEER, 6);
	memcpy(fr + 12, "\x81\x00\x20\x64\x08\x00", 6);
	for (size_t i = 18; i < sizeof(fr); i++)
		fr[i] = (uint8_t)i;
	rx_setup(f, NDESC - 1, E1000_RCTL_EN | E1000_RCTL_SECRC);
	wire_send(f, fr, sizeof(fr));
	e1000_rx_run(f->d);
	const uint8_t *d0 = desc(f, RX_RING, 0);
	assert_int_equal(d0[8] | d0[9] << 8, sizeof(fr));
	assert_int_equal(d0[12] & E1000_RXD_STAT_VP, 0);
	assert_memory_equal(fake_mem_at(&f->fm, RX_BUF), fr, sizeof(fr));
	vme_on(f);
	wire_send(f, fr, sizeof(fr));
	e1000_rx_run(f->d);
	const uint8_t *d1 = desc(f, RX_RING, 1);
	const uint8_t *got = fake_mem_at(&f->fm, RX_BUF + 0x1000);
	assert_int_equal(d1[8] | d1[9] << 8, sizeof(fr) - 4);
	assert_true(d1[12] & E1000_RXD_STAT_VP);
	assert_int_equal(d1[14] | d1[15] << 8, 0x2064);
	assert_memory_equal(got, fr, 12);
	assert_memory_equal(got + 12, fr + 16, sizeof(fr) - 16);
	assert_int_equal(f->d->stats.rx_packets, 2);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_tso_csum_offset_not_tcp_dropped),
	    T(test_tso_csum_start_not_after_ip_header_dropped),
	    T(test_tso_mss_floor),
	    T(test_legacy_ic_keeps_seed),
	    T(test_csum_offset_out_of_range_skips),
	    T(test_txsm_honours_tucse),
	    T(test_vlan_tx_insert),
	    T(test_vlan_rx_strip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
