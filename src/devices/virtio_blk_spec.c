#include "devices/virtio_blk_spec.h"

#include <stdio.h>
#include <string.h>

#include "iothread/poll_opts.h"

/* One option of length len after the path. */
static int blk_spec_item(const char *item, size_t len, struct blk_spec *out, char *err,
			 size_t errlen)
{
	if (len == 2 && !strncmp(item, "ro", 2)) {
		out->ro = true;
		return 0;
	}
	const char *eq = memchr(item, '=', len);
	size_t klen = eq ? (size_t)(eq - item) : len;
	const char *val = eq ? eq + 1 : "";
	size_t vlen = eq ? len - klen - 1 : 0;
	int r = poll_opt_parse(item, klen, val, vlen, &out->poll, err, errlen);
	if (r != 0)
		return r < 0 ? -1 : 0;
	snprintf(err, errlen,
		 "unknown disk option '%.*s' (known: ro, poll=, poll-start=, poll-window=, "
		 "poll-idle=, poll-max=)",
		 (int)len, item);
	return -1;
}

int blk_spec_parse(const char *spec, struct blk_spec *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	poll_policy_default(&out->poll); /* mode POLL_OFF */
	const char *comma = strchr(spec, ',');
	size_t n = comma ? (size_t)(comma - spec) : strlen(spec);
	if (!n) {
		snprintf(err, errlen, "empty image path");
		return -1;
	}
	if (n >= sizeof(out->path)) {
		snprintf(err, errlen, "image path too long");
		return -1;
	}
	memcpy(out->path, spec, n);
	out->path[n] = '\0';
	while (comma) {
		const char *opt = comma + 1;
		comma = strchr(opt, ',');
		size_t len = comma ? (size_t)(comma - opt) : strlen(opt);
		if (blk_spec_item(opt, len, out, err, errlen) < 0)
			return -1;
	}
	return 0;
}
