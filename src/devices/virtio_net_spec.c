#include "devices/virtio_net_spec.h"

#include "iothread/poll_opts.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int net_spec_mac(const char *val, size_t len, struct net_spec *out, char *err, size_t errlen)
{
	char buf[NET_MAC_STRLEN];
	if (len != NET_MAC_STRLEN - 1) {
		snprintf(err, errlen, "malformed mac '%.*s' (expected xx:xx:xx:xx:xx:xx)", (int)len,
			 val);
		return -1;
	}
	memcpy(buf, val, len);
	buf[len] = 0;
	if (net_mac_parse(buf, out->mac) < 0) {
		snprintf(err, errlen, "malformed mac '%s' (expected xx:xx:xx:xx:xx:xx)", buf);
		return -1;
	}
	if (out->mac[0] & 1) {
		snprintf(err, errlen, "mac %s is a multicast address (first byte must be even)",
			 buf);
		return -1;
	}
	static const uint8_t zero[NET_MAC_LEN];
	if (!memcmp(out->mac, zero, NET_MAC_LEN)) {
		snprintf(err, errlen, "mac %s is not a valid address", buf);
		return -1;
	}
	out->has_mac = true;
	return 0;
}

/* One "key=value" item of length len. */
static int net_spec_item(const char *item, size_t len, struct net_spec *out, bool *seen_tap,
			 char *err, size_t errlen)
{
	const char *eq = memchr(item, '=', len);
	size_t klen = eq ? (size_t)(eq - item) : len;
	const char *val = eq ? eq + 1 : "";
	size_t vlen = eq ? len - klen - 1 : 0;

	if (len == 0) {
		snprintf(err, errlen, "empty option (expected tap=NAME[,mac=MAC])");
		return -1;
	}
	bool is_tap = klen == 3 && !strncmp(item, "tap", 3);
	bool is_mac = klen == 3 && !strncmp(item, "mac", 3);
	if ((is_tap || is_mac) && !eq) {
		snprintf(err, errlen, "option '%.*s' needs a value (%.*s=...)", (int)klen, item,
			 (int)klen, item);
		return -1;
	}
	if (is_tap) {
		if (*seen_tap) {
			snprintf(err, errlen, "tap= given twice");
			return -1;
		}
		if (vlen == 0) {
			snprintf(err, errlen, "tap= needs an interface name");
			return -1;
		}
		if (!net_ifname_valid(val, vlen)) {
			snprintf(err, errlen, "invalid interface name '%.*s'", (int)vlen, val);
			return -1;
		}
		memcpy(out->tap, val, vlen);
		out->tap[vlen] = 0;
		*seen_tap = true;
		return 0;
	}
	if (is_mac) {
		if (out->has_mac) {
			snprintf(err, errlen, "mac= given twice");
			return -1;
		}
		return net_spec_mac(val, vlen, out, err, errlen);
	}
	int r = poll_opt_parse(item, klen, val, vlen, &out->poll, err, errlen);
	if (r != 0)
		return r < 0 ? -1 : 0;
	if (klen == 5 && !strncmp(item, "vhost", 5)) {
		if (vlen == 2 && !strncmp(val, "on", 2))
			out->vhost = true;
		else if (vlen == 3 && !strncmp(val, "off", 3))
			out->vhost = false;
		else {
			snprintf(err, errlen, "invalid vhost=%.*s (use on or off)", (int)vlen, val);
			return -1;
		}
		return 0;
	}
	if (klen == 14 && !strncmp(item, "vhost-busyloop", 14)) {
		char buf[12];
		char *end;
		if (vlen == 0 || vlen >= sizeof(buf) || val[0] < '0' || val[0] > '9') {
			snprintf(err, errlen, "invalid vhost-busyloop=%.*s (microseconds)",
				 (int)vlen, val);
			return -1;
		}
		memcpy(buf, val, vlen);
		buf[vlen] = 0;
		unsigned long v = strtoul(buf, &end, 10);
		if (*end || v > 1000000) {
			snprintf(err, errlen, "invalid vhost-busyloop=%s (0-1000000 microseconds)",
				 buf);
			return -1;
		}
		out->vhost_busyloop_us = (unsigned int)v;
		return 0;
	}
	if (klen == 5 && !strncmp(item, "model", 5)) {
		if (vlen == 6 && !strncmp(val, "virtio", 6))
			out->e1000 = false;
		else if (vlen == 5 && !strncmp(val, "e1000", 5))
			out->e1000 = true;
		else {
			snprintf(err, errlen, "invalid model=%.*s (use virtio or e1000)", (int)vlen,
				 val);
			return -1;
		}
		return 0;
	}
	if (klen == 8 && !strncmp(item, "coalesce", 8)) {
		static const char *const modes[] = {"off", "on", "all"};
		for (int i = 0; i < 3; i++) {
			if (vlen == strlen(modes[i]) && !strncmp(val, modes[i], vlen)) {
				out->coalesce = i;
				out->has_coalesce = true;
				return 0;
			}
		}
		snprintf(err, errlen, "invalid coalesce=%.*s (use off, on or all)", (int)vlen, val);
		return -1;
	}
	snprintf(err, errlen,
		 "unknown option '%.*s' (expected "
		 "tap=NAME[,mac=MAC][,poll=...][,vhost=on][,model=e1000][,coalesce=...])",
		 (int)klen, item);
	return -1;
}

int net_spec_parse(const char *spec, struct net_spec *out, char *err, size_t errlen)
{
	bool seen_tap = false;
	memset(out, 0, sizeof(*out));
	poll_policy_default(&out->poll);
	out->coalesce = 1; /* E1000_COALESCE_ON */
	if (!spec || !spec[0]) {
		snprintf(err, errlen, "tap=NAME is required");
		return -1;
	}
	for (const char *p = spec;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		if (net_spec_item(p, len, out, &seen_tap, err, errlen) < 0)
			return -1;
		if (!comma)
			break;
		p = comma + 1;
	}
	if (!seen_tap) {
		snprintf(err, errlen, "tap=NAME is required");
		return -1;
	}
	if (out->has_coalesce && !out->e1000) {
		snprintf(err, errlen, "coalesce= is for model=e1000");
		return -1;
	}
	if (out->e1000 && (out->vhost || out->poll.mode != POLL_OFF)) {
		snprintf(err, errlen, "vhost= and poll= are for model=virtio");
		return -1;
	}
	return 0;
}
