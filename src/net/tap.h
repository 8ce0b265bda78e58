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

struct tap {
	int fd;
	char name[IFNAMSIZ];
	bool is_tun;	      /* a real tun/tap fd: offload ioctls apply */
	unsigned int offload; /* TUN_F_* last asked for */
};

/* Attaches to the existing tap NAME. Returns 0, or -1 with a one-line
 * reason in err (no such interface, not a tap, busy, no permission). */
int tap_open(struct tap *t, const char *name, char *err, size_t errlen);
/* Wraps an fd that carries whole packets with the same 12-byte header (a
 * SOCK_SEQPACKET socket in tests) and makes it non-blocking. The tap owns
 * fd from here on. */
void tap_from_fd(struct tap *t, int fd);
/* TUNSETOFFLOAD: which offloads (TUN_F_*) packets towards the guest may
 * carry. Returns 0 (also for an fd from tap_from_fd), or -errno. */
int tap_set_offload(struct tap *t, unsigned int tun_flags);
void tap_close(struct tap *t);

#endif
