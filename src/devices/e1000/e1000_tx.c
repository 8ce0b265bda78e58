// SPDX-License-Identifier: Apache-2.0
/* e1000 transmit: the TX ring from TDH to TDT, with legacy, context and
 * data descriptors. Checksum offload and TSO pass through to the tap in its
 * 12-byte virtio-net header (NEEDS_CSUM, GSO_TCPV4/6): the host kernel
 * finishes them. The IPv4 header checksum (IXSM) and the legacy
 * descriptor's checksum insertion (IC) are done here.
 *
 * It runs on the I/O thread (e1000.c, e1000_tx_kick), or at once in tests.
 * Every walk is bounded: one lap of the ring per run; a packet that
 * outgrows E1000_TX_MAX (a ring without end-of-packet) is dropped when its
 * EOP comes, and its descriptors are still completed. */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/dma.h"
#include "devices/e1000/e1000_priv.h"
#include "net/vnet_hdr.h"

/* Descriptor byte offsets */
#define TXD_LOWER  8
#define TXD_STATUS 12

/* The Internet checksum of p[0, len) added to sum (big-endian 16-bit
 * words; unfolded). Eight bytes at a time in host order with end-around
 * carry, swapped once at the end (RFC 1071: the sum commutes with byte
 * order): RX completes one checksum per frame, so this is on its path. */
uint32_t e1000_csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	uint64_t s = 0, w;
	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&w, p, 8);
		s += w;
		s += s < w; /* end-around carry */
	}
	for (; len >= 2; p += 2, len -= 2) {
		uint16_t h;
		memcpy(&h, p, 2);
		s += h;
		s += s < h;
	}
	if (len) { /* a last odd byte is the first of a big-endian word */
		uint16_t h = 0;
		memcpy(&h, p, 1);
		s += h;
		s += s < h;
	}
	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffffffff) + (s >> 32);
	uint32_t f = (uint32_t)s;
	f = (f & 0xffff) + (f >> 16);
	f = (f & 0xffff) + (f >> 16);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	f = (uint16_t)(f << 8 | f >> 8);
#endif
	uint64_t t = (uint64_t)sum + f;
	return (uint32_t)((t & 0xffffffff) + (t >> 32));
}

uint16_t e1000_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

void e1000_tx_abort(struct e1000 *d)
{
	if (d->tx_first_seen)
		counter_add(&d->stats.tx_dropped, 1);
	d->tx_len = 0;
	d->tx_first_seen = d->tx_bad = false;
}

void e1000_tx_reset(struct e1000 *d)
{
	memset(&d->txc, 0, sizeof(d->txc));
	e1000_tx_abort(d);
	d->tx_pending = false;
}

static void tx_drop(struct e1000 *d, enum e1000_log kind, const char *why)
{
	counter_add(&d->stats.tx_dropped, 1);
	e1000_log_once(d, kind, "transmit packet dropped: %s", why);
}

/* The checksum of [start, end) stored at off, complemented (IXSM, IC, and
 * TXSM with TUCSE). As the 8254x manual has it (and QEMU's putsum), the
 * field's own contents count: software leaves a seed there (0, or the
 * pseudo header's sum). An end past the packet is the packet's end; a field
 * past the end, or a start at or past it: no insertion, and the packet
 * goes as it is (the manual's rule, not a drop). */
static void tx_insert_csum(struct e1000 *d, size_t start, size_t end, size_t off)
{
	if (end > d->tx_len)
		end = d->tx_len;
	if (start >= end || off + 2 > end)
		return;
	uint8_t *b = d->tx_buf;
	e1000_be16_put(b + off,
		       (uint16_t)~e1000_csum_fold(e1000_csum_add(0, b + start, end - start)));
}

/* TXSM: the TCP/UDP checksum. To the packet's end (TUCSE 0, all Linux
 * asks), the host completes it from the tap header; a TUCSE that ends it
 * earlier is done here, since the host's checksum always runs to the end.
 * Offsets outside the packet: no insertion. */
static void tx_txsm(struct e1000 *d, struct virtio_net_hdr_v1 *h)
{
	const struct e1000_tx_ctx *c = &d->txc;
	if (c->tucse && (size_t)c->tucse + 1 < d->tx_len) {
		tx_insert_csum(d, c->tucss, (size_t)c->tucse + 1, c->tucso);
		return;
	}
	if (c->tucso < c->tucss || (size_t)c->tucso + 2 > d->tx_len)
		return; /* csum_offset would wrap, or the field is not in it */
	h->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	h->csum_start = c->tucss;
	h->csum_offset = (uint16_t)(c->tucso - c->tucss);
}

/* Whether the TSO context describes this packet as the host's GSO will
 * read it; NULL if so, else why not. The host kernel trusts csum_start and
 * csum_offset of a GSO frame (CVE-2024-43897), so (more than virtio-net's
 * tx_hdr_ok can check: the e1000 builds the header itself) the checksum
 * field must be the TCP header's (tucso - tucss is
 * 16; UDP's would be 6, but the 82540 segments TCP only), and the TCP
 * header must follow the IP header (tucss = ipcss + its length: IHL for
 * IPv4, the fixed 40 bytes for IPv6, whose extension headers an 82540
 * driver never sends with TSO). MSS: NET_GSO_MIN_MSS at least. */
static const char *tx_tso_check(const struct e1000 *d)
{
	const struct e1000_tx_ctx *c = &d->txc;
	const uint8_t *b = d->tx_buf;
	size_t len = d->tx_len;
	bool v4 = c->tucmd & (E1000_TXD_CMD_IP >> 24);
	if (!(c->tucmd & (E1000_TXD_CMD_TCP >> 24)))
		return "TSO of a protocol other than TCP";
	if (c->mss < NET_GSO_MIN_MSS)
		return "TSO segment size below the floor";
	if ((size_t)c->tucss + 20 > c->hdr_len || c->hdr_len > len)
		return "TSO header length does not fit the packet";
	if (c->tucso != c->tucss + VIRTIO_NET_TCP_CSUM_OFF)
		return "TSO checksum offset is not TCP's checksum field";
	size_t iphl = v4 ? (size_t)(b[c->ipcss] & 0xf) * 4 : 40;
	if (c->ipcss + 20 > c->tucss || (v4 && iphl < 20) || c->tucss != c->ipcss + iphl)
		return "TSO checksum start is not after the IP header";
	if (len - c->ipcss > 0xffff)
		return "TSO packet longer than the IP length field says";
	return NULL;
}

/* TSO: the driver zeroed the IP length and seeded the TCP checksum with a
 * pseudo header without length, as the 82540 wants; the host's GSO wants
 * the length in both. Returns why the context cannot describe this packet
 * (then it is dropped), or NULL. */
static const char *tx_tso_prepare(struct e1000 *d, struct virtio_net_hdr_v1 *h)
{
	const struct e1000_tx_ctx *c = &d->txc;
	uint8_t *b = d->tx_buf;
	size_t len = d->tx_len;
	bool v4 = c->tucmd & (E1000_TXD_CMD_IP >> 24);
	const char *why = tx_tso_check(d);
	if (why)
		return why;
	if (v4) {
		uint32_t ihl = (uint32_t)(c->tucss - c->ipcss);
		e1000_be16_put(b + c->ipcss + 2, (uint16_t)(len - c->ipcss));
		e1000_be16_put(b + c->ipcss + 10, 0);
		e1000_be16_put(b + c->ipcss + 10,
			       (uint16_t)~e1000_csum_fold(e1000_csum_add(0, b + c->ipcss, ihl)));
	} else {
		e1000_be16_put(b + c->ipcss + 4, (uint16_t)(len - c->ipcss - 40));
	}
	/* One's-complement add of the TCP length to the seed. */
	uint32_t seed = e1000_be16_get(b + c->tucso);
	e1000_be16_put(b + c->tucso, e1000_csum_fold(seed + (uint32_t)(len - c->tucss)));
	h->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	h->gso_type = v4 ? VIRTIO_NET_HDR_GSO_TCPV4 : VIRTIO_NET_HDR_GSO_TCPV6;
	h->hdr_len = c->hdr_len;
	h->gso_size = c->mss;
	h->csum_start = c->tucss;
	h->csum_offset = VIRTIO_NET_TCP_CSUM_OFF;
	return NULL;
}

/* VLAN insertion (CTRL.VME and the EOP descriptor's VLE, which Linux's
 * e1000 sets with its default VLAN offload): the 802.1Q tag, TPID from
 * VET and TCI from the descriptor's special field, goes after the MAC
 * addresses, on the way to the tap. Offloads were computed on the
 * untagged packet, as the 82540 inserts the tag last: the tap header's
 * offsets move with the bytes. Returns how many iovecs make the packet. */
static int tx_vlan_iov(struct e1000 *d, struct virtio_net_hdr_v1 *h, uint8_t tag[E1000_VLAN_LEN],
		       uint16_t tci, struct iovec iov[4])
{
	e1000_be16_put(tag, (uint16_t)e1000_reg(d, E1000_VET));
	e1000_be16_put(tag + 2, tci);
	iov[1] = (struct iovec){d->tx_buf, 12};
	iov[2] = (struct iovec){tag, E1000_VLAN_LEN};
	iov[3] = (struct iovec){d->tx_buf + 12, d->tx_len - 12};
	if (h->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM)
		h->csum_start = (uint16_t)(h->csum_start + E1000_VLAN_LEN);
	if (h->gso_type != VIRTIO_NET_HDR_GSO_NONE)
		h->hdr_len = (uint16_t)(h->hdr_len + E1000_VLAN_LEN);
	return 4;
}

/* The packet is complete (EOP): offloads, then the tap; `vlan`: insert
 * the tag `tci`. */
static void tx_send(struct e1000 *d, bool vlan, uint16_t tci)
{
	struct virtio_net_hdr_v1 h;
	memset(&h, 0, sizeof(h));
	const struct e1000_tx_ctx *c = &d->txc;
	const char *why = NULL;

	if (d->tx_len < 14) {
		why = "shorter than an Ethernet header";
	} else if (d->tx_tse) {
		why = tx_tso_prepare(d, &h);
	} else {
		if (d->tx_ixsm)
			tx_insert_csum(d, c->ipcss, c->ipcse ? (size_t)c->ipcse + 1 : d->tx_len,
				       c->ipcso);
		if (d->tx_txsm)
			tx_txsm(d, &h);
		if (d->tx_legacy_ic)
			tx_insert_csum(d, d->tx_css, d->tx_len, d->tx_cso);
	}
	if (why) {
		tx_drop(d, d->tx_tse ? E1000_LOG_TX_TSO : E1000_LOG_TX_DESC, why);
		return;
	}
	uint8_t tag[E1000_VLAN_LEN];
	struct iovec iov[4] = {{&h, sizeof(h)}, {d->tx_buf, d->tx_len}};
	int niov = vlan ? tx_vlan_iov(d, &h, tag, tci, iov) : 2;
	size_t len = d->tx_len + (vlan ? E1000_VLAN_LEN : 0);
	ssize_t n = writev(d->ctx.tap.fd, iov, niov);
	if (n < 0) {
		/* A full tap drops, like a wire; anything else (too long for
		 * the tap, a GSO packet it refuses) is logged once. */
		counter_add(&d->stats.tx_errors, 1);
		if (errno != EAGAIN)
			e1000_log_once(d, E1000_LOG_TX_TAP, "tap refused a %zu-byte packet: %s",
				       len, strerror(errno));
		return;
	}
	counter_add(&d->stats.tx_packets, 1);
	counter_add(&d->stats.tx_bytes, len);
	if (d->tx_tse)
		counter_add(&d->stats.tx_tso, 1);
	e1000_stat_add(d, E1000_TPT, 1);
	e1000_stat_add(d, E1000_GPTC, 1);
	e1000_stat_add64(d, E1000_GOTCL, len);
	e1000_stat_add64(d, E1000_TOTL, len);
	if (d->tx_buf[0] & 1)
		e1000_stat_add(
		    d, !memcmp(d->tx_buf, "\xff\xff\xff\xff\xff\xff", 6) ? E1000_BPTC : E1000_MPTC,
		    1);
}

static void tx_ctx_load(struct e1000 *d, const uint8_t *desc)
{
	struct e1000_tx_ctx *c = &d->txc;
	uint32_t cmd;
	c->ipcss = desc[0];
	c->ipcso = desc[1];
	c->ipcse = (uint16_t)(desc[2] | desc[3] << 8);
	c->tucss = desc[4];
	c->tucso = desc[5];
	c->tucse = (uint16_t)(desc[6] | desc[7] << 8);
	memcpy(&cmd, desc + TXD_LOWER, 4);
	c->paylen = cmd & 0xfffff;
	c->tucmd = (uint8_t)(cmd >> 24);
	c->hdr_len = desc[13];
	c->mss = (uint16_t)(desc[14] | desc[15] << 8);
}

/* Appends a data buffer to the packet; gives up on the packet (not the
 * ring) if it would outgrow the buffer or the address is not RAM. */
static void tx_append(struct e1000 *d, uint64_t addr, size_t len)
{
	if (d->tx_bad || !len)
		return;
	if (len > E1000_TX_MAX - d->tx_len) {
		d->tx_bad = true;
		e1000_log_once(d, E1000_LOG_TX_OVERSIZE,
			       "transmit packet longer than %d bytes (no end of packet?)",
			       E1000_TX_MAX);
		return;
	}
	/* Ordered: after the descriptor read that said the buffer is ready. */
	if (dma_read(d->ctx.gm, addr, d->tx_buf + d->tx_len, len) < 0) {
		d->tx_bad = true;
		counter_add(&d->stats.dma_errors, 1);
		e1000_log_once(d, E1000_LOG_TX_DMA, "transmit buffer %#llx+%zu is not guest RAM",
			       (unsigned long long)addr, len);
		return;
	}
	d->tx_len += len;
}

/* One descriptor; returns its command dword (for RS). */
static uint32_t tx_desc(struct e1000 *d, const uint8_t *desc)
{
	uint64_t addr;
	uint32_t lower;
	memcpy(&addr, desc, 8);
	memcpy(&lower, desc + TXD_LOWER, 4);
	bool first = !d->tx_first_seen;
	if (lower & E1000_TXD_CMD_DEXT) {
		uint32_t dtyp = lower & E1000_TXD_DTYP_MASK;
		if (dtyp == 0) { /* context */
			tx_ctx_load(d, desc);
			return lower;
		}
		if (dtyp != E1000_TXD_DTYP_D) {
			d->tx_bad = true;
			e1000_log_once(d, E1000_LOG_TX_DESC, "unknown descriptor type %u",
				       dtyp >> 20);
		} else {
			if (first) {
				d->tx_tse = lower & E1000_TXD_CMD_TSE;
				d->tx_ixsm = desc[13] & E1000_TXD_POPTS_IXSM;
				d->tx_txsm = desc[13] & E1000_TXD_POPTS_TXSM;
				d->tx_legacy_ic = false;
			}
			tx_append(d, addr, lower & 0xfffff);
		}
	} else {
		if (first) {
			d->tx_tse = d->tx_ixsm = d->tx_txsm = false;
			d->tx_legacy_ic = lower & E1000_TXD_CMD_IC;
			d->tx_cso = desc[10];
			d->tx_css = desc[13];
		}
		tx_append(d, addr, lower & 0xffff);
	}
	d->tx_first_seen = true;
	if (lower & E1000_TXD_CMD_EOP) {
		if (d->tx_bad)
			tx_drop(d, E1000_LOG_TX_OVERSIZE, "malformed descriptors");
		else
			tx_send(
			    d,
			    (lower & E1000_TXD_CMD_VLE) &&
				(e1000_reg(d, E1000_CTRL) & E1000_CTRL_VME),
			    (uint16_t)(desc[E1000_TXD_SPECIAL] | desc[E1000_TXD_SPECIAL + 1] << 8));
		d->tx_len = 0;
		d->tx_first_seen = d->tx_bad = false;
	}
	return lower;
}

bool e1000_tx_run(struct e1000 *d, unsigned int budget)
{
	if (d->stopped || !(e1000_reg(d, E1000_TCTL) & E1000_TCTL_EN))
		return false;
	uint64_t base = (uint64_t)e1000_reg(d, E1000_TDBAH) << 32 | e1000_reg(d, E1000_TDBAL);
	uint32_t n = e1000_reg(d, E1000_TDLEN) / E1000_DESC_LEN;
	uint32_t head = e1000_reg(d, E1000_TDH), tail = e1000_reg(d, E1000_TDT);
	if (head == tail)
		return false;
	if (!n || head >= n || tail >= n || (base & 0xf)) {
		counter_add(&d->stats.ring_errors, 1);
		e1000_log_once(d, E1000_LOG_TX_RING,
			       "TX ring base %#llx, %u descriptors, head %u, tail %u: not used",
			       (unsigned long long)base, n, head, tail);
		return false;
	}
	uint32_t done = 0;
	bool rs = false, rs_now = false;
	/* At most one lap: head chases a tail that only the guest moves. */
	for (; head != tail && done < n && done < budget; done++) {
		uint8_t desc[E1000_DESC_LEN];
		uint64_t a = base + (uint64_t)head * E1000_DESC_LEN;
		if (dma_read(d->ctx.gm, a, desc, sizeof(desc)) < 0) {
			counter_add(&d->stats.dma_errors, 1);
			e1000_log_once(d, E1000_LOG_TX_DMA, "TX descriptor %#llx is not guest RAM",
				       (unsigned long long)a);
			break;
		}
		uint32_t cmd = tx_desc(d, desc);
		if (cmd & E1000_TXD_CMD_RS) {
			/* Ordered (full fence) after the packet's buffers were
			 * read and before TDH moves below. */
			uint8_t st = desc[TXD_STATUS] | E1000_TXD_STAT_DD;
			dma_write(d->ctx.gm, a + TXD_STATUS, &st, 1);
			rs = true;
			rs_now |= !(cmd & E1000_TXD_CMD_IDE);
		}
		head = (head + 1) % n;
	}
	d->regs[E1000_TDH / 4] = head;
	/* DD, then TDH, then the interrupt: TXDW now, or after TIDV/TADV if
	 * every written-back descriptor asked for the delay (IDE). */
	if (rs)
		e1000_delay_tx(d, !rs_now);
	if (done && head == tail)
		e1000_set_ics(d, E1000_ICR_TXQE);
	return head != tail && done == budget;
}
