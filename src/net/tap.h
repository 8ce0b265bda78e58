// SPDX-License-Identifier: Apache-2.0
/* The tap backend of virtio-net: an existing Linux tap interface, attached
 * through /dev/net/tun with a 12-byte virtio-net header in front of every
 * packet (IFF_VNET_HDR, TUNSETVNETHDRSZ), non-blocking.
 *
 * skiff never creates interfaces: the tap must exist beforehand
 * (`ip tuntap add NAME mode tap`), since TUNSETIFF on a missing name would
 * silently create a fresh, unconfigured one. */
#ifndef SKIFF_TAP_H
#define SKIFF_TAP_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/sandbox_rules.h"

struct tap {
	int fd;
	char name[IFNAMSIZ];
	bool is_tun;	      /* a real tun/tap fd: offload ioctls apply */
	unsigned int offload; /* TUN_F_* last asked for */
	bool multi_queue;     /* one queue of an IFF_MULTI_QUEUE tap */
};

/* Queues of one tap skiff attaches at most (the kernel allows 256). */
#define TAP_QUEUES_MAX 16

/* Attaches to the existing tap NAME. Returns 0, or -1 with a one-line
 * reason in err (no such interface, not a tap, busy, no permission). */
int tap_open(struct tap *t, const char *name, char *err, size_t errlen);
/* Attaches n (1..TAP_QUEUES_MAX) queues of the existing tap NAME, an fd
 * each in t[0, n), all with the vnet header and no offloads. n > 1 needs a
 * tap created multi_queue (ip tuntap add NAME mode tap multi_queue); a
 * single-queue tap is refused with a reason saying so. n = 1 is tap_open.
 * Returns 0, or -1 with a one-line reason in err and nothing left open. */
int tap_open_queues(struct tap *t, unsigned int n, const char *name, char *err, size_t errlen);
/* Whether the existing tap NAME was created multi_queue: 1, 0, or -1 if
 * there is no such tap (tap_open then says why). */
int tap_is_multi_queue(const char *name);
/* TUNSETQUEUE: attaches (true) or detaches this queue of a multi-queue
 * tap; the kernel steers no packets to a detached queue, and reads and
 * writes on it fail (EBADFD). 0 (also for a single-queue tap or an fd from
 * tap_from_fd: nothing to do), or -errno. */
int tap_set_queue(struct tap *t, bool attach);
/* Wraps an fd that carries whole packets with the same 12-byte header (a
 * SOCK_SEQPACKET socket in tests) and makes it non-blocking. The tap owns
 * fd from here on. */
void tap_from_fd(struct tap *t, int fd);
/* TUNSETOFFLOAD: which offloads (TUN_F_*) packets towards the guest may
 * carry. Returns 0 (also for an fd from tap_from_fd), or -errno. */
int tap_set_offload(struct tap *t, unsigned int tun_flags);
void tap_close(struct tap *t);
/* The calls tap_open makes, for a filter that must allow reopening a tap
 * (net/tap_sandbox.c). */
extern const struct sandbox_rule tap_reopen[];
#define TAP_REOPEN_NR 6
#define TAP_REOPEN_RULES                                                                           \
	{                                                                                          \
		tap_reopen, TAP_REOPEN_NR                                                          \
	}

#endif
