// SPDX-License-Identifier: Apache-2.0
/* `--net SPEC` for virtio-net: tap=NAME[,mac=MAC][,queues=N]
 * [,poll=off|adaptive|always][,poll-start=K][,poll-idle=USEC][,poll-max=USEC]
 * [,vhost=on|off][,vhost-busyloop=USEC][,rx-bw=SIZE:MS[:BURST]][,rx-ops=...]
 * [,tx-bw=...][,tx-ops=...]. */
#ifndef SKIFF_VIRTIO_NET_SPEC_H
#define SKIFF_VIRTIO_NET_SPEC_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/opt.h"
#include "core/ratelimit.h"
#include "iothread/poll_policy.h"

#define NET_MAC_LEN    6
#define NET_MAC_STRLEN 18 /* "xx:xx:xx:xx:xx:xx" + NUL */
/* queues=N: queue pairs of a virtio-net card (VIRTIO_NET_PAIRS_MAX). */
#define NET_QUEUES_MAX 8

enum net_model { NET_MODEL_VIRTIO, NET_MODEL_E1000 };

struct net_spec {
	char tap[IFNAMSIZ];
	int model; /* enum net_model */
	uint8_t mac[NET_MAC_LEN];
	bool has_mac;
	unsigned int queues;	 /* virtio: pairs, 1..NET_QUEUES_MAX; 0: not given */
	struct poll_policy poll; /* poll=..., see iothread/poll_opts.h */
	bool vhost;		 /* vhost=on: /dev/vhost-net moves the packets */
	unsigned int vhost_busyloop_us;
	int coalesce; /* model=e1000: enum e1000_coalesce; -1 (not given): on */
	/* rx-bw=, rx-ops=, tx-bw=, tx-ops=: Firecracker's rx_rate_limiter
	 * and tx_rate_limiter (virtio, without vhost) */
	struct ratelimit_cfg rx_rl, tx_rl;
};

/* The option table of --net (all models share it), model names, and the
 * defaults it starts from. */
extern const struct opt_table net_spec_table;
extern const char *const net_model_names[];
void net_spec_init(void *spec);

/* Parses SPEC: keys tap (required, a valid interface name) and mac (a
 * unicast address other than 00:00:00:00:00:00), each at most once.
 * Returns 0, or -1 with a one-line reason in err. */
int net_spec_parse(const char *spec, struct net_spec *out, char *err, size_t errlen);
/* Whether the spec asks for a rate limiter (either direction). */
bool net_spec_limited(const struct net_spec *s);
/* Parses exactly "xx:xx:xx:xx:xx:xx" (hex, either case). Returns 0 or -1. */
int net_mac_parse(const char *s, uint8_t mac[NET_MAC_LEN]);
void net_mac_format(const uint8_t mac[NET_MAC_LEN], char out[NET_MAC_STRLEN]);
/* The MAC of device INDEX without mac=: 02:73:6b:69:66:INDEX ("skif" in
 * ASCII after 02, the locally administered unicast prefix; INDEX < 256). */
void net_mac_default(unsigned int index, uint8_t mac[NET_MAC_LEN]);

#endif
