// SPDX-License-Identifier: Apache-2.0
#include "iothread/poll_opts.h"

#include <stdio.h>
#include <string.h>

_Static_assert(sizeof(enum poll_mode) == sizeof(int), "OPT_ENUM stores an int");

const char *const poll_mode_names[] = {"off", "adaptive", "always", NULL};

static const struct opt poll_opts[] = {POLL_OPT_ROWS(0)};
static const struct opt_table poll_table = OPT_TABLE(poll_opts, "polling option", NULL);

int poll_opt_parse(const char *key, size_t klen, const char *val, size_t vlen,
		   struct poll_policy *p, char *err, size_t errlen)
{
	bool known = false;
	for (size_t i = 0; i < poll_table.n; i++)
		known |=
		    strlen(poll_opts[i].name) == klen && !strncmp(poll_opts[i].name, key, klen);
	if (!known)
		return 0;
	char item[64];
	snprintf(item, sizeof(item), "%.*s=%.*s", (int)klen, key, (int)vlen, val);
	return opt_parse_spec(&poll_table, item, p, err, errlen) < 0 ? -1 : 1;
}
