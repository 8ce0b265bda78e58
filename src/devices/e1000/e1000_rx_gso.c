// SPDX-License-Identifier: Apache-2.0
/* e1000 receive segmentation. With TUN_F_TSO4/6 the host hands a TCP
 * stream's frames over up to 64 KiB at a time, in one read, instead of
 * segmenting each and queueing ~45 frames that take a read each. The 82540
 * has no LRO, so the frame is cut here into the segments the host would
 * have sent: each with its headers and checksums complete (so RX reports
 * them checked as any vouched frame, e1000_rx.c).
 *
 * A segment is built in rx_buf right in front of its own payload: its
 * headers overwrite the end of the segment before, which is already in the
 * guest, so nothing is copied twice. The original headers are kept in
 * rx_gso.head. Building is repeatable: a segment that waits for buffers
 * is built again the same. */
#include <endian.h>
#include <string.h>

#include "devices/e1000/e1000_priv.h"
#include "net/vnet_hdr.h"

#define TCP_FIN 0x01
#define TCP_PSH 0x08
#define TCP_CWR 0x80

/* Whether TCP follows the IPv6 header at l3 exactly at l4, through
 * hop-by-hop and destination options only: a routing header would change
 * the pseudo-header's destination, a fragment header cannot be cut. */
static bool v6_tcp_at(const uint8_t *f, size_t l3, size_t l4)
{
	uint8_t next = f[l3 + 6];
	size_t at = l3 + 40;
	for (int i = 0; i < 4 && at < l4 && (next == 0 || next == 60); i++) {
		if (at + 8 > l4)
			return false;
		next = f[at];
		at += ((size_t)f[at + 1] + 1) * 8;
	}
	return at == l4 && next == 6;
}

bool e1000_rx_gso_start(struct e1000 *d, const struct virtio_net_hdr_v1 *h, size_t len, size_t max)
{
	struct e1000_rx_gso *g = &d->rx_gso;
	const uint8_t *f = d->rx_buf;
	size_t l3 = 14, l4 = le16toh(h->csum_start), mss = le16toh(h->gso_size);
	uint8_t type = h->gso_type & (uint8_t)~VIRTIO_NET_HDR_GSO_ECN;
	g->on = false;
	if (!(h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) || len > sizeof(d->rx_buf) || len < l3)
		return false;
	/* Up to two VLAN tags: tun takes TSO through VLAN devices too. */
	uint16_t et = e1000_be16_get(f + 12);
	for (int i = 0; i < 2 && (et == 0x8100 || et == 0x88a8) && len >= l3 + 4; i++) {
		et = e1000_be16_get(f + l3 + 2);
		l3 += 4;
	}
	if (l4 < l3 + 20 || len < l4 + 20)
		return false;
	if (type == VIRTIO_NET_HDR_GSO_TCPV4) {
		/* IPv4 without fragments, its header ending where TCP starts */
		if (et != 0x0800 || f[l3] >> 4 != 4 || l4 != l3 + (f[l3] & 0xfu) * 4 ||
		    f[l3 + 9] != 6 || (e1000_be16_get(f + l3 + 6) & 0x3fff))
			return false;
	} else if (type == VIRTIO_NET_HDR_GSO_TCPV6) {
		if (et != 0x86dd || f[l3] >> 4 != 6 || l4 < l3 + 40 || !v6_tcp_at(f, l3, l4))
			return false;
	} else {
		return false;
	}
	size_t doff = (size_t)(f[l4 + 12] >> 4) * 4, hdr = l4 + doff;
	if (doff < 20 || hdr >= len || hdr > sizeof(g->head) || !mss || hdr + mss > max)
		return false;
	memcpy(g->head, f, hdr);
	g->v6 = type == VIRTIO_NET_HDR_GSO_TCPV6;
	g->l3 = (uint16_t)l3;
	g->l4 = (uint16_t)l4;
	g->hdr = (uint16_t)hdr;
	g->mss = (uint16_t)mss;
	g->off = 0;
	g->seg = 0;
	g->on = true;
	return true;
}

uint8_t *e1000_rx_gso_next(struct e1000 *d, size_t *len)
{
	const struct e1000_rx_gso *g = &d->rx_gso;
	size_t payload = d->rx_len - g->hdr;
	size_t n = payload - g->off < g->mss ? payload - g->off : g->mss;
	size_t tcplen = g->hdr - g->l4 + n;
	uint8_t *s = d->rx_buf + g->off, *ip = s + g->l3, *tcp = s + g->l4;
	uint8_t ph[40] = {0}; /* the pseudo-header */
	size_t phlen;

	memcpy(s, g->head, g->hdr);
	if (!g->v6) {
		e1000_be16_put(ip + 2, (uint16_t)(g->l4 - g->l3 + tcplen));
		e1000_be16_put(ip + 4, (uint16_t)(e1000_be16_get(ip + 4) +
						  g->seg)); /* as TSO: ID per segment */
		e1000_be16_put(ip + 10, 0);
		e1000_be16_put(ip + 10,
			       (uint16_t)~e1000_csum_fold(e1000_csum_add(0, ip, g->l4 - g->l3)));
		memcpy(ph, ip + 12, 8);
		ph[9] = 6;
		e1000_be16_put(ph + 10, (uint16_t)tcplen);
		phlen = 12;
	} else {
		e1000_be16_put(ip + 4, (uint16_t)(g->l4 - g->l3 - 40 + tcplen)); /* with options */
		memcpy(ph, ip + 8, 32);
		e1000_be16_put(ph + 34, (uint16_t)tcplen);
		ph[39] = 6;
		phlen = 40;
	}
	uint32_t seq =
	    (uint32_t)tcp[4] << 24 | (uint32_t)tcp[5] << 16 | (uint32_t)tcp[6] << 8 | tcp[7];
	seq += g->off;
	tcp[4] = (uint8_t)(seq >> 24);
	tcp[5] = (uint8_t)(seq >> 16);
	tcp[6] = (uint8_t)(seq >> 8);
	tcp[7] = (uint8_t)seq;
	if (g->off + n < payload)
		tcp[13] &= (uint8_t) ~(TCP_FIN | TCP_PSH); /* those end the whole frame */
	if (g->off)
		tcp[13] &= (uint8_t)~TCP_CWR; /* the first segment's */
	e1000_be16_put(tcp + 16, 0);
	uint32_t sum = e1000_csum_add(e1000_csum_add(0, ph, phlen), tcp, tcplen);
	e1000_be16_put(tcp + 16, (uint16_t)~e1000_csum_fold(sum));
	*len = g->hdr + n;
	return s;
}

bool e1000_rx_gso_advance(struct e1000 *d, size_t len)
{
	struct e1000_rx_gso *g = &d->rx_gso;
	g->off += (uint32_t)(len - g->hdr);
	g->seg++;
	counter_add(&d->stats.rx_tso_segs, 1);
	if (g->hdr + g->off < d->rx_len)
		return false;
	counter_add(&d->stats.rx_tso, 1);
	g->on = false;
	return true;
}
