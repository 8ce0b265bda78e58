// SPDX-License-Identifier: Apache-2.0
/* A device kind's group in Firecracker's metrics line ("block", "net",
 * "entropy", "vsock", "balloon"): each Firecracker field is the sum of at most two of the
 * device's own counters (dev_ops.counters, by their names), or 0 where
 * skiff has no such event. Kept in the kind's folder and named by its
 * row; the API's metrics line (api/api_metrics.c) walks the rows. */
#ifndef SKIFF_DEV_METRICS_H
#define SKIFF_DEV_METRICS_H

#include <stddef.h>

struct dev_metric {
	const char *name;    /* Firecracker's: "rx_bytes_count" */
	const char *what[2]; /* the device's counters summed ("rx bytes"), NULL-ended */
};

#define DEV_METRICS_FIELDS_MAX 24

struct dev_metrics {
	const char *group; /* "net": the aggregate; "net_<id>" per device with an API id */
	const struct dev_metric *fields;
	size_t n; /* at most DEV_METRICS_FIELDS_MAX */
};

#define DEV_METRICS(g, tbl)                                                                        \
	{                                                                                          \
		.group = (g), .fields = (tbl), .n = sizeof(tbl) / sizeof((tbl)[0])                 \
	}

#endif
