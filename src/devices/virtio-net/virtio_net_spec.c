// SPDX-License-Identifier: Apache-2.0
#include "devices/virtio-net/virtio_net_spec.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iothread/poll_opts.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int net_mac_parse(const char *s, uint8_t mac[NET_MAC_LEN])
{
	if (strlen(s) != NET_MAC_STRLEN - 1)
		return -1;
	for (int i = 0; i < NET_MAC_LEN; i++) {
		const char *p = s + 3 * i;
		int hi = hexval(p[0]), lo = hexval(p[1]);
		if (hi < 0 || lo < 0 || (i < NET_MAC_LEN - 1 && p[2] != ':'))
			return -1;
		mac[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

void net_mac_format(const uint8_t mac[NET_MAC_LEN], char out[NET_MAC_STRLEN])
{
	snprintf(out, NET_MAC_STRLEN, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2],
		 mac[3], mac[4], mac[5]);
}

void net_mac_default(unsigned int index, uint8_t mac[NET_MAC_LEN])
{
	static const uint8_t prefix[NET_MAC_LEN - 1] = {0x02, 0x73, 0x6b, 0x69, 0x66};
	memcpy(mac, prefix, sizeof(prefix));
	mac[NET_MAC_LEN - 1] = (uint8_t)index;
}

/* Linux's rules (dev_valid_name): 1..15 bytes, not "." or "..", no '/',
 * ':' or whitespace. Checked here so the message is about the name, not
 * about whatever sysfs path it would have made. */
static bool net_ifname_valid(const char *s, size_t len)
{
	if (len == 0 || len >= IFNAMSIZ || !strncmp(s, ".", len) || !strncmp(s, "..", len))
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] == '/' || s[i] == ':' || isspace((unsigned char)s[i]) ||
		    !isprint((unsigned char)s[i]))
			return false;
	return true;
}

/* mac= is unicast; fc_mac= (hidden: the API's guest_mac) is any address
 * but zero, as Firecracker takes it (a guest replaces a multicast one). */
static int net_spec_mac(const struct opt *o, const char *val, void *target, char *err,
			size_t errlen)
{
	struct net_spec *out = target;
	if (strlen(val) != NET_MAC_STRLEN - 1 || net_mac_parse(val, out->mac) < 0) {
		snprintf(err, errlen, "malformed mac '%s' (expected xx:xx:xx:xx:xx:xx)", val);
		return -1;
	}
	if (out->mac[0] & 1 && strcmp(o->name, "fc_mac")) {
		snprintf(err, errlen, "mac %s is a multicast address (first byte must be even)",
			 val);
		return -1;
	}
	static const uint8_t zero[NET_MAC_LEN];
	if (!memcmp(out->mac, zero, NET_MAC_LEN)) {
		snprintf(err, errlen, "mac %s is not a valid address", val);
		return -1;
	}
	out->has_mac = true;
	return 0;
}

static int net_spec_tap(const struct opt *o, const char *val, void *target, char *err,
			size_t errlen)
{
	(void)o;
	struct net_spec *out = target;
	size_t len = strlen(val);
	if (len == 0) {
		snprintf(err, errlen, "tap= needs an interface name");
		return -1;
	}
	if (!net_ifname_valid(val, len)) {
		snprintf(err, errlen, "invalid interface name '%s'", val);
		return -1;
	}
	memcpy(out->tap, val, len + 1);
	return 0;
}

const char *const net_model_names[] = {"virtio", "e1000", NULL};
static const char *const coalesce_names[] = {"off", "on", "all", NULL};

static const struct opt net_opts[] = {
    {.name = "tap",
     .type = OPT_CUSTOM,
     .off = offsetof(struct net_spec, tap),
     .flags = OPT_ONCE | OPT_REQUIRED | OPT_HOST_IFACE,
     .parse = net_spec_tap,
     .metavar = "NAME",
     .help = "an existing tap interface (ip tuntap add NAME mode tap)"},
    {.name = "mac",
     .type = OPT_CUSTOM,
     .flags = OPT_ONCE,
     .parse = net_spec_mac,
     .metavar = "MAC",
     .help = "unicast MAC (default 02:73:6b:69:66:NN, NN the card's index)"},
    {.name = "fc_mac", .type = OPT_CUSTOM, .flags = OPT_ONCE, .parse = net_spec_mac},
    {.name = "queues",
     .type = OPT_UINT,
     .flags = OPT_ONCE,
     .off = offsetof(struct net_spec, queues),
     .min = 1,
     .max = NET_QUEUES_MAX,
     .hint = "use 1 to 8",
     .metavar = "N",
     .help = "virtio: queue pairs, 1-8, a tap queue each (VIRTIO_NET_F_MQ when > 1; the tap "
	     "made multi_queue); default one per vCPU, 1 on a single-queue tap"},
    {.name = "model",
     .type = OPT_ENUM,
     .off = offsetof(struct net_spec, model),
     .choices = net_model_names,
     .hint = "use virtio or e1000",
     .metavar = "virtio|e1000",
     .help = "virtio-net (default) or an emulated Intel 82540EM"},
    {.name = "coalesce",
     .type = OPT_ENUM,
     .off = offsetof(struct net_spec, coalesce),
     .choices = coalesce_names,
     .hint = "use off, on or all",
     .metavar = "off|on|all",
     .help = "e1000: batch register writes that may wait (on, the default); all "
	     "batches the TX doorbell too, only to show the latency trap"},
    POLL_OPT_ROWS(offsetof(struct net_spec, poll)),
    {.name = "vhost",
     .type = OPT_ONOFF,
     .off = offsetof(struct net_spec, vhost),
     .hint = "use on or off",
     .metavar = "on|off",
     .help = "virtio: /dev/vhost-net moves the packets"},
    {.name = "vhost-busyloop",
     .type = OPT_UINT,
     .off = offsetof(struct net_spec, vhost_busyloop_us),
     .max = 1000000,
     .hint = "0-1000000 microseconds",
     .metavar = "USEC",
     .help = "vhost: busy-poll this long (VHOST_SET_VRING_BUSYLOOP_TIMEOUT)"},
    RATELIMIT_OPT("rx-bw", offsetof(struct net_spec, rx_rl.b[RL_BYTES]),
		  "virtio: limit received bytes (a bucket, as --disk bw=)"),
    RATELIMIT_OPT("rx-ops", offsetof(struct net_spec, rx_rl.b[RL_OPS]),
		  "virtio: limit received packets"),
    RATELIMIT_OPT("tx-bw", offsetof(struct net_spec, tx_rl.b[RL_BYTES]),
		  "virtio: limit sent bytes"),
    RATELIMIT_OPT("tx-ops", offsetof(struct net_spec, tx_rl.b[RL_OPS]),
		  "virtio: limit sent packets"),
};
const struct opt_table net_spec_table = OPT_TABLE(net_opts, "option", NULL);

void net_spec_init(void *spec)
{
	struct net_spec *s = spec;
	memset(s, 0, sizeof(*s));
	s->coalesce = -1; /* not given: the e1000's default, on */
	poll_policy_default(&s->poll);
}

bool net_spec_limited(const struct net_spec *s)
{
	for (int i = 0; i < RL_NR; i++)
		if (ratelimit_bucket_on(&s->rx_rl.b[i]) || ratelimit_bucket_on(&s->tx_rl.b[i]))
			return true;
	return false;
}

int net_spec_parse(const char *spec, struct net_spec *out, char *err, size_t errlen)
{
	net_spec_init(out);
	return opt_parse_spec(&net_spec_table, spec, out, err, errlen);
}
