// SPDX-License-Identifier: Apache-2.0
/* Firecracker's network interfaces onto --net's keys: PUT
 * /network-interfaces/ID (NetworkInterfaceConfig) before the start,
 * PATCH /network-interfaces/ID (NetworkInterfaceUpdateConfig: new rate
 * limits) after it, and the config file's and GET /vm/config's
 * "network-interfaces" list. skiff_options may ask for model=e1000: the
 * option is --net's, whichever row builds the card. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "devices/virtio-net/virtio_net.h"

/* The order of NetworkInterfaceConfig, and of the spec's keys: the MAC
 * (fc_mac=: any address but zero, as Firecracker takes it), the limits,
 * skiff_options last. */
enum { ID, TAP, MAC, MTU, RX, TX, OPTIONS };
static const struct dev_api_field net_fields[] = {
    [ID] = {.name = "iface_id",
	    .type = DEV_API_STR,
	    .flags = DEV_API_REQUIRED | DEV_API_ID,
	    .size = 64},
    [TAP] = {.name = "host_dev_name",
	     .type = DEV_API_STR,
	     .key = "tap",
	     .flags = DEV_API_REQUIRED | DEV_API_APART,
	     .size = 64},
    [MAC] = {.name = "guest_mac", .type = DEV_API_STR, .key = "fc_mac", .size = 24},
    [MTU] = {.name = "mtu",
	     .type = DEV_API_UINT,
	     .flags = DEV_API_NULL,
	     .min = 68,
	     .max = 65535,
	     .expect = "u16 from 68 to 65535"},
    [RX] = {.name = "rx_rate_limiter",
	    .type = DEV_API_RATE_LIMITER,
	    .key = "rx-",
	    .dir = DEV_RL_RX},
    [TX] = {.name = "tx_rate_limiter",
	    .type = DEV_API_RATE_LIMITER,
	    .key = "tx-",
	    .dir = DEV_RL_TX},
    [OPTIONS] = {.name = "skiff_options", .type = DEV_API_OPTIONS, .size = 256},
};
_Static_assert(sizeof(net_fields) / sizeof(net_fields[0]) == OPTIONS + 1, "one per field");

static const struct dev_api_field patch_fields[] = {
    {.name = "iface_id", .type = DEV_API_STR, .flags = DEV_API_REQUIRED | DEV_API_ID, .size = 64},
    {.name = "rx_rate_limiter", .type = DEV_API_RATE_LIMITER, .key = "rx-", .dir = DEV_RL_RX},
    {.name = "tx_rate_limiter", .type = DEV_API_RATE_LIMITER, .key = "tx-", .dir = DEV_RL_TX},
};

static bool mac_ok(const char *s)
{
	unsigned int b[6];
	char tail;
	return strlen(s) == 17 && sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3],
					 &b[4], &b[5], &tail) == 6;
}

static int net_check(const struct dev_api_res *r, bool put, char *err, size_t errlen)
{
	(void)put;
	const char *mac = r->v[MAC].s;
	if (mac[0] && !mac_ok(mac)) {
		snprintf(err, errlen,
			 "An error occurred when deserializing the json body of a request: "
			 "invalid value: string \"%s\", expected a MAC address.",
			 mac);
		return -1;
	}
	if (r->seen & (1u << MTU)) {
		snprintf(err, errlen,
			 "The requested operation is not supported: skiff network "
			 "interfaces take no mtu.");
		return -1;
	}
	return 0;
}

/* A MAC and a tap are one interface's. Firecracker's open of a tap another
 * interface holds fails (EBUSY); as in Firecracker (NetBuilder::build
 * drops the old device before it creates the new one), an update that
 * fails so leaves no interface of that id behind. */
static int net_check_set(const struct dev_api_res *set, unsigned int n, unsigned int at,
			 const struct dev_api_res *r, bool *drop, char *err, size_t errlen)
{
	for (unsigned int k = 0; r->v[MAC].s[0] && k < n; k++)
		if (k != at && !strcasecmp(set[k].v[MAC].s, r->v[MAC].s)) {
			snprintf(err, errlen,
				 "Network config error: The MAC address is already in use: %s",
				 r->v[MAC].s);
			return -1;
		}
	for (unsigned int k = 0; k < n; k++)
		if (k != at && !strcmp(set[k].v[TAP].s, r->v[TAP].s)) {
			snprintf(err, errlen,
				 "Network config error: Could not create the network device: Open "
				 "tap device failed: Resource busy (os error 16). The tap %s is "
				 "used by interface %s.",
				 r->v[TAP].s, set[k].v[ID].s);
			*drop = true;
			return -1;
		}
	return 0;
}

const struct dev_api net_api = {
    .route = "/network-interfaces",
    .section = "network-interfaces",
    .schema = "NetworkInterfaceConfig",
    .fault = "Network config error",
    DEV_API_TABLE(net_fields),
    .patch = {{"", "NetworkInterfaceUpdateConfig", DEV_API_TABLE(patch_fields)}},
    .max = 8,
    .full = "Network config error: skiff takes at most 8 interfaces",
    .not_found = "Unable to update the net device: Device not found",
    .noun = "Interface",
    .check = net_check,
    .check_set = net_check_set,
};
