/* The device options of `skiff run` (--disk, --net) and what attaches
 * each: adding a device kind is one line in devices.c. */
#ifndef SKIFF_CLI_DEVICES_H
#define SKIFF_CLI_DEVICES_H

#include <stddef.h>

#include "core/machine.h"

struct dev_arg {
	const char *kind; /* "disk", "net" */
	const char *spec; /* the option's value */
};

/* Attaches every device in order; -1 with a one-line reason on the first
 * that fails. */
int devices_attach(struct machine *m, const struct dev_arg *args, int n, char *err, size_t errlen);

#endif
