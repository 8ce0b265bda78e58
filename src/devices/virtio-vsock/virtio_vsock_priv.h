// SPDX-License-Identifier: Apache-2.0
/* virtio-vsock's state, for its own files and its tests. */
#ifndef SKIFF_VIRTIO_VSOCK_PRIV_H
#define SKIFF_VIRTIO_VSOCK_PRIV_H

#include <linux/virtio_vsock.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/counter.h"
#include "devices/virtio-vsock/virtio_vsock.h"
#include "virtio/vhost.h"
#include "virtio/virtio_dev.h"

enum { VSOCK_RXQ, VSOCK_TXQ, VSOCK_EVQ, VSOCK_NR_QUEUES };

/* MSI-X vectors: config and one the three queues share, as the guest
 * ends up with behind QEMU's vhost-vsock-pci (3 vectors, too few for
 * Linux's one per queue). A round trip completes a TX chain and fills an
 * RX buffer within microseconds; on one vector, both interrupts that
 * arrive before the guest takes the first are one injection (2026-12-06
 * trace: QEMU's 4044 MSIs were 2620 injections, skiff's 4490 on two
 * vectors 4661 and an IRQ-window exit and an EOI exit more per round
 * trip; docs/bench/2026-12-06-irqdiag). */
#define VSOCK_MSIX_VECTORS 2

#define VSOCK_EV_LISTEN	    UINT64_MAX
#define VSOCK_EV_WAKE	    (UINT64_MAX - 1)
#define VSOCK_EVENTS_MAX    64 /* per epoll_wait: a bounded turn */
#define VSOCK_HDR_LEN	    ((uint32_t)sizeof(struct virtio_vsock_hdr))
#define VSOCK_ORPHAN_MAX    64	/* RSTs for unknown connections waiting for RX */
#define VSOCK_LINE_MAX	    32	/* "CONNECT 4294967295\n" and room */
#define VSOCK_LINE_WAIT_MAX 64	/* host clients waiting for their line: more are closed */
#define VSOCK_TX_BUDGET	    256 /* chains per run, then the transport calls again */
#define VSOCK_CREDIT_STEP   (VSOCK_CONN_BUF / 4)

enum vsock_state {
	VS_FREE,
	VS_HOST_LINE, /* accepted; reading "CONNECT <port>\n" */
	VS_REQ_SENT,  /* REQUEST to the guest; waiting for its RESPONSE */
	VS_ESTAB,     /* a byte stream */
	VS_CLOSING,   /* fd closed; a RST to the guest is owed */
};

/* Control packets owed to the guest (bits). */
#define VS_OWE_REQUEST	  1u
#define VS_OWE_RESPONSE	  2u
#define VS_OWE_CREDIT	  4u
#define VS_OWE_CREDIT_REQ 8u
#define VS_OWE_RST	  16u

/* One stream. local_port is the host's end, peer_port the guest's. */
struct vsock_conn {
	enum vsock_state state;
	uint32_t gen; /* tells a stale epoll event from this use of the slot */
	int fd;
	uint32_t local_port, peer_port;
	unsigned int owe;     /* VS_OWE_* */
	bool readable;	      /* the host socket may have bytes (edge seen) */
	bool host_eof;	      /* the host sent its last byte: SHUTDOWN owed/sent */
	bool guest_shut_send; /* the guest sends no more: SHUT_WR the host once flushed */
	bool guest_shut_rcv;  /* the guest reads no more */
	bool credit_asked;    /* CREDIT_REQUEST sent since the guest's last header */
	/* host -> guest: bytes sent and the guest's credit. */
	uint32_t rx_cnt, peer_buf_alloc, peer_fwd_cnt;
	/* guest -> host: bytes taken from the guest and written to the host;
	 * what is in between waits in buf (at most VSOCK_CONN_BUF). */
	uint32_t tx_cnt, fwd_cnt, fwd_told;
	uint8_t *buf; /* a ring of VSOCK_CONN_BUF, allocated while needed */
	uint32_t buf_head, buf_len;
	char line[VSOCK_LINE_MAX]; /* "OK <port>\n" while it waits to be written */
	uint32_t line_len;
};

struct vsock_orphan {
	uint32_t src_port, dst_port; /* as the RST carries them */
};

/* Relaxed atomics: bumped under mu, read by stats from any thread.
 * Firecracker's vsock metric names where it has them. */
struct virtio_vsock_stats {
	counter_t rx_queue_event_count, tx_queue_event_count;
	counter_t rx_packets_count, tx_packets_count;
	counter_t rx_bytes_count, tx_bytes_count;
	counter_t conns_added, conns_killed, conns_removed;
	counter_t conn_event_fails, tx_flush_fails, rx_read_fails;
	counter_t killq_resync;	  /* orphan RSTs dropped: their queue was full */
	counter_t bad_packets;	  /* a header the device refuses */
	counter_t credit_lies;	  /* sent past its credit: reset */
	counter_t refused;	  /* no listener, or the table full: RST */
	counter_t host_bad_lines; /* a host peer's CONNECT line refused */
};

struct virtio_vsock {
	struct virtio_dev vdev;
	char name[24];
	pthread_mutex_t mu; /* everything below */
	bool active;	    /* DRIVER_OK and not reset */
	bool reset_owed;    /* restored: a TRANSPORT_RESET event is owed (virtio_vsock_snap.c) */
	uint64_t cid;
	char uds[VSOCK_UDS_MAX + 1];
	int listen_fd, epfd;
	/* The socket file bind made (st_dev, st_ino; 0: none): only that
	 * file is ever unlinked (virtio_vsock_mig.c), never one another
	 * process put at uds. released: a migration's switch let it go. */
	uint64_t uds_dev, uds_ino;
	bool released;
	/* A kick on another thread is handed to the device's thread here:
	 * the sockets are its own (its sandbox role), never a vCPU's. */
	int wake_fd;
	bool woken;
	int dead[VSOCK_MAX_CONNS]; /* host ends a reset dropped, to close */
	unsigned int nr_dead;
	pthread_t thread; /* the device's own (dev_ops.start) */
	bool held;	  /* virtio_vsock_hold: the thread waits on held_cv */
	pthread_cond_t held_cv;
	bool running;
	_Atomic bool stop;
	uint32_t next_port; /* the next host port to try */
	unsigned int rr;    /* round robin over conns for RX */
	unsigned int nr_conns;
	unsigned int hw; /* conns[hw..] are all free: scans stop there */
	struct vsock_conn conns[VSOCK_MAX_CONNS];
	struct vsock_orphan orphans[VSOCK_ORPHAN_MAX];
	unsigned int nr_orphans;
	struct virtio_vsock_stats stats;
	struct virtq_elem elem;
	struct iovec iov[VIRTQ_MAX_SEGS]; /* a chain's payload for a system call */
};

/* virtio_vsock_host.c: the Unix sockets. mu held. */
int vsock_host_listen(struct virtio_vsock *v, char *err, size_t errlen);
/* virtio_vsock_mig.c: closes the listener and unlinks its socket file
 * if the file is still the one bind made. */
void vsock_host_unlisten(struct virtio_vsock *v);
struct epoll_event;
/* Handles what one epoll_wait on epfd returned. */
void vsock_host_events(struct virtio_vsock *v, const struct epoll_event *evs, int n);
/* The guest asks for host port `port`: a stream to "<uds>_<port>", or
 * -1 (refused). */
int vsock_host_connect(struct virtio_vsock *v, uint32_t port);
/* Writes what waits for the host (the OK line, buffered bytes); -1 if
 * the host peer is gone. */
int vsock_host_flush(struct virtio_vsock *v, struct vsock_conn *c);
void vsock_conn_close(struct virtio_vsock *v, struct vsock_conn *c, bool rst);
struct vsock_conn *vsock_conn_new(struct virtio_vsock *v, int fd, uint32_t events);
struct vsock_conn *vsock_conn_find(struct virtio_vsock *v, uint32_t local, uint32_t peer);
void vsock_conn_reset_all(struct virtio_vsock *v);

/* virtio_vsock_tx.c: the guest's packets. mu held. */
void vsock_tx_run(struct virtio_vsock *v);
void vsock_orphan_rst(struct virtio_vsock *v, uint32_t src_port, uint32_t dst_port);

/* virtio_vsock_snap.c: the event queue; sends an owed TRANSPORT_RESET
 * into the guest's next event buffer. mu held. */
void vsock_evq_run(struct virtio_vsock *v);
/* What both backends share (virtio_vsock_snap.c): their section (the
 * guest CID) written, and read back: checked against the device's CID
 * (-1 with "NAME: saved state refused: why"), then *reset_owed set under
 * mu (0): the guest's streams are gone; and a TRANSPORT_RESET put in
 * the guest's next event buffer with elem, under the event queue's lock:
 * true once sent (a buffer it cannot go in is given back empty and
 * counted in bad; no buffer: false, still owed). */
struct snap_writer;
int vsock_snap_put(uint64_t cid, struct snap_writer *w, uint32_t id, uint32_t instance, char *err,
		   size_t errlen);
int vsock_snap_restore(const char *name, uint64_t cid, pthread_mutex_t *mu, bool *reset_owed,
		       const void *data, size_t len, char *err, size_t errlen);
bool vsock_evq_reset(struct virtio_dev *vdev, struct virtq_elem *elem, counter_t *bad);

/* backend=vhost's device (virtio_vsock_vhost.c; its save, restore, log
 * and hand-over: virtio_vsock_vhost_snap.c). */
struct vsock_vhost {
	struct virtio_dev vdev;
	char name[24];
	char path[64]; /* the device node: reopened by a failed switch's take-back */
	uint64_t cid;
	struct vhost vh;
	/* mu: vh and the flags below, and the event queue
	 * (vdev.queue_lock[VSOCK_EVQ]). Activate and reset take it on a
	 * vCPU, a save, the log and a hand-over on the controller, a restart
	 * and the event queue's kick on the I/O thread. */
	pthread_mutex_t mu;
	bool active;	      /* DRIVER_OK and not reset: the rx and tx rings are set up */
	bool running;	      /* the rings are the kernel's */
	bool parked;	      /* active, its rings stopped by a save: the next kick restarts them */
	bool quiet;	      /* a migration's pre-copy: parked rings stay so (dirty_stop) */
	bool released;	      /* a migration's switch closed vh: the CID is free */
	bool reset_owed;      /* a TRANSPORT_RESET for the guest's next event buffer */
	counter_t bad_events; /* an event buffer the reset cannot go in */
	atomic_bool refusal_said; /* the guest decides how often activate runs */
	struct virtq_elem elem;	  /* the event queue's, under mu */
};
/* Opens v->path (vhost_open) and sets the guest's CID there, the dirty
 * log kept: 0, or -1 with one line (the CID in use: "guest CID N is in
 * use on this host (another VM has it)") and vh closed. */
int vsock_vhost_open(struct vsock_vhost *v, char *err, size_t errlen);
/* Starts the rx and tx rings where the virtqs stand (activate, a
 * restart): 0 or -errno, nothing left running on a failure. mu held. */
int vsock_vhost_run(struct vsock_vhost *v);
/* Stops the rings and gives their kicks back; keep: the virtqs take
 * the kernel's positions (a save), else they reset next. mu held. */
void vsock_vhost_halt(struct vsock_vhost *v, bool keep);
/* The owed TRANSPORT_RESET, if a buffer waits for it. mu held. */
void vsock_vhost_evq_run(struct vsock_vhost *v);
/* dev_ops' save, restore, handover, dirty_blind and dirty_stop for it. */
int vsock_vhost_save(void *dev, struct snap_writer *w, uint32_t id, uint32_t instance, char *err,
		     size_t errlen);
int vsock_vhost_restore(void *dev, const void *data, size_t len, char *err, size_t errlen);
int vsock_vhost_handover(void *dev, bool release, char *err, size_t errlen);
const char *vsock_vhost_dirty_blind(const void *dev);
int vsock_vhost_dirty_stop(void *dev, bool stop, char *err, size_t errlen);

/* virtio_vsock_rx.c: packets to the guest. mu held. */
void vsock_rx_run(struct virtio_vsock *v);

#endif
