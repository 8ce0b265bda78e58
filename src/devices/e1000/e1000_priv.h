// SPDX-License-Identifier: Apache-2.0
/* e1000 internals shared by e1000.c (setup, registers, interrupts),
 * e1000_eeprom.c (EEPROM and PHY), e1000_tx.c, e1000_rx.c and the tests.
 *
 * Locking: one mutex for all device state. Register accesses (vCPU
 * threads, or the thread draining the coalesced ring) and the TX and RX
 * paths (I/O thread; TX inside the TDT write where there is none) take it.
 * ctx.flush is called only without the lock: it replays writes through the
 * register handler, which takes it. */
#ifndef SKIFF_E1000_PRIV_H
#define SKIFF_E1000_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/counter.h"
#include "core/log.h"
#include "devices/e1000/e1000.h"
#include "devices/e1000/e1000_regs.h"
#include "pci/pci.h"

/* Largest frame either way: a 64 KiB TSO packet and its headers. */
#define E1000_TX_MAX (65536 + 256)
#define E1000_RX_MAX (65536 + 256)
/* Without RCTL.LPE the 82540 takes at most 1522 bytes (VLAN-tagged 1518
 * plus the tag, without the CRC the tap never gives). */
#define E1000_RX_STD_MAX   1522
#define E1000_RX_LPE_MAX   16384 /* the 82540's jumbo limit */
#define E1000_FCS_LEN	   4	 /* RCTL.SECRC clear: the length counts a CRC */
#define E1000_RX_BUDGET	   256	 /* frames per run before yielding */
#define E1000_TX_BUDGET	   256	 /* descriptors per I/O-thread run */
#define E1000_VNET_HDR_LEN 12

/* One counter per line of e1000_counter_name(); keep the order. */
struct e1000_stats {
	counter_t tx_packets, tx_bytes;
	counter_t tx_dropped; /* malformed packets or descriptors from the guest */
	counter_t tx_errors;  /* the tap refused a packet */
	counter_t tx_tso;     /* TSO packets handed to the tap */
	counter_t rx_packets, rx_bytes;
	counter_t rx_filtered;	 /* not for us (address filters) */
	counter_t rx_dropped;	 /* too big, RX disabled */
	counter_t rx_starved;	 /* times RX waited for guest buffers */
	counter_t rx_errors;	 /* tap read errors */
	counter_t dma_errors;	 /* descriptor or buffer address not in guest RAM */
	counter_t ring_errors;	 /* bad ring base, length, head or tail */
	counter_t irqs;		 /* interrupt line raised */
	counter_t flushes;	 /* coalesced ring drains asked by the device */
	counter_t irqs_deferred; /* interrupts held back by ITR */
	counter_t rx_tso;	 /* host GSO frames cut into segments (e1000_rx_gso.c) */
	counter_t rx_tso_segs;	 /* the segments, also in rx_packets */
};
#define E1000_NR_COUNTERS (sizeof(struct e1000_stats) / sizeof(counter_t))

/* The last context descriptor (offload parameters for data descriptors). */
struct e1000_tx_ctx {
	uint8_t ipcss, ipcso, tucss, tucso;
	uint16_t ipcse, tucse;
	uint32_t paylen;
	uint8_t tucmd; /* TCP, IP, TSE, ... (bits 24-31 of the command dword) */
	uint8_t hdr_len;
	uint16_t mss;
};

/* A GSO frame from the host being cut into segments (e1000_rx_gso.c) */
struct e1000_rx_gso {
	bool on, v6;
	uint16_t mss;
	uint16_t l3, l4, hdr; /* where IP and TCP start; where the payload starts */
	uint32_t off, seg;    /* the next segment: its payload offset, its index */
	uint8_t head[256];    /* the frame's headers as the host sent them */
};

/* An interrupt delay timer (e1000_delay.c); 0 = not running. */
struct e1000_delay {
	uint64_t due_ns; /* restarted per event (RDTR, TIDV) */
	uint64_t abs_ns; /* from the first event (RADV, TADV) */
};

/* Kinds of guest error logged once each. */
enum e1000_log {
	E1000_LOG_TX_RING,
	E1000_LOG_RX_RING,
	E1000_LOG_TX_DMA,
	E1000_LOG_RX_DMA,
	E1000_LOG_TX_OVERSIZE,
	E1000_LOG_TX_TSO,
	E1000_LOG_TX_DESC,
	E1000_LOG_TX_TAP,
	E1000_LOG_RX_OVERSIZE,
	E1000_LOG_RX_GSO,
	E1000_LOG_ACCESS,
	E1000_LOG_NR,
};

struct e1000 {
	struct pci_device pci;
	char name[24];
	struct e1000_ctx ctx; /* name points at `name` */
	pthread_mutex_t lock;
	bool stopped;

	uint32_t regs[E1000_REG_END / 4];
	uint32_t stat[(E1000_STATS_END - E1000_STATS) / 4]; /* clear on read */
	bool irq_level;

	/* EEPROM (microwire, bit-banged through EECD, or EERD) */
	uint16_t eeprom[E1000_EEPROM_WORDS];
	uint32_t ee_in; /* bits shifted in since CS rose */
	unsigned int ee_nin;
	int ee_addr; /* word being shifted out, -1 if none */
	unsigned int ee_nout;
	bool ee_do; /* current DO */
	uint16_t phy[32];

	/* TX: the packet being gathered from data descriptors */
	struct e1000_tx_ctx txc;
	uint8_t tx_buf[E1000_TX_MAX];
	size_t tx_len;
	bool tx_first_seen; /* the packet's first descriptor was read */
	bool tx_tse, tx_ixsm, tx_txsm, tx_legacy_ic;
	uint8_t tx_css, tx_cso;
	bool tx_bad;	 /* drop the packet when its EOP comes */
	bool tx_pending; /* TDT or TCTL written: the I/O thread transmits */

	/* RX */
	uint8_t rx_buf[E1000_RX_MAX];
	size_t rx_len;	 /* a frame read from the tap waiting for buffers, or 0 */
	bool rx_vouched; /* its checksums are right by the host's word (e1000_rx.c) */
	struct e1000_rx_gso rx_gso;
	bool rx_parked; /* waiting for RDT to move */
	bool rx_wake;	/* RX asked the I/O thread back through sched_fd */
	/* While parked with RDT batched, rdt_fd (a timerfd on the I/O
	 * thread) drains the coalesced ring every rdt_poll_ns (e1000_rdt.c). */
	int rdt_fd;
	bool rdt_armed;
	uint64_t rdt_poll_ns;
	int sched_fd; /* eventfd: the I/O thread transmits, resumes RX */

	/* ITR: no interrupt sooner than itr_next_ns; a deferred one is raised
	 * by itr_fd (a timerfd on the I/O thread). */
	int itr_fd;
	bool itr_armed;
	uint64_t itr_next_ns;
	uint64_t (*clock_ns)(void); /* monotonic_ns; tests substitute theirs */

	/* Interrupt delays (RDTR/RADV, TIDV/TADV): delay_fd is a timerfd on
	 * the I/O thread, armed for delay_at (0: not armed). */
	int delay_fd;
	uint64_t delay_at;
	struct e1000_delay rx_delay, tx_delay;

	bool zones_on;
	uint64_t bar_addr;
	uint32_t ioaddr;		  /* the register IODATA reaches (e1000_io.c) */
	atomic_bool logged[E1000_LOG_NR]; /* log_once_at flags */
	struct e1000_stats stats;
};

static inline uint32_t e1000_reg(const struct e1000 *d, uint32_t off)
{
	return d->regs[off / 4];
}

/* Logs once per kind; fmt describes what the guest did. Caller holds lock. */
void e1000_log_once(struct e1000 *d, enum e1000_log kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* e1000.c: the ITR timer fired (I/O thread; tests call it directly). */
void e1000_itr_event(void *opaque, uint32_t events);
/* e1000.c: sched_fd: a pending transmit, then RX (I/O thread; tests call
 * it directly). e1000_wake asks for that turn; its caller has set
 * tx_pending or rx_wake. */
void e1000_sched_event(void *opaque, uint32_t events);
void e1000_wake(struct e1000 *d);
/* e1000.c: interrupt causes. Caller holds lock. */
void e1000_set_ics(struct e1000 *d, uint32_t causes);
void e1000_irq_update(struct e1000 *d);
/* Whether a cause set now could not raise the line before until_ns
 * anyway: it is masked, or ITR holds the line until then. */
bool e1000_irq_held(const struct e1000 *d, uint32_t cause, uint64_t until_ns);
/* ICR's read: the causes, then all cleared. */
uint32_t e1000_icr_read(struct e1000 *d);
/* Adds to a statistics register (64-bit pairs: the low offset). */
void e1000_stat_add(struct e1000 *d, uint32_t off, uint64_t n);
void e1000_stat_add64(struct e1000 *d, uint32_t off, uint64_t n);

/* e1000_delay.c: a packet was received (RXT0 after RDTR/RADV), or TX
 * descriptors were written back (TXDW after TIDV/TADV if `ide`); FPD
 * (flush) sets the waiting `causes` at once. Caller holds lock. */
void e1000_delay_rx(struct e1000 *d);
void e1000_delay_tx(struct e1000 *d, bool ide);
void e1000_delay_flush(struct e1000 *d, uint32_t causes);
void e1000_delay_reset(struct e1000 *d);
/* The timer fired (I/O thread; tests call it directly). */
void e1000_delay_event(void *opaque, uint32_t events);

/* e1000.c: a register of the memory BAR, with its side effects. Caller
 * holds lock. */
uint32_t e1000_reg_read(struct e1000 *d, uint32_t off);
void e1000_reg_write(struct e1000 *d, uint32_t off, uint32_t v);

/* e1000_io.c: the I/O BAR's handler and its bus_reg_name_fn */
struct bus_access;
void e1000_pio(void *opaque, struct bus_access *acc);
const char *e1000_pio_name(void *opaque, uint64_t off, bool is_write);

/* e1000_names.c: bus_reg_name_fn of the register BAR */
const char *e1000_reg_name(void *opaque, uint64_t off, bool is_write);

/* e1000_eeprom.c */
void e1000_eeprom_init(struct e1000 *d);
void e1000_phy_reset(struct e1000 *d);
void e1000_eecd_write(struct e1000 *d, uint32_t v);
uint32_t e1000_eecd_read(struct e1000 *d);
void e1000_eerd_write(struct e1000 *d, uint32_t v);
void e1000_mdic_write(struct e1000 *d, uint32_t v);
/* Whether phy (32 registers) differs from this PHY, as reset, only in
 * the bits a driver can write (a restored PHY: e1000_snap.c). */
bool e1000_phy_fits(const struct e1000 *d, const uint16_t *phy);

/* e1000_tx.c: runs the TX ring from TDH towards TDT, at most one lap and
 * `budget` descriptors; true if it stopped for the budget with more to
 * do. Caller holds lock. */
bool e1000_tx_run(struct e1000 *d, unsigned int budget);
void e1000_tx_reset(struct e1000 *d);
/* Drops a packet half gathered (no EOP yet), counted: the ring it came
 * from was reset or TX turned off. */
void e1000_tx_abort(struct e1000 *d);

/* e1000_rx.c */
bool e1000_rx_accept(const struct e1000 *d, const uint8_t *frame, size_t len);
void e1000_rx_reset(struct e1000 *d);
/* RDT moved (caller holds lock): resumes a parked RX. */
void e1000_rx_kick(struct e1000 *d);
/* e1000_rdt.c: RX waits for RDT to move (caller holds lock); with RDT
 * batched, the timer looks in the coalesced ring for it. */
void e1000_rx_park(struct e1000 *d);
/* The timer fired (I/O thread; tests call it directly). */
void e1000_rdt_event(void *opaque, uint32_t events);

struct virtio_net_hdr_v1;
/* e1000_rx_gso.c. Whether the GSO frame just read into rx_buf (len
 * bytes, `h` its header) can be cut into segments of at most `max` bytes;
 * if so, rx_gso is set up for it. */
bool e1000_rx_gso_start(struct e1000 *d, const struct virtio_net_hdr_v1 *h, size_t len, size_t max);
/* Builds the next segment in rx_buf; returns where it starts, its length
 * in *len. */
uint8_t *e1000_rx_gso_next(struct e1000 *d, size_t *len);
/* That segment (len bytes) is in the guest: true when it was the last. */
bool e1000_rx_gso_advance(struct e1000 *d, size_t len);

/* Internet checksum helpers (e1000_tx.c) */
uint32_t e1000_csum_add(uint32_t sum, const uint8_t *p, size_t len);
uint16_t e1000_csum_fold(uint32_t sum);

/* Network-order header fields (TX offloads, RX segmentation) */
static inline uint16_t e1000_be16_get(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline void e1000_be16_put(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The tap's I/O thread event (e1000.c): frames to read, room to write. */
void e1000_tap_event(void *opaque, uint32_t events);

#endif
