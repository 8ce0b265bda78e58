// SPDX-License-Identifier: Apache-2.0
/* The polling options shared by --net and --disk specs:
 * poll=off|adaptive|always, poll-start=K (kicks within poll-window=USEC
 * start polling), poll-idle=USEC, poll-max=USEC. POLL_OPT_ROWS(base) are
 * their rows for a device's option table (core/opt.h), base being the
 * offset of its struct poll_policy. */
#ifndef SKIFF_POLL_OPTS_H
#define SKIFF_POLL_OPTS_H

#include <stddef.h>

#include "core/opt.h"
#include "iothread/poll_policy.h"

extern const char *const poll_mode_names[]; /* indexed by enum poll_mode */

#define POLL_OPT_US(key, base, field, what)                                                        \
	{                                                                                          \
		.name = key, .type = OPT_U64, .off = (base) + offsetof(struct poll_policy, field), \
		.min = 1, .max = 10000000, .scale = 1000, .hint = "microseconds, 1-10000000",      \
		.metavar = "USEC", .help = what                                                    \
	}

#define POLL_OPT_ROWS(base)                                                                        \
	{.name = "poll",                                                                           \
	 .type = OPT_ENUM,                                                                         \
	 .off = (base) + offsetof(struct poll_policy, mode),                                       \
	 .choices = poll_mode_names,                                                               \
	 .hint = "use off, adaptive or always",                                                    \
	 .metavar = "off|adaptive|always",                                                         \
	 .help = "poll the queue from the I/O thread instead of waiting for kicks"},               \
	    {.name = "poll-start",                                                                 \
	     .type = OPT_UINT,                                                                     \
	     .off = (base) + offsetof(struct poll_policy, start_kicks),                            \
	     .min = 1,                                                                             \
	     .max = 1000,                                                                          \
	     .hint = "kicks, 1-1000",                                                              \
	     .metavar = "K",                                                                       \
	     .help = "adaptive: start after K kicks within poll-window (4)"},                      \
	    POLL_OPT_US("poll-window", base, window_ns,                                            \
			"adaptive: the kick-counting window (1000)"),                              \
	    POLL_OPT_US("poll-idle", base, idle_ns,                                                \
			"stop polling after this long without work (50)"),                         \
	    POLL_OPT_US("poll-max", base, max_ns, "adaptive: longest continuous polling (20000)")

/* Handles one key=value item if it is a polling option: returns 1 (taken),
 * 0 (not a polling key), or -1 with a one-line reason in err. */
int poll_opt_parse(const char *key, size_t klen, const char *val, size_t vlen,
		   struct poll_policy *p, char *err, size_t errlen);

#endif
