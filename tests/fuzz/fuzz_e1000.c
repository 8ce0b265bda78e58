// SPDX-License-Identifier: Apache-2.0
/* The e1000 (src/devices/e1000/e1000*.c) driven as its guest driver, KVM and
 * the host would: MMIO of 1/2/4/8 bytes anywhere in BAR 0, port I/O of
 * 1/2/4 bytes in and around the I/O BAR (IOADDR/IODATA), coalesce=off/
 * on/all; TX rings (legacy, context, data descriptors, TSO with any MSS
 * and header length, no EOP, any length) and RX rings anywhere (RAM, its
 * ends, the device's own BAR, nowhere); host frames of any size on a
 * socketpair tap, a full tap, CTRL.RST, BAR moves, the delay and ITR
 * timers on a clock the input advances, the batched-RDT timer. Guest RAM changes under the device
 * (fuzz_common.h). KVM's coalesced MMIO is played, not stubbed: a write in
 * a zone the device registered goes into a kvm_coalesced_mmio_ring that
 * skiff's own cmmio_flush (ctx.flush) replays through the trap table.
 * FZ_CHECKs: heads, the wire, counters, interrupts, timers, batching. */
#include <errno.h>
#include <linux/kvm.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/bus.h"
#include "core/vm.h"
#include "devices/e1000/e1000_priv.h"
#include "net/vnet_hdr.h"
#include "fake_pci_host.h"
#include "fuzz_common.h"

#define HDR	 E1000_VNET_HDR_LEN
#define JUNK	 2048		   /* the filler that makes the tap full */
#define FZ_BUF	 0x8000u	   /* TX/RX buffers: the upper half of low RAM */
#define REG(off) e1000_reg(d, off) /* a peek, without a read's side effects */
/* When a waiting delay is due: the restarting timer, or the absolute one. */
#define DUE(w) ((w)->abs_ns && (w)->abs_ns < (w)->due_ns ? (w)->abs_ns : (w)->due_ns)

static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x44};
static struct vm vm; /* only .bus (the trap table) and .cmmio */
static struct kvm_coalesced_mmio_ring *ring;
static struct fake_host host;
static struct pci_bus *pci;
static struct e1000 *d;
static int wire = -1;	      /* the host's end of the tap */
static uint64_t bar, now_ns;  /* BAR 0 as config space has it; the clock */
static uint16_t io_port;      /* the I/O BAR as config space has it */
static uint64_t itr_due;      /* when the armed ITR timerfd would fire */
static bool multi, itr_fired; /* other vCPUs; the ITR handler ran */
static struct {		      /* KVM's zones, as the device registered them */
	uint64_t addr, len;
} zones[16];
static unsigned int nzones;
static struct { /* per input */
	uint64_t junk, wire_msgs, wire_bytes, host_frames, host_bytes;
	bool touched[2]; /* the guest wrote RDLEN/RDH ([0]), TDLEN/TDH, or CTRL */
} t;
static uint8_t frame[E1000_TX_MAX + HDR + 64];

static uint64_t fake_clock(void)
{
	return now_ns;
}

static int zone_add(void *o, uint64_t addr, uint32_t len)
{
	(void)o;
	if (nzones < 16)
		zones[nzones].addr = addr, zones[nzones++].len = len;
	return 0;
}

static int zone_del(void *o, uint64_t addr, uint32_t len)
{
	(void)o;
	for (unsigned int i = 0; i < nzones; i++)
		if (zones[i].addr == addr && zones[i].len == len)
			return zones[i] = zones[--nzones], 0;
	return -ENOENT;
}

/* Sees every access the trap table dispatches, replayed ones too. */
static void account(void *o, enum bus_space sp, const struct bus_region *r, uint64_t addr, bool wr)
{
	(void)o;
	/* A batched write must find its device, which drops its zones and
	 * drains before its BAR goes. */
	FZ_CHECK(sp != BUS_MMIO_BATCHED || r);
	if (sp == BUS_PIO || !r || !wr)
		return;
	uint64_t off = addr - r->base;
	r->reg_name(r->opaque, off, wr); /* the exit statistics' names */
	/* Conservatively: 8-byte and unaligned writes that may reach them. */
	t.touched[0] |= off == E1000_CTRL || (off >= E1000_RDLEN - 4 && off <= E1000_RDH);
	t.touched[1] |= off == E1000_CTRL || (off >= E1000_TDLEN - 4 && off <= E1000_TDH);
}

/* A guest access as KVM handles it: a write wholly inside a zone goes to
 * the ring unless it is full; anything else exits. */
static void guest_access(uint64_t addr, uint32_t len, bool wr, uint64_t v)
{
	uint32_t last = ring->last, max = vm.cmmio.max;
	for (unsigned int i = 0; wr && i < nzones && (last + 1) % max != ring->first; i++) {
		if (addr < zones[i].addr || addr + len > zones[i].addr + zones[i].len)
			continue;
		struct kvm_coalesced_mmio *e = &ring->coalesced_mmio[last];
		e->phys_addr = addr, e->len = len, e->pio = 0;
		memcpy(e->data, &v, 8);
		__atomic_store_n(&ring->last, (last + 1) % max, __ATOMIC_RELEASE);
		return;
	}
	if (!multi)
		cmmio_flush(&vm);
	bus_dispatch(&vm.bus, BUS_MMIO, addr, &v, len, wr, 0);
}

static void reg_wr(uint32_t off, uint32_t v)
{
	guest_access(bar + off, 4, true, v);
}

static uint32_t ring_n(uint32_t len_reg)
{
	uint32_t n = REG(len_reg) / E1000_DESC_LEN;
	return n ? n : 1;
}

/* Host pointer of [gpa, gpa + len) in fake RAM, low or high; NULL if not. */
static uint8_t *ram(uint64_t gpa, uint64_t len)
{
	uint64_t h = gpa - GUEST_MEM_HIGH_BASE;
	if (gpa < FZ_LOW && len <= FZ_LOW - gpa)
		return fz_ram + gpa;
	if (gpa >= GUEST_MEM_HIGH_BASE && h < FZ_HIGH && len <= FZ_HIGH - h)
		return fz_ram + FZ_LOW + h;
	return NULL;
}

/* Descriptor k past the tail of the ring whose base is at `bal`. */
static uint8_t *desc_at(uint32_t bal, uint32_t k)
{
	uint64_t base = (uint64_t)REG(bal + 4) << 32 | REG(bal);
	uint32_t i = (REG(bal + 0x18) + k) % ring_n(bal + 8);
	return ram(base + (uint64_t)i * E1000_DESC_LEN, E1000_DESC_LEN);
}

/* A ring (low RAM from 0, aligned or not) or buffer (from FZ_BUF) address,
 * or high RAM, the ends of RAM, the device's own registers, anything. */
static uint64_t pick_gpa(bool ring_base)
{
	uint8_t s = fz_u8();
	uint64_t a = s % 8 == 6	  ? bar + fz_u16()
		     : s % 8 == 7 ? fz_gpa()
		     : ring_base  ? fz_u16() % FZ_BUF
				  : FZ_BUF + fz_u16() % (FZ_LOW - FZ_BUF);
	return ring_base && !(s & 0x80) ? a & ~0xfull : a;
}

/* A ring: base, length (8..64 descriptors, or any), head, tail 0, IMS, and
 * the enable bit with more control bits. */
static void ring_setup(uint32_t bal, uint32_t ctl, uint32_t ctl_bits)
{
	uint8_t s = fz_u8();
	uint64_t base = pick_gpa(true);
	reg_wr(bal, (uint32_t)base);
	reg_wr(bal + 4, (uint32_t)(base >> 32));
	reg_wr(bal + 8, s & 1 ? fz_u32() : 128u << (s >> 1 & 3));
	reg_wr(bal + 0x10, s & 0x10 ? fz_u16() : 0);
	reg_wr(bal + 0x18, 0);
	reg_wr(E1000_IMS, s & 0x20 ? fz_u32() : E1000_ICR_VALID);
	reg_wr(ctl, ctl_bits | (s & 0x40 ? fz_u32() : 0));
}

/* A TX descriptor at TDT + k: legacy, context (offsets, PAYLEN, TUCMD,
 * HDRLEN, MSS from the stream) or data. */
static void tx_desc(void)
{
	uint8_t s = fz_u8(), desc[E1000_DESC_LEN], *p = desc_at(E1000_TDBAL, s >> 4);
	uint64_t addr = pick_gpa(false);
	uint32_t len = s & 8 ? fz_u32() : fz_u8(), cmd = (uint32_t)fz_u8() << 24, lower;
	memcpy(desc, &addr, 8);
	if (s % 4 == 0)
		lower = (len & 0xffffff) | (cmd & ~E1000_TXD_CMD_DEXT);
	else if (s % 4 == 1)
		lower = (len & 0xfffff) | cmd | E1000_TXD_CMD_DEXT, fz_bytes(desc, 8);
	else
		lower = (len & 0xfffff) | cmd | E1000_TXD_CMD_DEXT | E1000_TXD_DTYP_D;
	memcpy(desc + 8, &lower, 4);
	desc[12] = 0;
	fz_bytes(desc + 13, 3); /* CSS, HDRLEN or POPTS; special or MSS */
	if (p)
		memcpy(p, desc, sizeof(desc));
}

/* 1..8 RX descriptors from RDT on, with buffer addresses; maybe RDT too. */
static void rx_descs(void)
{
	uint8_t s = fz_u8();
	for (uint32_t i = 0; i <= (s & 7u); i++) {
		uint64_t buf = pick_gpa(false);
		uint8_t *p = desc_at(E1000_RDBAL, i);
		if (p)
			memset(p, 0, E1000_DESC_LEN), memcpy(p, &buf, 8);
	}
	if (s & 8)
		reg_wr(E1000_RDT, (REG(E1000_RDT) + (s & 7u) + 1) % ring_n(E1000_RDLEN));
}

/* Ethernet, IPv4 or IPv6 and TCP headers in a buffer, a few bytes from the
 * stream over them: what TSO and the checksum offloads parse. */
static void tx_packet(void)
{
	static const uint8_t v4[54] = {2, 0, 0,	   0, 0, 1,    2,	 0,	     0,
				       0, 0, 0x44, 8, 0, 0x45, [23] = 6, [46] = 0x50};
	static const uint8_t v6[74] = {2, 0, 0,	   0,	 0,    1,    2,	       0,	   0,
				       0, 0, 0x44, 0x86, 0xdd, 0x60, [20] = 6, [66] = 0x50};
	uint8_t s = fz_u8(), *p = ram(FZ_BUF + fz_u16() % (FZ_LOW - FZ_BUF), 80);
	if (!p)
		return;
	memcpy(p, s & 1 ? v6 : v4, s & 1 ? sizeof(v6) : sizeof(v4));
	fz_bytes(p + fz_u8() % 64, s >> 4);
}

/* Reads what the device sent and checks it. */
static void wire_drain(void)
{
	ssize_t r;
	while ((r = recv(wire, frame, sizeof(frame), MSG_TRUNC)) >= 0) {
		struct virtio_net_hdr_v1 h;
		size_t len = (size_t)r - HDR;
		FZ_CHECK(r >= HDR && len <= E1000_TX_MAX);
		memcpy(&h, frame, sizeof(h));
		FZ_CHECK((h.flags & ~VIRTIO_NET_HDR_F_NEEDS_CSUM) == 0);
		FZ_CHECK(!h.flags || (size_t)h.csum_start + h.csum_offset + 2 <= len);
		FZ_CHECK(h.gso_type == VIRTIO_NET_HDR_GSO_NONE ||
			 ((h.gso_type == VIRTIO_NET_HDR_GSO_TCPV4 ||
			   h.gso_type == VIRTIO_NET_HDR_GSO_TCPV6) &&
			  h.flags && h.gso_size && h.hdr_len <= len));
		t.wire_msgs++, t.wire_bytes += len;
	}
	/* The device counted what it sent, and only that (the rest is JUNK). */
	FZ_CHECK(t.wire_msgs == t.junk + d->stats.tx_packets);
	FZ_CHECK(t.wire_bytes == t.junk * (JUNK - HDR) + d->stats.tx_bytes);
}

/* A host GSO frame (TCP over IPv4 or IPv6) RX will cut, but for what the
 * stream leaves in the vnet header's size and the TCP header's length. */
static void gso_frame(uint8_t *f, bool v6)
{
	struct virtio_net_hdr_v1 h;
	memcpy(&h, frame, sizeof(h));
	h.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
	h.gso_type = v6 ? VIRTIO_NET_HDR_GSO_TCPV6 : VIRTIO_NET_HDR_GSO_TCPV4;
	h.csum_start = v6 ? 14 + 40 : 14 + 20;
	h.gso_size %= 1600; /* mostly segments that fit, some that do not */
	f[h.csum_start + 12] = (uint8_t)(h.hdr_len << 4); /* TCP header: 0-60 bytes */
	memcpy(frame, &h, sizeof(h));
	f[12] = v6 ? 0x86 : 0x08;
	f[13] = v6 ? 0xdd : 0x00;
	f[14] = v6 ? 0x60 : 0x45;
	f[v6 ? 14 + 6 : 14 + 9] = 6;
	if (!v6)
		f[14 + 6] &= 0x80; /* not a fragment */
}

/* A frame from the host (or a burst of it): any length, or shorter than
 * the vnet header; a header from the stream; to us, broadcast, multicast
 * or anyone. */
static void host_send(void)
{
	static const uint8_t mc[6] = {1, 0, 0x5e, 0, 0, 0xfb},
			     bc[6] = {255, 255, 255, 255, 255, 255};
	uint8_t s = fz_u8(), *f = frame + HDR;
	size_t len = s & 1 ? fz_u16() % (E1000_RX_LPE_MAX + 64) : 14u + fz_u8();
	if (s & 2)
		len = fz_u32() % (E1000_RX_MAX + 64);
	memset(frame, 0, HDR + len);
	if (s & 4)
		fz_bytes(frame, HDR);
	if (len >= 6)
		memcpy(f, s & 8 ? mac : s & 16 ? mc : bc, 6);
	fz_bytes(f, s & 0x20 ? (len < 14 ? len : 14) : 0);
	if ((s & 4) && len >= 14 + 40 + 20 && (frame[0] & 0x80))
		gso_frame(f, frame[0] & 0x40);
	size_t n = s & 0x40 ? 1u + fz_u8() % (HDR - 1) : HDR + len; /* 0 would be EOF */
	unsigned int burst = s & 0x80 ? 1u + fz_u8() * 2u : 1;	    /* past E1000_RX_BUDGET */
	for (unsigned int i = 0; i < burst && send(wire, frame, n, 0) == (ssize_t)n; i++)
		t.host_frames++, t.host_bytes += n;
}

static bool readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	return poll(&p, 1, 0) == 1;
}

/* What the I/O thread does on a tap (or sched_fd) event. */
static void rx_run(bool sched)
{
	uint64_t n;
	if (sched && read(d->sched_fd, &n, sizeof(n)) != sizeof(n))
		return;
	e1000_rx_run(d);
	/* A frame left behind has a wakeup coming: the RDT or RCTL write
	 * that ends parking, or the sched_fd RX wrote. */
	FZ_CHECK((!readable(d->ctx.tap.fd) && !d->rx_len) || d->rx_parked || readable(d->sched_fd));
}

/* Setup byte: bits 0-1 coalesce off/on/all(/on), 2 decoding off, 3
 * several vCPUs (an exit does not drain what the others batched), 4 a
 * page-sized ring (else 2..9 entries by bits 5-7: it wraps and fills). */
static void setup(uint8_t s)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char err[200];
	int sv[2];
	if (!ring && !(ring = aligned_alloc(page, page)))
		abort();
	bus_init(&vm.bus);
	vm.bus.account = account;
	cmmio_init(&vm.cmmio);
	memset(ring, 0, page);
	vm.cmmio.ring = ring;
	vm.cmmio.max = s & 0x10
			   ? (uint32_t)((page - sizeof(*ring)) / sizeof(ring->coalesced_mmio[0]))
			   : 2u + (s >> 5);
	multi = s & 8;
	memset(&host, 0, sizeof(host));
	memset(&t, 0, sizeof(t));
	nzones = 0, now_ns = 1000000000, itr_due = 0;
	pci = pci_bus_create_with(&vm.bus, &fake_host_ops, &host);
	if (!pci || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0, sv) < 0)
		abort();
	wire = sv[1];
	struct e1000_ctx ctx = {.name = "e1000-0",
				.gm = &fz_gm,
				.coalesce = (enum e1000_coalesce)((s & 3) % 3),
				.zone_add = zone_add,
				.zone_del = zone_del,
				.flush = cmmio_flush_cb,
				.cm_opaque = &vm};
	tap_from_fd(&ctx.tap, sv[0]);
	memcpy(ctx.mac, mac, 6);
	d = e1000_create(&ctx, err, sizeof(err));
	if (!d || pci_bus_add_device(pci, e1000_pci(d), err, sizeof(err)) < 0)
		abort();
	d->clock_ns = fake_clock;
	if (!(s & 4))
		cfg_wr(&vm.bus, 1, PCI_COMMAND, 2,
		       PCI_COMMAND_IO | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	bar = cfg_bar64(&vm.bus, 1, 0);
	io_port = (uint16_t)(cfg_rd(&vm.bus, 1, PCI_BAR0 + 4 * E1000_IO_BAR, 4) & ~3u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t junk[JUNK];
	fz_begin(data, size);
	setup(fz_u8());
	for (unsigned int steps = 0; fz_more() && steps < 512; steps++) {
		uint8_t op = fz_u8(), s;
		uint32_t n[2] = {REG(E1000_RDLEN) / 16, REG(E1000_TDLEN) / 16};
		uint32_t h[2] = {REG(E1000_RDH), REG(E1000_TDH)};
		uint64_t v;
		bool armed = d->itr_armed;
		itr_fired = t.touched[0] = t.touched[1] = false;
		switch (op % 16) {
		case 0: /* 1/2/4/8 bytes at any offset up to past the BAR's end */
		case 1:
		case 2:
			s = fz_u8();
			if (s & 0x80) { /* or 1/2/4 bytes of port I/O around the I/O BAR */
				v = fz_u32();
				if (!multi) /* the exit drains first */
					cmmio_flush(&vm);
				bus_dispatch(&vm.bus, BUS_PIO,
					     (uint16_t)(io_port - 4 + (s >> 2) % 16), &v,
					     1u << (s & 3) % 3, op & 0x80, 0);
				/* IODATA reaches any register, heads and CTRL too;
				 * an IODATA read drains the batched writes, which
				 * `account` saw: keep what it set. */
				if (op & 0x80)
					t.touched[0] = t.touched[1] = true;
				break;
			}
			v = fz_u32() % (E1000_BAR_SIZE + 16);
			guest_access(bar + v, 1u << (s & 3), op & 0x80, fz_u64());
			break;
		case 3:
			ring_setup(E1000_TDBAL, E1000_TCTL, E1000_TCTL_EN);
			break;
		case 4:
			ring_setup(E1000_RDBAL, E1000_RCTL, E1000_RCTL_EN | E1000_RCTL_BAM);
			break;
		case 5:
			tx_desc();
			break;
		case 6: /* TDT: 1..8 more descriptors go, or any value */
			v = op & 0x80 ? fz_u16() : REG(E1000_TDT) + 1 + fz_u8() % 8;
			reg_wr(E1000_TDT, (uint32_t)(op & 0x80 ? v : v % ring_n(E1000_TDLEN)));
			break;
		case 7:
			tx_packet();
			break;
		case 8:
			rx_descs();
			break;
		case 9:
			host_send();
			break;
		case 10:
			rx_run(op & 0x80);
			break;
		case 11: /* the host stops reading; or takes small packets only */
			if (op & 0x80)
				while (send(d->ctx.tap.fd, junk, JUNK, 0) == JUNK)
					t.junk++;
			else if (op & 0x40)
				setsockopt(d->ctx.tap.fd, SOL_SOCKET, SO_SNDBUF,
					   &(int){1024 + fz_u16()}, sizeof(int));
			else
				wire_drain();
			break;
		case 12: /* time passes; the timerfds due fire; nothing stays overdue */
			now_ns += op & 0x80 ? (uint64_t)fz_u16() << 10 : fz_u8() * 256u;
			if (d->delay_at && d->delay_at <= now_ns)
				e1000_delay_event(d, 0);
			if (d->itr_armed && itr_due <= now_ns)
				e1000_itr_event(d, 0), itr_fired = true;
			FZ_CHECK(!d->rx_delay.due_ns || DUE(&d->rx_delay) > now_ns);
			FZ_CHECK(!d->tx_delay.due_ns || DUE(&d->tx_delay) > now_ns);
			break;
		case 13: /* a timer fires when nothing is due (stale arming, reset) */
			if (op & 0x40)
				e1000_rdt_event(d, 0); /* the batched-RDT look */
			else if (op & 0x80)
				e1000_delay_event(d, 0);
			else
				e1000_itr_event(d, 0), itr_fired = true;
			break;
		case 14: /* CTRL.RST; or config space: COMMAND bits, BAR 0 moved */
			if (op & 0x80) {
				reg_wr(E1000_CTRL, E1000_CTRL_RST | fz_u32());
				break;
			}
			v = fz_u16();
			if (!multi) /* the exit drains first */
				cmmio_flush(&vm);
			if (op & 0x40) {
				cfg_wr(&vm.bus, 1, PCI_BAR0, 4, (uint32_t)(v << 17) | 4);
				cfg_wr(&vm.bus, 1, PCI_BAR0 + 4, 4, (uint32_t)(v >> 15));
			} else {
				cfg_wr(&vm.bus, 1, PCI_COMMAND, 2,
				       (uint32_t)v & (PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER |
						      PCI_COMMAND_INTX_DISABLE));
			}
			bar = cfg_bar64(&vm.bus, 1, 0);
			break;
		default: /* an exit elsewhere drains; or raw bytes in low RAM */
			if (op & 0x80) {
				cmmio_flush(&vm);
				break;
			}
			v = fz_u16();
			s = fz_u8() % 32;
			if (v + s <= FZ_LOW)
				fz_bytes(fz_at(v), s);
		}
		/* The device arms the ITR timerfd for itr_next_ns. */
		if (d->itr_armed && (!armed || itr_fired))
			itr_due = d->itr_next_ns;
		/* Heads move only around their rings; the line is up for a
		 * pending unmasked cause unless ITR's timer holds it; a waiting
		 * delay has the timer armed for no later than it is due. */
		for (int i = 0; i < 2; i++)
			FZ_CHECK(t.touched[i] || !n[i] || h[i] >= n[i] ||
				 REG(i ? E1000_TDH : E1000_RDH) < n[i]);
		uint32_t pend = REG(E1000_ICR) & REG(E1000_IMS);
		FZ_CHECK(!d->irq_level || pend);
		FZ_CHECK(!pend || d->irq_level || (d->itr_armed && itr_due > now_ns));
		FZ_CHECK(!d->rx_delay.due_ns || (d->delay_at && d->delay_at <= DUE(&d->rx_delay)));
		FZ_CHECK(!d->tx_delay.due_ns || (d->delay_at && d->delay_at <= DUE(&d->tx_delay)));
	}
	wire_drain();
	/* RX off: the tap's frames are read and dropped. Every frame the host
	 * sent is then counted once (one lost to a bad address: DMA error). */
	pthread_mutex_lock(&d->lock);
	d->regs[E1000_RCTL / 4] = 0;
	pthread_mutex_unlock(&d->lock);
	for (int i = 0; i < 64 && (i == 0 || readable(d->ctx.tap.fd)); i++)
		rx_run(false);
	const struct e1000_stats *st = &d->stats;
	/* A GSO frame counts once: rx_tso when all its segments went in,
	 * else as dropped; each segment repeats its frame's headers. */
	uint64_t seen = st->rx_packets - st->rx_tso_segs + st->rx_tso + st->rx_filtered +
			st->rx_dropped + st->rx_errors;
	FZ_CHECK(!d->rx_len && !d->rx_gso.on && st->rx_tso <= st->rx_tso_segs);
	FZ_CHECK(seen <= t.host_frames && t.host_frames - seen <= st->dma_errors);
	FZ_CHECK(st->rx_bytes <= t.host_bytes + st->rx_tso_segs * sizeof(d->rx_gso.head));
	/* Teardown as skiff's: the BAR goes (zones, then a drain: nothing
	 * stays batched), then the device. */
	pci_bus_destroy(pci);
	FZ_CHECK(ring->first == ring->last && nzones == 0);
	e1000_stop(d);
	e1000_destroy(d);
	close(wire);
	FZ_CHECK(vm.bus.space[BUS_MMIO].count == 0);
	bus_destroy(&vm.bus);
	cmmio_destroy(&vm.cmmio);
	return 0;
}
