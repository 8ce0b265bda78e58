// SPDX-License-Identifier: Apache-2.0
/* e1000 receive: frames from the tap through the receive address and
 * multicast filters into legacy RX descriptors from RDH up to RDT.
 *
 * A frame is read from the tap only while the ring has a free descriptor;
 * when it looks full, the coalesced ring is drained first (a batched RDT
 * write may be waiting there) and only then does RX park until RDT moves.
 * A frame that needs more descriptors than are free waits in rx_buf; so
 * does the rest of a host GSO frame being cut into segments (e1000_rx_gso.c),
 * each segment placed as a frame of its own. */
#include <endian.h>
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/dma.h"
#include "devices/e1000/e1000_priv.h"
#include "net/vnet_hdr.h"

#define RXD_LENGTH 8
#define RXD_STATUS 12

/* A parked RX stays parked: the driver's set-up after a reset (RCTL, RDT)
 * is what kicks it, and the tap's edge-triggered fd will not. A frame
 * waiting for buffers goes with the reset, counted as dropped (every
 * frame read from the tap shows in a counter, as with virtio-net). */
void e1000_rx_reset(struct e1000 *d)
{
	if (d->rx_len)
		counter_add(&d->stats.rx_dropped, 1);
	d->rx_len = 0;
	d->rx_gso.on = false;
}

/* RX resumes on the I/O thread (or the test's caller). Caller holds lock. */
void e1000_rx_kick(struct e1000 *d)
{
	if (!d->rx_parked)
		return;
	d->rx_parked = false;
	d->rdt_poll_ns = 0; /* the next park's timer starts short again */
	d->rx_wake = true;
	e1000_wake(d);
}

/* The longest frame RCTL lets in (without the CRC). */
static size_t rx_max(uint32_t rctl)
{
	return rctl & E1000_RCTL_LPE ? E1000_RX_LPE_MAX : E1000_RX_STD_MAX;
}

static uint32_t rx_buf_size(uint32_t rctl)
{
	static const uint32_t sz[2][4] = {{2048, 1024, 512, 256}, {0, 16384, 8192, 4096}};
	uint32_t s = sz[!!(rctl & E1000_RCTL_BSEX)][(rctl >> E1000_RCTL_BSIZE_SHIFT) & 3];
	return s ? s : 2048; /* BSEX with size 00 is reserved */
}

/* The multicast table index: 12 bits of the address, chosen by RCTL.MO. */
static uint32_t rx_mta_hash(uint32_t mo, const uint8_t *a)
{
	static const unsigned int shift[4] = {4, 3, 2, 0};
	return ((a[4] >> shift[mo]) | (uint32_t)a[5] << (8 - shift[mo])) & 0xfff;
}

bool e1000_rx_accept(const struct e1000 *d, const uint8_t *f, size_t len)
{
	uint32_t rctl = e1000_reg(d, E1000_RCTL);
	if (len < 14)
		return false;
	for (int i = 0; i < 16; i++) {
		uint32_t lo = e1000_reg(d, E1000_RA + 8 * i),
			 hi = e1000_reg(d, E1000_RA + 8 * i + 4);
		if (!(hi & E1000_RAH_AV))
			continue;
		uint8_t a[6] = {(uint8_t)lo,	     (uint8_t)(lo >> 8), (uint8_t)(lo >> 16),
				(uint8_t)(lo >> 24), (uint8_t)hi,	 (uint8_t)(hi >> 8)};
		if (!memcmp(a, f, 6))
			return true;
	}
	if (!memcmp(f, "\xff\xff\xff\xff\xff\xff", 6))
		return rctl & E1000_RCTL_BAM;
	if (f[0] & 1) {
		if (rctl & E1000_RCTL_MPE)
			return true;
		uint32_t h = rx_mta_hash((rctl >> E1000_RCTL_MO_SHIFT) & 3, f);
		return (e1000_reg(d, E1000_MTA + 4 * (h >> 5)) >> (h & 31)) & 1;
	}
	return rctl & E1000_RCTL_UPE;
}

struct rx_ring {
	uint64_t base;
	uint32_t n, head, tail;
};

/* The ring as the registers describe it; false (counted, logged once) if
 * they cannot describe one. */
static bool rx_ring(struct e1000 *d, struct rx_ring *r)
{
	r->base = (uint64_t)e1000_reg(d, E1000_RDBAH) << 32 | e1000_reg(d, E1000_RDBAL);
	r->n = e1000_reg(d, E1000_RDLEN) / E1000_DESC_LEN;
	r->head = e1000_reg(d, E1000_RDH);
	r->tail = e1000_reg(d, E1000_RDT);
	if (r->n && r->head < r->n && r->tail < r->n && !(r->base & 0xf))
		return true;
	counter_add(&d->stats.ring_errors, 1);
	e1000_log_once(d, E1000_LOG_RX_RING,
		       "RX ring base %#llx, %u descriptors, head %u, tail %u: not used",
		       (unsigned long long)r->base, r->n, r->head, r->tail);
	return false;
}

static uint32_t rx_free(const struct rx_ring *r)
{
	return (r->tail + r->n - r->head) % r->n;
}

/* Receive checksum offload. The tap may hand over frames whose TCP/UDP
 * checksum the host left partial (TUN_F_CSUM, asked for at create: the
 * host then skips that pass); rx_read completes it, so every frame is
 * right whatever the guest enabled. With RXCSUM.TUOFL (IPOFL), an IPv4
 * TCP/UDP frame the host vouched for (partial, or DATA_VALID) is reported
 * checked: the guest skips its own pass over each frame (QEMU's e1000
 * always says IXSM, "not checked"). Anything else: IXSM, as before. */
static uint32_t rx_csum_status(const struct e1000 *d, const uint8_t *f, size_t len)
{
	uint32_t rxcsum = e1000_reg(d, E1000_RXCSUM), st = 0;
	size_t ihl = (size_t)(f[14] & 0xf) * 4;
	if (!d->rx_vouched || !(rxcsum & (E1000_RXCSUM_IPOFL | E1000_RXCSUM_TUOFL)) ||
	    len < 14 + 20 || f[12] != 0x08 || f[13] != 0x00 || (f[14] >> 4) != 4 || ihl < 20 ||
	    len < 14 + ihl)
		return E1000_RXD_STAT_IXSM;
	/* The host vouches for the TCP/UDP checksum only (a bridged frame's
	 * IPv4 header was never checked): the header's is checked here. */
	if (e1000_csum_fold(e1000_csum_add(0, f + 14, ihl)) != 0xffff)
		return E1000_RXD_STAT_IXSM;
	if (rxcsum & E1000_RXCSUM_IPOFL)
		st |= E1000_RXD_STAT_IPCS;
	bool frag = ((f[20] & 0x3f) | f[21]) != 0; /* MF or an offset */
	if ((rxcsum & E1000_RXCSUM_TUOFL) && !frag && (f[23] == 6 || f[23] == 17))
		st |= E1000_RXD_STAT_TCPCS;
	return st ? st : E1000_RXD_STAT_IXSM;
}

/* Completes a checksum the host left partial (NEEDS_CSUM: the field holds
 * the pseudo-header's sum; the rest runs from csum_start to the end).
 * False if the header points outside the frame. */
static bool rx_complete_csum(uint8_t *f, size_t len, const struct virtio_net_hdr_v1 *h)
{
	size_t start = le16toh(h->csum_start), at = start + le16toh(h->csum_offset);
	if (start >= len || at + 2 > len)
		return false;
	uint16_t v = (uint16_t)~e1000_csum_fold(e1000_csum_add(0, f + start, len - start));
	v = v ? v : 0xffff; /* as Linux's skb_checksum_help: 0 is "no checksum" for UDP */
	f[at] = (uint8_t)(v >> 8);
	f[at + 1] = (uint8_t)v;
	return true;
}

/* VLAN stripping (CTRL.VME, which Linux's e1000 sets with its default
 * VLAN offload): a frame tagged with VET's TPID loses the tag; its TCI
 * goes in the descriptors' special field, with status VP. Returns the
 * status and special bits (the descriptor's upper dword), 0 untagged. */
static uint32_t rx_vlan(const struct e1000 *d, const uint8_t *f, size_t len)
{
	if (!(e1000_reg(d, E1000_CTRL) & E1000_CTRL_VME) || len < 14 + E1000_VLAN_LEN ||
	    e1000_be16_get(f + 12) != (uint16_t)e1000_reg(d, E1000_VET))
		return 0;
	return E1000_RXD_STAT_VP | (uint32_t)e1000_be16_get(f + 14) << 16;
}

/* Places frame f (plus the CRC the length must count) into descriptors,
 * its VLAN tag stripped in place if VME says so. Returns 1 when done, 0
 * if it must wait for buffers, -1 if dropped. */
static int rx_place(struct e1000 *d, uint8_t *f, size_t len)
{
	struct rx_ring r;
	uint32_t rctl = e1000_reg(d, E1000_RCTL);
	if (!(rctl & E1000_RCTL_EN)) {
		/* RX went off while the frame waited: the driver may be
		 * freeing the buffers, so the frame goes, not into them. */
		counter_add(&d->stats.rx_dropped, 1);
		return -1;
	}
	if (!rx_ring(d, &r))
		return 0;
	uint32_t vlan = rx_vlan(d, f, len);
	if (vlan)
		len -= E1000_VLAN_LEN;
	uint32_t bsize = rx_buf_size(rctl);
	size_t total = len + (rctl & E1000_RCTL_SECRC ? 0 : E1000_FCS_LEN);
	size_t need = (total + bsize - 1) / bsize;
	if (need > r.n - 1) {
		counter_add(&d->stats.rx_dropped, 1);
		e1000_log_once(d, E1000_LOG_RX_OVERSIZE,
			       "%zu-byte frame needs more descriptors than the ring has", total);
		return -1;
	}
	if (rx_free(&r) < need)
		return 0;
	static const uint8_t fcs[E1000_FCS_LEN];
	if (vlan) /* the frame is placed now (or lost): the tag may go */
		memmove(f + 12, f + 12 + E1000_VLAN_LEN, len - 12);
	uint32_t csum = rx_csum_status(d, f, len) | vlan;
	size_t off = 0;
	for (size_t i = 0; i < need; i++) {
		uint64_t a = r.base + (uint64_t)r.head * E1000_DESC_LEN;
		uint64_t buf;
		size_t chunk = total - off < bsize ? total - off : bsize;
		size_t data = off < len ? (len - off < chunk ? len - off : chunk) : 0;
		/* Ordered accessors throughout: buffer bytes, then the
		 * descriptor's length, then its status (DD), each behind a full
		 * fence, so the guest never sees DD before the data. */
		bool ok = dma_read(d->ctx.gm, a, &buf, 8) == 0;
		if (ok && data)
			ok = dma_write(d->ctx.gm, buf, f + off, data) == 0;
		if (ok && chunk > data)
			ok = dma_write(d->ctx.gm, buf + data, fcs, chunk - data) == 0;
		uint32_t lenw = (uint32_t)chunk; /* length, checksum 0 */
		uint32_t stw = E1000_RXD_STAT_DD | csum | (i + 1 == need ? E1000_RXD_STAT_EOP : 0);
		if (!ok) {
			/* The descriptor is completed with an error so the ring
			 * moves on; the frame is lost. */
			counter_add(&d->stats.dma_errors, 1);
			e1000_log_once(d, E1000_LOG_RX_DMA,
				       "RX descriptor or buffer at %#llx is not guest RAM",
				       (unsigned long long)a);
			lenw = 0;
			stw = E1000_RXD_STAT_DD | E1000_RXD_STAT_EOP | 0x80u << 8; /* errors: RXE */
		}
		if (dma_write(d->ctx.gm, a + RXD_LENGTH, &lenw, 4) == 0)
			dma_write(d->ctx.gm, a + RXD_STATUS, &stw, 4);
		r.head = (r.head + 1) % r.n;
		off += chunk;
		if (!ok) {
			d->regs[E1000_RDH / 4] = r.head;
			return -1;
		}
	}
	d->regs[E1000_RDH / 4] = r.head; /* after every DD */
	return 1;
}

static void rx_count(struct e1000 *d, const uint8_t *f, size_t len)
{
	counter_add(&d->stats.rx_packets, 1);
	counter_add(&d->stats.rx_bytes, len);
	e1000_stat_add(d, E1000_TPR, 1);
	e1000_stat_add(d, E1000_GPRC, 1);
	e1000_stat_add64(d, E1000_GORCL, len + E1000_FCS_LEN);
	e1000_stat_add64(d, E1000_TORL, len + E1000_FCS_LEN);
	if (f[0] & 1)
		e1000_stat_add(
		    d, !memcmp(f, "\xff\xff\xff\xff\xff\xff", 6) ? E1000_BPRC : E1000_MPRC, 1);
}

/* Reads one frame into rx_buf. Returns 1, 0 if the tap is empty, -1 if
 * the frame was dropped (read error, too big). */
static int rx_read(struct e1000 *d)
{
	struct virtio_net_hdr_v1 h;
	struct iovec iov[2] = {{&h, sizeof(h)}, {d->rx_buf, sizeof(d->rx_buf)}};
	ssize_t n = readv(d->ctx.tap.fd, iov, 2);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		counter_add(&d->stats.rx_errors, 1);
		return -1;
	}
	if (n == 0)
		return 0; /* the socket's peer went away (tests) */
	if ((size_t)n < sizeof(h)) {
		counter_add(&d->stats.rx_errors, 1);
		return -1;
	}
	size_t len = (size_t)n - sizeof(h);
	uint32_t rctl = e1000_reg(d, E1000_RCTL);
	size_t max = rx_max(rctl);
	bool gso = h.gso_type != VIRTIO_NET_HDR_GSO_NONE; /* its segments must fit */
	/* A read that filled rx_buf may have been cut short (tun says how
	 * much it had, not how much it copied): never trust len past it. */
	bool over = len >= sizeof(d->rx_buf) || (!gso && len > max);
	if (!(rctl & E1000_RCTL_EN) || over) {
		counter_add(&d->stats.rx_dropped, 1);
		if (over)
			e1000_stat_add(d, E1000_ROC, 1);
		return -1;
	}
	if (!e1000_rx_accept(d, d->rx_buf, len)) {
		counter_add(&d->stats.rx_filtered, 1);
		return -1;
	}
	d->rx_vouched = h.flags & VIRTIO_NET_HDR_F_DATA_VALID;
	if (gso) {
		/* each segment's checksums are computed as it is cut */
		d->rx_len = len;
		if (!e1000_rx_gso_start(d, &h, len, max)) {
			d->rx_len = 0;
			counter_add(&d->stats.rx_errors, 1);
			e1000_log_once(d, E1000_LOG_RX_GSO,
				       "host GSO frame (type %u, %zu bytes) cannot be segmented",
				       h.gso_type, len);
			return -1;
		}
		d->rx_vouched = true;
		return 1;
	}
	if (h.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
		if (!rx_complete_csum(d->rx_buf, len, &h)) {
			counter_add(&d->stats.rx_errors, 1);
			return -1;
		}
		d->rx_vouched = true;
	}
	d->rx_len = len;
	return 1;
}

void e1000_rx_run(struct e1000 *d)
{
	bool flushed = false, more = false;
	unsigned int delivered = 0;
	pthread_mutex_lock(&d->lock);
	for (unsigned int budget = 0; !d->stopped; budget++) {
		if (budget == E1000_RX_BUDGET) {
			more = true; /* frames may be left: come back after other fds */
			break;
		}
		if (!d->rx_len) {
			/* Keep frames in the tap while RX is off or the ring
			 * is full: read only what can be placed. */
			struct rx_ring r;
			uint32_t rctl = e1000_reg(d, E1000_RCTL);
			bool room = (rctl & E1000_RCTL_EN) && rx_ring(d, &r) && rx_free(&r);
			if ((rctl & E1000_RCTL_EN) && !room && !flushed && d->ctx.flush) {
				goto flush;
			}
			if (!room && (rctl & E1000_RCTL_EN)) {
				e1000_rx_park(d);
				counter_add(&d->stats.rx_starved, 1);
				e1000_stat_add(d, E1000_RNBC, 1);
				break;
			}
			int r2 = rx_read(d);
			if (r2 == 0)
				break;
			if (r2 < 0)
				continue;
		}
		uint8_t *f = d->rx_buf;
		size_t len = d->rx_len;
		if (d->rx_gso.on) {
			if (d->rx_gso.hdr + d->rx_gso.mss > rx_max(e1000_reg(d, E1000_RCTL))) {
				/* LPE went off mid-frame: the rest is now too long */
				counter_add(&d->stats.rx_dropped, 1);
				d->rx_len = 0;
				d->rx_gso.on = false;
				continue;
			}
			f = e1000_rx_gso_next(d, &len);
		}
		int p = rx_place(d, f, len);
		if (p == 0) {
			if (!flushed && d->ctx.flush)
				goto flush;
			e1000_rx_park(d);
			counter_add(&d->stats.rx_starved, 1);
			break;
		}
		if (p > 0) {
			rx_count(d, f, len);
			delivered++;
			if (d->rx_gso.on && !e1000_rx_gso_advance(d, len))
				continue; /* the frame's next segment */
		}
		d->rx_len = 0; /* placed, or dropped with what was left of it */
		d->rx_gso.on = false;
		continue;
	flush:
		/* A batched RDT write may be in KVM's ring: apply it (outside
		 * the lock: the replay takes it) and look again. */
		pthread_mutex_unlock(&d->lock);
		d->ctx.flush(d->ctx.cm_opaque);
		pthread_mutex_lock(&d->lock);
		counter_add(&d->stats.flushes, 1);
		flushed = true;
		budget--;
	}
	if (delivered) {
		/* RXDMT0 at once; RXT0 after RDTR/RADV (at once if RDTR is 0) */
		struct rx_ring r;
		if (rx_ring(d, &r)) {
			uint32_t rdmts = (e1000_reg(d, E1000_RCTL) >> E1000_RCTL_RDMTS_SHIFT) & 3;
			if (rx_free(&r) <= r.n >> (rdmts + 1))
				e1000_set_ics(d, E1000_ICR_RXDMT0);
		}
		e1000_delay_rx(d);
	}
	if (more) {
		d->rx_wake = true;
		e1000_wake(d);
	}
	pthread_mutex_unlock(&d->lock);
}
