/* The polling options shared by --net and --disk specs:
 * poll=off|adaptive|always, poll-start=K (kicks within poll-window=USEC
 * start polling), poll-idle=USEC, poll-max=USEC. */
#ifndef SKIFF_POLL_OPTS_H
#define SKIFF_POLL_OPTS_H

#include <stddef.h>

#include "iothread/poll_policy.h"

/* Handles one key=value item if it is a polling option: returns 1 (taken),
 * 0 (not a polling key), or -1 with a one-line reason in err. */
int poll_opt_parse(const char *key, size_t klen, const char *val, size_t vlen,
		   struct poll_policy *p, char *err, size_t errlen);

#endif
