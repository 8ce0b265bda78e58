// SPDX-License-Identifier: Apache-2.0
#include "devices/virtio-blk/virtio_blk_spec.h"

#include <stdio.h>
#include <string.h>

#include "devices/virtio-blk/virtio_blk.h"
#include "iothread/poll_opts.h"

static int blk_spec_path(const struct opt *o, const char *val, void *target, char *err,
			 size_t errlen)
{
	(void)o;
	struct blk_spec *out = target;
	size_t n = strlen(val);
	if (!n) {
		snprintf(err, errlen, "empty image path");
		return -1;
	}
	if (n >= sizeof(out->path)) {
		snprintf(err, errlen, "image path too long");
		return -1;
	}
	memcpy(out->path, val, n + 1);
	return 0;
}

const char *const blk_aio_names[] = {"io_uring", "threads", NULL};

static const struct opt blk_opts[] = {
    {.name = "path",
     .type = OPT_CUSTOM,
     .off = offsetof(struct blk_spec, path),
     .flags = OPT_POSITIONAL | OPT_REQUIRED | OPT_HOST_PATH,
     .parse = blk_spec_path,
     .metavar = "PATH",
     .help = "a raw image file"},
    {.name = "ro",
     .type = OPT_FLAG,
     .off = offsetof(struct blk_spec, ro),
     .help = "read-only: the guest's writes fail"},
    {.name = "direct",
     .type = OPT_FLAG,
     .off = offsetof(struct blk_spec, direct),
     .help = "bypass the host page cache (O_DIRECT, QEMU's cache=none) for every transfer "
	     "aligned to 4 KiB; the rest stay buffered"},
    {.name = "aio",
     .type = OPT_ENUM,
     .off = offsetof(struct blk_spec, aio),
     .choices = blk_aio_names,
     .hint = "use io_uring or threads",
     .metavar = "io_uring|threads",
     .help = "io_uring: many requests in flight (default; threads, said in one line, "
	     "where the host has none); threads: one at a time"},
    {.name = "queues",
     .type = OPT_UINT,
     .off = offsetof(struct blk_spec, queues),
     .min = 1,
     .max = BLK_QUEUES_MAX,
     .hint = "use 1 to 16",
     .metavar = "N",
     .help = "request queues, 1-16, each with its own lock and disk thread (default: one per "
	     "vCPU)"},
    POLL_OPT_ROWS(offsetof(struct blk_spec, poll)),
    RATELIMIT_OPT("bw", offsetof(struct blk_spec, rl.b[RL_BYTES]),
		  "limit bytes: a bucket of SIZE refilled every MS ms, BURST extra once"),
    RATELIMIT_OPT("ops", offsetof(struct blk_spec, rl.b[RL_OPS]), "limit requests, likewise"),
};
const struct opt_table blk_spec_table = OPT_TABLE(blk_opts, "disk option", NULL);

void blk_spec_init(void *spec)
{
	struct blk_spec *s = spec;
	memset(s, 0, sizeof(*s));
	poll_policy_default(&s->poll); /* mode POLL_OFF */
}

int blk_spec_parse(const char *spec, struct blk_spec *out, char *err, size_t errlen)
{
	blk_spec_init(out);
	return opt_parse_spec(&blk_spec_table, spec, out, err, errlen);
}
