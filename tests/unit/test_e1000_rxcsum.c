/* Unit tests for the e1000's receive checksum offload (src/devices/
 * e1000_rx.c) and its checksum helper: a frame whose TCP checksum the host
 * left partial (NEEDS_CSUM) reaches the guest completed, and reported
 * checked (TCPCS, IPCS) only when RXCSUM asks and the frame is an IPv4
 * TCP/UDP one with a sound header; anything else says IXSM. The tap is a
 * SOCK_SEQPACKET socketpair with the 12-byte virtio-net header. */
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
#include "devices/e1000.h"
#include "devices/e1000_priv.h"
#include "devices/virtio_net_priv.h"
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
	struct virtio_net_hdr h = {.flags = flags, .csum_start = csum_start, .csum_offset = 16};
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
	struct virtio_net_hdr h = {.flags = VIRTIO_NET_HDR_F_DATA_VALID};
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
