/* virtio-net internals shared by virtio_net.c (setup, ops, I/O thread
 * handlers), virtio_net_rx.c, virtio_net_tx.c and the unit tests.
 *
 * Queues: rx (q0) and tx (q1), no control queue. Each queue's work runs
 * under its own mutex, because kicks arrive on the I/O thread (ioeventfd)
 * or on a vCPU thread (--no-ioeventfd) and tap readiness on the I/O
 * thread. Work never blocks: the tap fd is non-blocking, and a run that
 * hits its budget hands the rest to the I/O thread through sched_fd. */
#ifndef SKIFF_VIRTIO_NET_PRIV_H
#define SKIFF_VIRTIO_NET_PRIV_H

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "devices/device.h"
#include "devices/throttle.h"
#include "devices/virtio_net_spec.h"
#include "net/tap.h"
#include "net/vhost_net.h"
#include "virtio/virtio_dev.h"

/* Feature bits (virtio 1.2, 5.1.3). */
#define VIRTIO_NET_F_CSUM	0 /* device takes partially checksummed packets */
#define VIRTIO_NET_F_GUEST_CSUM 1 /* driver takes partially checksummed packets */
#define VIRTIO_NET_F_MAC	5
#define VIRTIO_NET_F_GUEST_TSO4 7
#define VIRTIO_NET_F_GUEST_TSO6 8
#define VIRTIO_NET_F_HOST_TSO4	11
#define VIRTIO_NET_F_HOST_TSO6	12
#define VIRTIO_NET_F_MRG_RXBUF	15
#define VIRTIO_NET_F_STATUS	16

#define VIRTIO_NET_S_LINK_UP 1

/* struct virtio_net_hdr (5.1.6). With VERSION_1 it always has num_buffers:
 * 12 bytes, for the tap too (TUNSETVNETHDRSZ). Little-endian fields. */
#define VIRTIO_NET_HDR_F_NEEDS_CSUM 1
#define VIRTIO_NET_HDR_F_DATA_VALID 2
#define VIRTIO_NET_HDR_GSO_NONE	    0
#define VIRTIO_NET_HDR_GSO_TCPV4    1
#define VIRTIO_NET_HDR_GSO_TCPV6    4
#define VIRTIO_NET_HDR_GSO_ECN	    0x80
#define VIRTIO_NET_TCP_CSUM_OFF	    16 /* offsetof(struct tcphdr, check) */

struct virtio_net_hdr {
	uint8_t flags;
	uint8_t gso_type;
	uint16_t hdr_len;
	uint16_t gso_size;
	uint16_t csum_start;
	uint16_t csum_offset;
	uint16_t num_buffers;
};
_Static_assert(sizeof(struct virtio_net_hdr) == 12, "virtio_net_hdr layout");
#define VIRTIO_NET_HDR_LEN 12

/* Config space (5.1.4): mac, status, max_virtqueue_pairs, mtu. */
#define VIRTIO_NET_CONFIG_LEN 12
#define VIRTIO_NET_MTU	      1500

#define VIRTIO_NET_RXQ	      0
#define VIRTIO_NET_TXQ	      1
#define VIRTIO_NET_QUEUE_SIZE 256
/* Packets per queue per run before yielding to the I/O thread's other fds:
 * one busy guest cannot starve the loop. */
#define VIRTIO_NET_BUDGET 256
/* Largest frame (without the header) either way: a 64 KiB TSO packet plus
 * link headers, with QEMU's margin (NET_BUFSIZE). */
#define VIRTIO_NET_MAX_FRAME (65536 + 4096)
/* iovecs for one readv/writev: the host header, a whole chain, the bounce
 * buffer. Calls use at most IOV_MAX of them. */
#define VIRTIO_NET_IOV (VIRTQ_MAX_SEGS + 2)

/* Bits of sched: work the I/O thread should resume. */
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
};

struct virtio_net {
	struct virtio_dev vdev;
	char name[24];
	struct iothread *io; /* runs all of this device's work */
	struct tap tap;
	uint8_t mac[NET_MAC_LEN];
	uint8_t config[VIRTIO_NET_CONFIG_LEN];
	int sched_fd; /* eventfd: the I/O thread resumes the work in sched */
	_Atomic unsigned int sched;
	atomic_bool active; /* between activate and reset */

	pthread_mutex_t rx_lock;    /* everything rx_* and the rx queue */
	struct virtq_elem rx_first; /* chain holding the header */
	struct virtq_elem rx_elem;  /* further chains of a merged packet */
	struct iovec rx_iov[VIRTIO_NET_IOV];
	struct virtq_used_elem rx_used[VIRTIO_NET_QUEUE_SIZE];
	struct virtio_net_hdr rx_hdr;
	/* Frame bytes that did not fit the first chain. */
	uint8_t rx_buf[VIRTIO_NET_MAX_FRAME];
	/* A frame in progress: rx_nused chains popped and filled (rx_used;
	 * the first is rx_first), rx_left bytes at rx_buf + rx_off still to
	 * place. Non-zero rx_nused between runs means the buffers ran out
	 * mid-frame: the chains stay popped until the refill kick, so the
	 * frame is neither lost nor half published. */
	unsigned int rx_nused;
	size_t rx_off, rx_left, rx_frame;

	pthread_mutex_t tx_lock; /* everything tx_* and the tx queue */
	struct virtq_elem tx_elem;
	struct iovec tx_iov[VIRTIO_NET_IOV];
	struct virtio_net_hdr tx_hdr;
	/* The tap said EAGAIN: wait for EPOLLOUT. Atomic so that the many
	 * EPOLLOUT edges while not blocked cost no lock. */
	atomic_bool tx_blocked;

	struct virtio_net_stats stats;
	/* Rate limiters (userspace path only): TX asks before a chain is
	 * sent; RX, which learns a frame's length by reading it, asks for a
	 * packet and a byte before reading and pays after delivering (a frame
	 * larger than what was left leaves a debt). Timers on io resume. */
	struct throttle rx_throttle, tx_throttle;

	/* vhost=on: the kernel moves packets; skiff only sets it up. */
	bool vhost_on;
	bool vhost_running;	    /* between a successful activate and reset */
	bool vhost_fallback_logged; /* "using the built-in data path" said once */
	unsigned int vhost_busyloop_us;
	struct vhost_net vhost;
};

/* New limits for direction dir (DEV_RL_RX / DEV_RL_TX), the buckets in
 * mask (1 << RL_*): 0, or -1 with vhost=on (the kernel moves packets). */
int virtio_net_limit(struct virtio_net *n, unsigned int dir, const struct ratelimit_cfg *cfg,
		     unsigned int mask, char *err, size_t errlen);
/* Builds a device around an open tap (owned from here on, also on
 * failure). Does not attach it to a transport or the I/O thread. Returns
 * NULL with a reason in err. */
struct virtio_net *virtio_net_create(const char *name, struct tap *tap,
				     const uint8_t mac[NET_MAC_LEN], char *err, size_t errlen);
/* Closes the fds, frees. Only for a device that no transport or I/O
 * thread uses any more. */
void virtio_net_destroy(struct virtio_net *n);

/* I/O thread handlers (iothread_fd_fn). */
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

/* virtio_net_vhost.c: hand both rings to vhost at activate (0), or -1 to
 * use the built-in data path; give them back at reset. */
int virtio_net_vhost_start(struct virtio_net *n);
void virtio_net_vhost_stop(struct virtio_net *n);
void virtio_net_sched_event(void *opaque, uint32_t events);
/* Asks the I/O thread to resume RX and/or TX work (VIRTIO_NET_SCHED_*). */
void virtio_net_schedule(struct virtio_net *n, unsigned int what);

/* Moves packets tap -> guest until the tap is empty, the guest has no
 * buffers (then guest kicks are re-enabled) or the budget is spent. */
void virtio_net_rx_run(struct virtio_net *n);
/* Drops a frame in progress (device reset: its chains need no completion).
 * Caller holds rx_lock. */
void virtio_net_rx_discard(struct virtio_net *n);
/* Moves packets guest -> tap until the ring is empty, the tap is full
 * (then waits for EPOLLOUT) or the budget is spent. */
void virtio_net_tx_run(struct virtio_net *n);
/* The tap became writable (EPOLLOUT). */
void virtio_net_tx_writable(struct virtio_net *n);

#endif
