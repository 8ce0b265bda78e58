// SPDX-License-Identifier: Apache-2.0
/* virtio-net internals shared by virtio_net.c (setup, ops, I/O thread
 * handlers), virtio_net_rx.c, virtio_net_tx.c, virtio_net_ctrl.c and the
 * unit tests.
 *
 * Queues (virtio 1.2 5.1.2): N pairs rx0, tx0, rx1, tx1, ... (queues=N,
 * default 1) and the control queue last (q2N); VIRTIO_NET_F_CTRL_VQ is
 * always offered (notification coalescing is commanded there), and
 * VIRTIO_NET_F_MQ with more than one pair. Each pair has its own tap queue (fd), rings and state
 * (struct virtio_net_pair): pairs share nothing mutable but the device's
 * counters (counter_add). The driver starts with one pair and enables more
 * with VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET; the tap queues of the pairs it has
 * not enabled are detached (TUNSETQUEUE), so the kernel steers no packets
 * to them, and their queues are not served.
 *
 * Each queue's work runs under its own mutex, because kicks arrive on the
 * I/O thread (ioeventfd) or on a vCPU thread (--no-ioeventfd) and tap
 * readiness on the I/O thread. Work never blocks: the tap fds are
 * non-blocking, and a run that hits its budget hands the rest to the I/O
 * thread through sched_fd. Lock order: ctrl_lock, then a pair's tx_lock,
 * then its rx_lock (a TX run receives after a GSO frame); never the
 * reverse. */
#ifndef SKIFF_VIRTIO_NET_PRIV_H
#define SKIFF_VIRTIO_NET_PRIV_H

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "devices/device.h"
#include "devices/throttle.h"
#include "devices/virtio-net/virtio_net_spec.h"
#include "net/tap.h"
#include "net/vnet_hdr.h"
#include "net/vhost_net.h"
#include "virtio/virtio_dev.h"

/* Feature bits (5.1.3), the header (5.1.6) and the control queue's
 * classes and commands (5.1.6.5) are the kernel's uapi
 * <linux/virtio_net.h>, through net/vnet_hdr.h. */

/* Config space (5.1.4): mac, status, max_virtqueue_pairs, mtu. */
#define VIRTIO_NET_CONFIG_LEN 12
#define VIRTIO_NET_MTU	      1500

#define VIRTIO_NET_RXQ 0 /* of a pair: pair i's rx is 2i, its tx 2i + 1 */
#define VIRTIO_NET_TXQ 1
/* queues=N: 2N + 1 virtqueues must fit the transport's VIRTIO_MAX_QUEUES. */
#define VIRTIO_NET_PAIRS_MAX NET_QUEUES_MAX
_Static_assert(2 * VIRTIO_NET_PAIRS_MAX + 1 <= VIRTIO_MAX_QUEUES, "net queues");

/* The longest hold a driver may set: a notification later than a second
 * is a lost interrupt to the guest's watchdogs, not coalescing. */
#define VIRTIO_NET_COAL_USECS_MAX 1000000u
#define VIRTIO_NET_QUEUE_SIZE	  256
#define VIRTIO_NET_MSIX_ONE_PAIR  2 /* config + one shared by rx, tx and ctrl */
/* A one-pair card's own TX coalescing, until the driver sets its own
 * (virtio_net_coal_defaults): a TX completion waits this long, or for this
 * many packets, for a receive interrupt on the shared vector to carry it
 * (no hold where the driver put TX on a vector of its own).
 * The guest's request/response round trip is ~0.1 ms in the nested
 * testbed, microseconds on hardware; a stream's ACKs come sooner. */
#define VIRTIO_NET_TX_HOLD_USECS   250u
#define VIRTIO_NET_TX_HOLD_PACKETS 32u
/* Packets per queue per run before yielding to the I/O thread's other fds:
 * one busy guest cannot starve the loop. */
#define VIRTIO_NET_BUDGET 256
/* Largest frame (without the header) either way: a 64 KiB TSO packet plus
 * link headers, with QEMU's margin (NET_BUFSIZE). */
#define VIRTIO_NET_MAX_FRAME (65536 + 4096)
/* iovecs for one readv/writev: the host header, a chain's (on receive,
 * maybe several chains'), the bounce buffer. Calls use at most IOV_MAX. */
#define VIRTIO_NET_IOV (VIRTQ_MAX_SEGS + 2)
/* Chains at most popped ahead of a read, after the first: 64 KiB in 4 KiB
 * buffers and some */
#define VIRTIO_NET_RX_AHEAD 24

/* Bits of sched: work the I/O thread should resume, two per pair (pair i
 * at bits 2i and 2i + 1). */
#define VIRTIO_NET_SCHED_RX 1u
#define VIRTIO_NET_SCHED_TX 2u

struct virtio_net_stats {
	counter_t rx_packets, rx_bytes;
	counter_t rx_dropped; /* frames the guest cannot take (too big, bad offload) */
	counter_t rx_starved; /* times RX stopped for lack of guest buffers */
	counter_t rx_errors;  /* tap read errors other than EAGAIN */
	counter_t tx_packets, tx_bytes;
	counter_t tx_dropped;		      /* malformed chains or headers from the guest */
	counter_t tx_errors;		      /* tap write errors (packet dropped) */
	counter_t tx_blocked;		      /* times the tap said EAGAIN */
	counter_t rx_throttled, tx_throttled; /* the rate limiters made a side wait */
	counter_t rx_held, tx_held;	      /* notifications held back by coalescing */
	counter_t coal_covered;		      /* held ones another queue's interrupt carried */
	counter_t ctrl_ok;		      /* control commands answered VIRTIO_NET_OK */
	counter_t ctrl_err;		      /* refused: unknown, malformed or out of range */
};

struct virtio_net;
struct virtio_net_pair;

/* Notification coalescing of one queue (VIRTIO_NET_F_NOTF_COAL): with the
 * driver's usecs and max_packets both non-zero, a queue's used buffer
 * notification waits until max_packets packets were pushed or usecs
 * passed since the first of them, whichever comes first. Under the
 * queue's lock (rx_lock or tx_lock); the timer fires on the I/O thread. */
struct virtio_net_coal {
	struct virtio_net_pair *p;
	unsigned int dir; /* VIRTIO_NET_RXQ or VIRTIO_NET_TXQ */
	int tfd;	  /* timerfd, -1 if none */
	bool armed;	  /* the timer runs: a notification is held */
	uint32_t pending; /* packets pushed since the last notification */
	/* The queue's virtio_queue_irq_seq after the latest held push
	 * (cover_ok: the transport said): if virtio_irq_seq_sent says so at
	 * the timer, an interrupt on the queue's vector (another queue's,
	 * sharing it) reached the guest after every held completion, the
	 * queue on that vector all along, and the driver, which must look at
	 * each queue on a shared vector, has seen them. */
	uint64_t cover_seq;
	bool cover_ok;
};

/* One queue pair and its tap queue. */
struct virtio_net_pair {
	struct virtio_net *n;
	unsigned int index; /* pair i: virtqueues 2i (rx) and 2i + 1 (tx) */
	struct tap tap;	    /* this pair's queue of the tap */
	bool tap_attached;  /* under ctrl_lock (pair 0's is always) */

	pthread_mutex_t rx_lock;    /* everything rx_* and the rx queue */
	struct virtq_elem rx_first; /* chain holding the header */
	struct virtq_elem rx_elem;  /* further chains of a merged packet */
	struct iovec rx_iov[VIRTIO_NET_IOV];
	struct virtq_used_elem rx_used[VIRTIO_NET_QUEUE_SIZE];
	struct virtio_net_hdr_v1 rx_hdr;
	/* Frame bytes that did not fit the first chain. */
	uint8_t rx_buf[VIRTIO_NET_MAX_FRAME];
	/* A frame in progress: rx_nused chains popped and filled (rx_used;
	 * the first is rx_first), rx_left bytes at rx_buf + rx_off still to
	 * place. Non-zero rx_nused between runs means the buffers ran out
	 * mid-frame: the chains stay popped until the refill kick, so the
	 * frame is neither lost nor half published. A pair the driver
	 * disables keeps its frame until it is enabled again or reset. */
	unsigned int rx_nused;
	size_t rx_off, rx_left, rx_frame;
	size_t rx_ahead; /* chains to pop before a read: room for this (rx_pop_ahead) */

	pthread_mutex_t tx_lock; /* everything tx_* and the tx queue */
	struct virtq_elem tx_elem;
	struct iovec tx_iov[VIRTIO_NET_IOV];
	struct virtio_net_hdr_v1 tx_hdr;
	/* The tap said EAGAIN: wait for EPOLLOUT. Atomic so that the many
	 * EPOLLOUT edges while not blocked cost no lock. */
	atomic_bool tx_blocked;

	struct virtio_net_coal rx_coal, tx_coal;

	/* vhost=on: this pair's /dev/vhost-net (rings 0 and 1 of its own). */
	struct vhost vhost;
	bool vhost_running; /* its rings are vhost's (activate to reset) */
};

struct virtio_net {
	struct virtio_dev vdev;
	char name[24];
	struct iothread *io; /* runs all of this device's work */
	uint8_t mac[NET_MAC_LEN];
	uint8_t config[VIRTIO_NET_CONFIG_LEN];
	int sched_fd; /* eventfd: the I/O thread resumes the work in sched */
	_Atomic unsigned int sched;
	atomic_bool active; /* between activate and reset */

	unsigned int npairs; /* 1..VIRTIO_NET_PAIRS_MAX: max_virtqueue_pairs */
	struct virtio_net_pair *pairs;
	/* Pairs the driver enabled (VQ_PAIRS_SET; 1 after reset): only
	 * pairs[0, curr_pairs) are served. Written under ctrl_lock. */
	_Atomic unsigned int curr_pairs;

	/* The control queue: its index for the negotiated features (2N with
	 * MQ, else 2), UINT_MAX without CTRL_VQ. */
	pthread_mutex_t ctrl_lock;  /* the control queue and pair enabling */
	_Atomic unsigned int ctrlq; /* set at activate, cleared at reset */
	struct virtq_elem ctrl_elem;

	/* The driver's coalescing parameters, [VIRTIO_NET_RXQ] and
	 * [VIRTIO_NET_TXQ], for every pair (the control queue writes them,
	 * the data path reads them; 0 after reset: no coalescing). */
	_Atomic uint32_t coal_usecs[2], coal_max[2];
	/* The I/O thread watches the coalescing timers: only then may a
	 * notification be held (else nothing would ever send it). */
	atomic_bool coal_watched;
	/* coal_*[VIRTIO_NET_TXQ] are the card's own (virtio_net_coal_defaults:
	 * its hold, or none), the driver has set none since reset: a load
	 * gives the loading card its own, since whether a card holds depends
	 * on how its vCPUs halt. Under ctrl_lock. */
	bool coal_tx_own;

	struct virtio_net_stats stats;
	/* Rate limiters (userspace path only): TX asks before a chain is
	 * sent; RX, which learns a frame's length by reading it, asks for a
	 * packet and a byte before reading and pays after delivering (a frame
	 * larger than what was left leaves a debt). Timers on io resume. */
	struct throttle rx_throttle, tx_throttle;

	/* vhost=on: the kernel moves packets; skiff only sets it up. A vCPU
	 * starts and stops it (activate, reset), the main thread turns its
	 * dirty log on and off while the guest runs: vhost_lock serializes
	 * them (virtio_net_vhost.c). */
	pthread_mutex_t vhost_lock;
	bool vhost_on;
	bool tx_hold;	    /* virtio_net_coal_defaults may hold TX (dev_ctx.halt_in_guest) */
	bool vhost_running; /* between a successful activate and reset */
	bool vhost_fallback_logged; /* "using the built-in data path" said once */
	unsigned int vhost_busyloop_us;
};

/* New limits for direction dir (DEV_RL_RX / DEV_RL_TX), the buckets in
 * mask (1 << RL_*): 0, or -1 with vhost=on (the kernel moves packets). */
int virtio_net_limit(struct virtio_net *n, unsigned int dir, const struct ratelimit_cfg *cfg,
		     unsigned int mask, char *err, size_t errlen);
/* Builds a device of npairs (1..VIRTIO_NET_PAIRS_MAX) queue pairs around
 * open tap queues taps[0, npairs) (owned from here on, also on failure).
 * Does not attach it to a transport or the I/O thread. Returns NULL with a
 * reason in err. */
struct virtio_net *virtio_net_create(const char *name, struct tap *taps, unsigned int npairs,
				     const uint8_t mac[NET_MAC_LEN], char *err, size_t errlen);
/* The pairs of a card: queues= if given (a tap without multi_queue then
 * refuses more than one), else one per vCPU up to VIRTIO_NET_PAIRS_MAX on
 * a tap made multi_queue (tap_mq 1), one on any other (0, or -1: no such
 * tap, which tap_open_queues reports). */
unsigned int virtio_net_pairs(unsigned int queues, unsigned int nr_vcpus, int tap_mq);
/* Closes the fds, frees. Only for a device that no transport or I/O
 * thread uses any more. */
void virtio_net_destroy(struct virtio_net *n);

/* I/O thread handlers (iothread_fd_fn): opaque is a pair for a tap
 * queue's fd, the device for sched_fd. */
void virtio_net_tap_event(void *opaque, uint32_t events);
/* Whether a header's GSO type is one the driver accepted; the feature bits
 * are GUEST_TSO4/6 for receive and HOST_TSO4/6 for transmit. ECN and UDP
 * segmentation are not offered. */
static inline bool virtio_net_gso_ok(const struct virtio_dev *v, uint8_t gso, unsigned int tso4,
				     unsigned int tso6)
{
	switch (gso) {
	case VIRTIO_NET_HDR_GSO_NONE:
		return true;
	case VIRTIO_NET_HDR_GSO_TCPV4:
		return virtio_has_feature(v, tso4);
	case VIRTIO_NET_HDR_GSO_TCPV6:
		return virtio_has_feature(v, tso6);
	default:
		return false;
	}
}

/* virtio_net_vhost.c: hand every pair's rings to its vhost at activate
 * (0), or -1 to use the built-in data path; give them back at reset. The
 * control queue stays with skiff. */
int virtio_net_vhost_start(struct virtio_net *n);
void virtio_net_vhost_stop(struct virtio_net *n);
/* A snapshot of a paused VM: the running rings stopped where vhost
 * stands, their positions in the virtqs, and the built-in path from there
 * on (virtio_net_snap.c). No-op when vhost is not running. */
void virtio_net_vhost_park(struct virtio_net *n);
/* dev_ops.dirty_log: every pair's vhost logs its writes to guest memory
 * in log (vhost_set_log), or stops (NULL); a pair not running takes it at
 * its next start. 0, or -1 with a reason and logging off. */
int virtio_net_vhost_log(void *dev, _Atomic uint64_t *log, char *err, size_t errlen);
void virtio_net_sched_event(void *opaque, uint32_t events);
/* Asks the I/O thread to resume a pair's RX and/or TX work
 * (VIRTIO_NET_SCHED_*). */
void virtio_net_schedule(struct virtio_net_pair *p, unsigned int what);
/* Whether pair p may move packets now: the device is active (not vhost's)
 * and the driver enabled the pair. */
bool virtio_net_pair_live(const struct virtio_net_pair *p);

/* Moves packets tap -> guest until the tap is empty, the guest has no
 * buffers (then guest kicks are re-enabled) or the budget is spent (then
 * the I/O thread comes back). The second form spends at most max
 * iterations and returns how many it spent. */
void virtio_net_rx_run(struct virtio_net_pair *p);
unsigned int virtio_net_rx_run_budget(struct virtio_net_pair *p, unsigned int max);
/* Drops a frame in progress (device reset: its chains need no completion).
 * Caller holds rx_lock. */
void virtio_net_rx_discard(struct virtio_net_pair *p);
/* Moves packets guest -> tap until the ring is empty, the tap is full
 * (then waits for EPOLLOUT) or the budget is spent. */
void virtio_net_tx_run(struct virtio_net_pair *p);
/* The tap became writable (EPOLLOUT). */
void virtio_net_tx_writable(struct virtio_net_pair *p);

/* virtio_net_ctrl.c: serves the control queue (kicks on q ctrlq). */
void virtio_net_ctrl_run(struct virtio_net *n);
/* Enables pairs [0, pairs) and disables the rest: tap queues attached or
 * detached, disabled pairs' runs waited for, enabled ones resumed. Caller
 * holds ctrl_lock. 0, or -errno if a tap queue refused (nothing changed
 * for that pair). */
int virtio_net_set_pairs(struct virtio_net *n, unsigned int pairs);
/* At activate: pairs and coalescing the accepted features do not allow
 * dropped (a load's; virtio_net_ctrl.c). */
void virtio_net_ctrl_clamp(struct virtio_net *n);

/* virtio_net_coal.c. Sets up pair p's two timers (-errno), closes them. */
int virtio_net_coal_init(struct virtio_net_pair *p);
void virtio_net_coal_fini(struct virtio_net_pair *p);
/* Watches every pair's timers on the device's I/O thread / stops. */
int virtio_net_coal_start(struct virtio_net *n);
void virtio_net_coal_stop(struct virtio_net *n);
/* After a run pushed c->pending packets (the run counts them): notifies
 * now (coalescing off, max_packets reached, or now: the guest must see
 * its buffers, e.g. RX ran out of them) or holds the notification on the
 * timer. Caller holds the queue's lock. */
void virtio_net_coal_pushed(struct virtio_net_coal *c, bool now);
/* The timer's handler (iothread_fd_fn, opaque a struct virtio_net_coal):
 * sends the held notification. Tests call it directly. */
void virtio_net_coal_event(void *opaque, uint32_t events);
/* Forgets held notifications (device reset; the caller holds the
 * queue's lock). */
void virtio_net_coal_reset(struct virtio_net_coal *c);
/* The parameters a driver finds after reset (under ctrl_lock, or before
 * the card runs): none, but a one-pair card offering NOTF_COAL holds TX
 * completions (VIRTIO_NET_TX_HOLD_*) so that they ride on the receive
 * interrupt its shared vector sends next; the driver's TX_SET replaces
 * them (tx-usecs 0: every completion at once). */
void virtio_net_coal_defaults(struct virtio_net *n);
/* Its TX half: the card's own hold, or none; coal_tx_own. */
void virtio_net_coal_tx_own(struct virtio_net *n);
/* A notification the queue held when the snapshot was taken, restored:
 * the driver waited through the pause already, so it goes out at once,
 * when the timer's handler runs, not after a hold's remaining time (not
 * saved). A load starts the I/O threads after the devices are restored
 * and activated (vmm_restore): the handler finds the queue live. Caller
 * holds the queue's lock. */
void virtio_net_coal_restore_held(struct virtio_net_coal *c);
/* The control command: dir's parameters from the driver's
 * struct virtio_net_ctrl_coal_{rx,tx} (le32 max_packets, le32 usecs).
 * Returns the ack. Caller holds ctrl_lock. */
uint8_t virtio_net_coal_set(struct virtio_net *n, unsigned int dir, const uint8_t *data);

/* virtio_net_snap.c: dev_ops.save and restore (devices/device.h). */
struct snap_writer;
int virtio_net_save(void *dev, struct snap_writer *w, uint32_t id, uint32_t instance, char *err,
		    size_t errlen);
int virtio_net_restore(void *dev, const void *data, size_t len, char *err, size_t errlen);
int virtio_net_handover(void *dev, bool release, char *err, size_t errlen);
const char *virtio_net_dirty_blind(const void *dev);

#endif
