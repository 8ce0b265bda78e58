#include "iothread/poll_opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int key_is(const char *key, size_t klen, const char *name)
{
	return strlen(name) == klen && !strncmp(key, name, klen);
}

/* A decimal in [min, max]; -1 if malformed. */
static int parse_u64(const char *val, size_t vlen, uint64_t min, uint64_t max, uint64_t *out)
{
	char buf[24];
	if (vlen == 0 || vlen >= sizeof(buf))
		return -1;
	memcpy(buf, val, vlen);
	buf[vlen] = 0;
	char *end;
	if (buf[0] < '0' || buf[0] > '9')
		return -1;
	unsigned long long v = strtoull(buf, &end, 10);
	if (*end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int poll_opt_parse(const char *key, size_t klen, const char *val, size_t vlen,
		   struct poll_policy *p, char *err, size_t errlen)
{
	uint64_t v;
	if (key_is(key, klen, "poll")) {
		char mode[16];
		if (vlen >= sizeof(mode))
			vlen = sizeof(mode) - 1;
		memcpy(mode, val, vlen);
		mode[vlen] = 0;
		if (poll_mode_parse(mode, &p->mode) < 0) {
			snprintf(err, errlen, "invalid poll=%s (use off, adaptive or always)",
				 mode);
			return -1;
		}
		return 1;
	}
	if (key_is(key, klen, "poll-start")) {
		if (parse_u64(val, vlen, 1, 1000, &v) < 0) {
			snprintf(err, errlen, "invalid poll-start=%.*s (kicks, 1-1000)", (int)vlen,
				 val);
			return -1;
		}
		p->start_kicks = (unsigned int)v;
		return 1;
	}
	if (key_is(key, klen, "poll-idle") || key_is(key, klen, "poll-max") ||
	    key_is(key, klen, "poll-window")) {
		if (parse_u64(val, vlen, 1, 10000000, &v) < 0) {
			snprintf(err, errlen, "invalid %.*s=%.*s (microseconds, 1-10000000)",
				 (int)klen, key, (int)vlen, val);
			return -1;
		}
		if (key_is(key, klen, "poll-idle"))
			p->idle_ns = v * 1000;
		else if (key_is(key, klen, "poll-max"))
			p->max_ns = v * 1000;
		else
			p->window_ns = v * 1000;
		return 1;
	}
	return 0;
}
