// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the e1000's receive offloads (src/devices/e1000/e1000_rx.c,
 * e1000_rx_gso.c) and its checksum helper: a frame whose TCP checksum the
 * host left partial (NEEDS_CSUM) reaches the guest completed, and reported
 * checked (TCPCS, IPCS) only when RXCSUM asks and the frame is an IPv4
 * TCP/UDP one with a sound header; anything else says IXSM. A host GSO
 * frame reaches the guest as the segments the host would have sent. The
 * tap is a SOCK_SEQPACKET socketpair with the 12-byte virtio-net header. */
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
#define RX_RING	 0x20000
#define NDESC	 8
#define BUF	 0x40000
#define HDR	 VIRTIO_NET_HDR_LEN
#define TCP_LEN	 200 /* TCP header and payload */
#define FRAME	 (14 + 20 + TCP_LEN)

static const uint8_t MAC[6] = {0x02, 0x73, 0x6b, 0x69, 0x66, 0x07};

struct fx {
	struct fake_mem fm;
	struct bus trap;
	struct fake_host host;
	struct pci_bus *pci;
	struct e1000 *d;
	int wire;
	uint64_t bar;
};

static void wr(struct fx *f, uint32_t off, uint32_t v)
{
	mmio_wr(&f->trap, f->bar + off, 4, v);
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
	assert_int_equal(pci_bus_add_device(f->pci, e1000_pci(f->d), err, sizeof(err)), 0);
	cfg_wr(&f->trap, 1, PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	f->bar = cfg_bar64(&f->trap, 1, 0);
	for (uint32_t i = 0; i < NDESC; i++) {
		uint64_t b = BUF + 0x1000 * (uint64_t)i;
		uint8_t *d = fake_mem_at(&f->fm, RX_RING + 16 * (uint64_t)i);
		memset(d, 0, 16);
		memcpy(d, &b, 8);
	}
	wr(f, E1000_RDBAL, RX_RING);
	wr(f, E1000_RDLEN, NDESC * E1000_DESC_LEN);
	wr(f, E1000_RDT, NDESC - 1);
	wr(f, E1000_RCTL, E1000_RCTL_EN);
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

/* The one's complement sum, two bytes at a time: the definition. */
static uint16_t naive_sum(const uint8_t *p, size_t len, uint32_t s)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* An IPv4/TCP frame to the device's MAC, its IP header checksum right and
 * its TCP checksum field holding the pseudo-header's sum (what a host
 * with TUN_F_CSUM sends), behind a vnet header with flags. */
static void send_tcp(struct fx *f, uint8_t flags, uint16_t csum_start, uint8_t *out)
{
	uint8_t pkt[HDR + FRAME] = {0};
	struct virtio_net_hdr_v1 h = {.flags = flags, .csum_start = csum_start, .csum_offset = 16};
	memcpy(pkt, &h, sizeof(h));
	uint8_t *e = pkt + HDR, *ip = e + 14, *tcp = ip + 20;
	memcpy(e, MAC, 6);
	e[12] = 0x08;
	ip[0] = 0x45;
	ip[2] = (20 + TCP_LEN) >> 8;
	ip[3] = (uint8_t)(20 + TCP_LEN);
	ip[8] = 64;
	ip[9] = 6;
	memcpy(ip + 12, "\xa9\xfe\x0a\x01\xa9\xfe\x0a\x02", 8);
	uint16_t ic = (uint16_t)~naive_sum(ip, 20, 0);
	ip[10] = (uint8_t)(ic >> 8);
	ip[11] = (uint8_t)ic;
	for (int i = 0; i < TCP_LEN; i++)
		tcp[i] = (uint8_t)(i * 7 + 3);
	tcp[12] = 0x50;
	/* pseudo-header: addresses, protocol, TCP length */
	uint16_t ph = naive_sum(ip + 12, 8, 6 + TCP_LEN);
	tcp[16] = (uint8_t)(ph >> 8);
	tcp[17] = (uint8_t)ph;
	if (out)
		memcpy(out, e, FRAME);
	assert_int_equal(send(f->wire, pkt, sizeof(pkt), 0), (ssize_t)sizeof(pkt));
}

static uint8_t status0(struct fx *f)
{
	return *(uint8_t *)fake_mem_at(&f->fm, RX_RING + 12);
}

/* The TCP checksum verifies: pseudo-header plus segment sum to 0xffff. */
static bool tcp_csum_ok(const uint8_t *frame)
{
	const uint8_t *ip = frame + 14;
	uint32_t ph = naive_sum(ip + 12, 8, 6 + TCP_LEN);
	return naive_sum(ip + 20, TCP_LEN, ph) == 0xffff;
}

static void test_csum_add_matches_definition(void **state)
{
	(void)state;
	uint8_t b[301];
	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)(0xf3 * i + 0x5d);
	memset(b + 100, 0xff, 64); /* carries */
	for (size_t len = 0; len <= sizeof(b); len++)
		for (uint32_t seed = 0; seed < 0x30000; seed += 0xffff)
			assert_int_equal(e1000_csum_fold(e1000_csum_add(seed, b, len)),
					 naive_sum(b, len, seed));
}

static void test_partial_csum_completed_and_reported(void **state)
{
	struct fx *f = *state;
	wr(f, E1000_RXCSUM, E1000_RXCSUM_TUOFL | E1000_RXCSUM_IPOFL);
	uint8_t sent[FRAME];
	send_tcp(f, VIRTIO_NET_HDR_F_NEEDS_CSUM, 34, sent);
	assert_false(tcp_csum_ok(sent)); /* partial as sent */
	e1000_rx_run(f->d);
	assert_int_equal(f->d->stats.rx_packets, 1);
	assert_true(tcp_csum_ok(fake_mem_at(&f->fm, BUF)));
	assert_int_equal(status0(f), E1000_RXD_STAT_DD | E1000_RXD_STAT_EOP | E1000_RXD_STAT_TCPCS |
					 E1000_RXD_STAT_IPCS);
}

/* Without RXCSUM the guest checks itself (IXSM), on a completed frame. */
static void test_without_rxcsum_completed_not_reported(void **state)
{
	struct fx *f = *state;
	send_tcp(f, VIRTIO_NET_HDR_F_NEEDS_CSUM, 34, NULL);
	e1000_rx_run(f->d);
	assert_true(tcp_csum_ok(fake_mem_at(&f->fm, BUF)));
	assert_int_equal(status0(f), E1000_RXD_STAT_DD | E1000_RXD_STAT_EOP | E1000_RXD_STAT_IXSM);
}

/* The host did not vouch (no flags): bytes untouched, IXSM. */
static void test_unvouched_frame_not_reported(void **state)
{
	struct fx *f = *state;
	wr(f, E1000_RXCSUM, E1000_RXCSUM_TUOFL | E1000_RXCSUM_IPOFL);
	uint8_t sent[FRAME];
	send_tcp(f, 0, 0, sent);
	e1000_rx_run(f->d);
	assert_memory_equal(fake_mem_at(&f->fm, BUF), sent, FRAME);
	assert_int_equal(status0(f), E1000_RXD_STAT_DD | E1000_RXD_STAT_EOP | E1000_RXD_STAT_IXSM);
}

/* DATA_VALID vouches for TCP, not for the IPv4 header (a bridged frame):
 * a broken header checksum is left to the guest. */
static void test_bad_ip_header_not_reported(void **state)
{
	struct fx *f = *state;
	wr(f, E1000_RXCSUM, E1000_RXCSUM_TUOFL | E1000_RXCSUM_IPOFL);
	uint8_t pkt[HDR + FRAME];
	send_tcp(f, VIRTIO_NET_HDR_F_DATA_VALID, 0, NULL);
	e1000_rx_run(f->d);
	assert_int_equal(status0(f), E1000_RXD_STAT_DD | E1000_RXD_STAT_EOP | E1000_RXD_STAT_TCPCS |
					 E1000_RXD_STAT_IPCS);
	/* the same frame, one header byte changed */
	memset(pkt, 0, sizeof(pkt));
	struct virtio_net_hdr_v1 h = {.flags = VIRTIO_NET_HDR_F_DATA_VALID};
	memcpy(pkt, &h, sizeof(h));
	memcpy(pkt + HDR, fake_mem_at(&f->fm, BUF), FRAME);
	pkt[HDR + 14 + 8] ^= 1; /* TTL */
	assert_int_equal(send(f->wire, pkt, sizeof(pkt), 0), (ssize_t)sizeof(pkt));
	e1000_rx_run(f->d);
	assert_int_equal(*(uint8_t *)fake_mem_at(&f->fm, RX_RING + 16 + 12),
			 E1000_RXD_STAT_DD | E1000_RXD_STAT_EOP | E1000_RXD_STAT_IXSM);
}

/* A vnet header pointing outside the frame: dropped and counted, nothing
 * written outside it. */
static void test_csum_start_outside_frame_dropped(void **state)
{
	struct fx *f = *state;
	send_tcp(f, VIRTIO_NET_HDR_F_NEEDS_CSUM, FRAME - 17, NULL); /* field past the end */
	send_tcp(f, VIRTIO_NET_HDR_F_NEEDS_CSUM, 0xffff, NULL);
	e1000_rx_run(f->d);
	assert_int_equal(f->d->stats.rx_errors, 2);
	assert_int_equal(f->d->stats.rx_packets, 0);
	assert_int_equal(status0(f), 0);
}

/* Receive segmentation: a host GSO frame (TCP over IPv4 or IPv6, behind
 * a VLAN tag or not, IPv6 with `ext` bytes of hop-by-hop options; 12
 * bytes of TCP options) with `payload` bytes of data cut by `mss`. */
#define TOPT 32						    /* TCP header with options */
static const uint8_t TCP_FLAGS = 0x80 | 0x10 | 0x08 | 0x01; /* CWR ACK PSH FIN */

struct shape {
	bool v6, vlan;
	uint8_t ext;
};
static const struct shape V4 = {0}, V6 = {.v6 = true};

static size_t l3_of(struct shape sh)
{
	return sh.vlan ? 18 : 14;
}

static size_t l4_of(struct shape sh)
{
	return l3_of(sh) + (sh.v6 ? 40u + sh.ext : 20u);
}

static uint8_t gso_pkt[HDR + 18 + 40 + 16 + TOPT + 4096];

static size_t send_gso(struct fx *f, struct shape sh, size_t payload, uint16_t mss)
{
	uint8_t *pkt = gso_pkt, *e = pkt + HDR, *ip = e + l3_of(sh);
	size_t l4 = l4_of(sh), len = l4 + TOPT + payload;
	assert_true(HDR + len <= sizeof(gso_pkt));
	memset(pkt, 0, HDR + len);
	struct virtio_net_hdr_v1 h = {.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
				      .gso_type = sh.v6 ? VIRTIO_NET_HDR_GSO_TCPV6
							: VIRTIO_NET_HDR_GSO_TCPV4,
				      .hdr_len = (uint16_t)(l4 + TOPT),
				      .gso_size = mss,
				      .csum_start = (uint16_t)l4,
				      .csum_offset = 16};
	memcpy(pkt, &h, sizeof(h));
	memcpy(e, MAC, 6);
	if (sh.vlan)
		memcpy(e + 12, "\x81\x00\x00\x07", 4); /* VLAN 7 */
	if (sh.v6) {
		ip[-2] = 0x86, ip[-1] = 0xdd;
		ip[0] = 0x60;
		ip[6] = sh.ext ? 0 : 6; /* hop-by-hop options, or TCP */
		ip[7] = 64;
		for (int i = 0; i < 32; i++)
			ip[8 + i] = (uint8_t)(0xa0 + i);
		if (sh.ext) {
			ip[40] = 6;
			ip[41] = (uint8_t)(sh.ext / 8 - 1);
			ip[42] = 1; /* PadN */
			ip[43] = (uint8_t)(sh.ext - 4);
		}
	} else {
		ip[-2] = 0x08;
		ip[0] = 0x45;
		ip[4] = 0xff, ip[5] = 0xfe; /* ID: wraps */
		ip[6] = 0x40;		    /* DF */
		ip[8] = 64;
		ip[9] = 6;
		memcpy(ip + 12, "\xa9\xfe\x0a\x01\xa9\xfe\x0a\x02", 8);
	}
	uint8_t *tcp = e + l4;
	memcpy(tcp + 4, "\xff\xff\xfc\x00", 4); /* the sequence number wraps */
	tcp[12] = (TOPT / 4) << 4;
	tcp[13] = TCP_FLAGS;
	tcp[16] = 0xde, tcp[17] = 0xad; /* the host's partial sum: not used */
	memset(tcp + 20, 1, TOPT - 20); /* NOPs */
	for (size_t i = 0; i < payload; i++)
		tcp[TOPT + i] = (uint8_t)(i * 13 + 5);
	assert_int_equal(send(f->wire, pkt, HDR + len, 0), (ssize_t)(HDR + len));
	return len;
}

/* Segment k of the frame send_gso sent, as the guest finds it at
 * descriptor `desc`: its length, headers and checksums. */
static void check_seg(struct fx *f, unsigned int desc, struct shape sh, size_t payload,
		      uint16_t mss, unsigned int k)
{
	const uint8_t *sent = gso_pkt + HDR, *sip = sent + l3_of(sh);
	const uint8_t *s = fake_mem_at(&f->fm, BUF + 0x1000 * (uint64_t)desc), *ip = s + l3_of(sh);
	size_t l4 = l4_of(sh), n = payload - k * mss < mss ? payload - k * mss : mss;
	size_t tcplen = TOPT + n;
	bool last = (k + 1) * mss >= payload;
	uint8_t *dsc = fake_mem_at(&f->fm, RX_RING + 16 * (uint64_t)desc);
	assert_int_equal(dsc[8] | dsc[9] << 8, l4 + tcplen + E1000_FCS_LEN);
	/* the 82540 checks untagged IPv4 only */
	bool checked = !sh.v6 && !sh.vlan;
	assert_int_equal(dsc[12], E1000_RXD_STAT_DD | E1000_RXD_STAT_EOP |
				      (checked ? E1000_RXD_STAT_TCPCS | E1000_RXD_STAT_IPCS
					       : E1000_RXD_STAT_IXSM));
	assert_memory_equal(s, sent, l3_of(sh));
	uint32_t ph;
	if (sh.v6) {
		assert_int_equal(ip[4] << 8 | ip[5], sh.ext + tcplen);
		assert_memory_equal(ip + 6, sip + 6, 34 + sh.ext);
		ph = naive_sum(ip + 8, 32, 6 + (uint32_t)tcplen);
	} else {
		assert_int_equal(ip[2] << 8 | ip[3], 20 + tcplen);
		assert_int_equal(ip[4] << 8 | ip[5], (0xfffe + k) & 0xffff);
		assert_int_equal(naive_sum(ip, 20, 0), 0xffff);
		assert_memory_equal(ip + 6, sip + 6, 4);
		assert_memory_equal(ip + 12, sip + 12, 8);
		ph = naive_sum(ip + 12, 8, 6 + (uint32_t)tcplen);
	}
	const uint8_t *tcp = s + l4;
	uint32_t seq = (uint32_t)tcp[4] << 24 | (uint32_t)tcp[5] << 16 | tcp[6] << 8 | tcp[7];
	assert_int_equal(seq, (uint32_t)(0xfffffc00u + k * mss));
	uint8_t fl = TCP_FLAGS & (k ? 0x7f : 0xff) & (last ? 0xff : (uint8_t)~0x09);
	assert_int_equal(tcp[13], fl);
	assert_memory_equal(tcp + 20, sent + l4 + 20, TOPT - 20);
	assert_memory_equal(tcp + TOPT, sent + l4 + TOPT + k * mss, n);
	assert_int_equal(naive_sum(tcp, tcplen, ph), 0xffff);
}

/* Each segment complete (lengths, IPv4 ID and header checksum, sequence,
 * FIN/PSH only on the last, CWR only on the first, TCP checksum), and
 * reported checked. */
static void test_gso_frame_cut_into_segments(void **state)
{
	struct fx *f = *state;
	wr(f, E1000_RXCSUM, E1000_RXCSUM_TUOFL | E1000_RXCSUM_IPOFL);
	for (int i = 0; i < 2; i++) {
		send_gso(f, i ? V6 : V4, 2500, 1000);
		e1000_rx_run(f->d);
		assert_int_equal(f->d->stats.rx_packets, 3u * (i + 1));
		for (unsigned int k = 0; k < 3; k++)
			check_seg(f, 3 * i + k, i ? V6 : V4, 2500, 1000, k);
	}
	assert_int_equal(f->d->stats.rx_tso, 2);
	assert_int_equal(f->d->stats.rx_tso_segs, 6);
	assert_int_equal(f->d->stats.rx_errors + f->d->stats.rx_dropped, 0);
}

/* Behind a VLAN tag, with IPv6 options, and an MSS shorter than the
 * headers (each segment's headers overlap the segment before's data). */
static void test_gso_tagged_options_small_mss(void **state)
{
	struct fx *f = *state;
	static const struct shape sh[3] = {
	    {.vlan = true}, {.v6 = true, .vlan = true, .ext = 16}, {.v6 = true, .ext = 8}};
	static const uint16_t mss[3] = {1000, 700, 8};
	static const size_t payload[3] = {1500, 1400, 10};
	unsigned int at = 0;
	for (int i = 0; i < 3; i++) {
		wr(f, E1000_RDT, (at + NDESC - 1) % NDESC); /* every buffer free */
		send_gso(f, sh[i], payload[i], mss[i]);
		e1000_rx_run(f->d);
		for (unsigned int k = 0; k < 2; k++)
			check_seg(f, (at + k) % NDESC, sh[i], payload[i], mss[i], k);
		at = (at + 2) % NDESC;
	}
	assert_int_equal(f->d->stats.rx_tso, 3);
	assert_int_equal(f->d->stats.rx_errors + f->d->stats.rx_dropped, 0);
}

/* A frame cut into more segments than the ring has buffers: the rest
 * waits, and is built again right when RDT moves. */
static void test_gso_segments_wait_for_buffers(void **state)
{
	struct fx *f = *state;
	wr(f, E1000_RXCSUM, E1000_RXCSUM_TUOFL | E1000_RXCSUM_IPOFL);
	send_gso(f, V4, 899, 100); /* 9 segments, 7 buffers */
	e1000_rx_run(f->d);
	assert_int_equal(f->d->stats.rx_tso_segs, 7);
	assert_int_equal(f->d->stats.rx_tso, 0);
	assert_true(f->d->rx_parked);
	for (unsigned int k = 0; k < 7; k++)
		check_seg(f, k, V4, 899, 100, k);
	wr(f, E1000_RDT, 6); /* the driver took 0..5 back */
	e1000_rx_run(f->d);
	assert_int_equal(f->d->stats.rx_tso_segs, 9);
	assert_int_equal(f->d->stats.rx_tso, 1);
	check_seg(f, 7, V4, 899, 100, 7);
	check_seg(f, 0, V4, 899, 100, 8);
	assert_int_equal(f->d->rx_len, 0);
}

/* Segments sized for long frames (LPE), and LPE goes off while the rest
 * waits for buffers: the rest is dropped, not put in as frames the
 * driver no longer takes. */
static void test_gso_rest_dropped_when_lpe_goes(void **state)
{
	struct fx *f = *state;
	static uint8_t big[HDR + 18 + 40 + TOPT + 12000];
	wr(f, E1000_RCTL, E1000_RCTL_EN | E1000_RCTL_LPE);
	size_t len = send_gso(f, V4, 300, 3000);
	assert_int_equal(recv(f->d->ctx.tap.fd, big, HDR + len, 0), (ssize_t)(HDR + len));
	len += 12000 - 300; /* 4 segments of 2 buffers each, 7 buffers free */
	assert_int_equal(send(f->wire, big, HDR + len, 0), (ssize_t)(HDR + len));
	e1000_rx_run(f->d);
	assert_int_equal(f->d->stats.rx_tso_segs, 3);
	wr(f, E1000_RCTL, E1000_RCTL_EN);
	wr(f, E1000_RDT, 5);
	e1000_rx_run(f->d);
	assert_int_equal(f->d->stats.rx_tso_segs, 3);
	assert_int_equal(f->d->stats.rx_tso, 0);
	assert_int_equal(f->d->stats.rx_dropped, 1);
	assert_int_equal(f->d->rx_len, 0);
}

/* GSO frames RX cannot cut: dropped whole, counted, nothing placed. */
static void test_gso_malformed_dropped(void **state)
{
	struct fx *f = *state;
	static const struct shape V6X = {.v6 = true, .ext = 8};
	static const struct {
		struct shape sh;
		size_t at; /* byte of the packet (vnet header first) */
		uint8_t val;
	} bad[] = {
	    {V4, 1, 3},		       /* GSO_UDP */
	    {V4, 0, 0},		       /* no NEEDS_CSUM */
	    {V4, 6, 0},		       /* csum_start 0: not where TCP starts */
	    {V4, 4, 0},		       /* gso_size 0 */
	    {V4, 5, 6},		       /* gso_size 1600: a segment over 1522 bytes */
	    {V4, HDR + 12, 0x86},      /* IPv6 ethertype on IPv4 */
	    {V4, HDR + 14, 0x46},      /* IHL 6: TCP is not at csum_start */
	    {V4, HDR + 14 + 6, 0x20},  /* MF: a fragment */
	    {V4, HDR + 14 + 9, 17},    /* UDP */
	    {V4, HDR + 34 + 12, 0x40}, /* TCP header of 16 bytes */
	    {V4, HDR + 34 + 12, 0xf0}, /* TCP header past the frame */
	    {V6X, HDR + 14 + 6, 43},   /* a routing header */
	    {V6X, HDR + 14 + 40, 44},  /* then a fragment header */
	    {V6X, HDR + 14 + 41, 1},   /* options running past csum_start */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t len = send_gso(f, bad[i].sh, bad[i].at == HDR + 34 + 12 ? 4 : 300, 100);
		assert_int_equal(recv(f->d->ctx.tap.fd, gso_pkt, HDR + len, 0),
				 (ssize_t)(HDR + len));
		gso_pkt[bad[i].at] = bad[i].val;
		assert_int_equal(send(f->wire, gso_pkt, HDR + len, 0), (ssize_t)(HDR + len));
		e1000_rx_run(f->d);
		assert_int_equal(f->d->stats.rx_errors, i + 1);
	}
	assert_int_equal(f->d->stats.rx_packets, 0);
	assert_int_equal(status0(f), 0);
}

/* A read that fills the whole buffer may have been cut short: the frame
 * is dropped as too long, GSO or not, never cut. */
static void test_read_filling_buffer_dropped(void **state)
{
	struct fx *f = *state;
	size_t n = HDR + sizeof(f->d->rx_buf);
	uint8_t *big = calloc(1, n);
	size_t len = send_gso(f, V4, 300, 1000);
	assert_int_equal(recv(f->d->ctx.tap.fd, big, HDR + len, 0), (ssize_t)(HDR + len));
	int sz = (int)(2 * n);
	assert_int_equal(setsockopt(f->wire, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)), 0);
	assert_int_equal(send(f->wire, big, n, 0), (ssize_t)n);
	e1000_rx_run(f->d);
	assert_int_equal(f->d->stats.rx_dropped, 1);
	assert_int_equal(f->d->stats.rx_packets + f->d->stats.rx_tso_segs, 0);
	free(big);
}

#define T(t) cmocka_unit_test_setup_teardown(t, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_csum_add_matches_definition),
	    T(test_partial_csum_completed_and_reported),
	    T(test_without_rxcsum_completed_not_reported),
	    T(test_unvouched_frame_not_reported),
	    T(test_bad_ip_header_not_reported),
	    T(test_csum_start_outside_frame_dropped),
	    T(test_gso_frame_cut_into_segments),
	    T(test_gso_tagged_options_small_mss),
	    T(test_gso_segments_wait_for_buffers),
	    T(test_gso_rest_dropped_when_lpe_goes),
	    T(test_gso_malformed_dropped),
	    T(test_read_filling_buffer_dropped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
