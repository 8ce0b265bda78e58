// SPDX-License-Identifier: Apache-2.0
/* The e1000 device kind for the device manager (--net ...,model=e1000). */
#ifndef SKIFF_E1000_KIND_H
#define SKIFF_E1000_KIND_H

#include "devices/dev_metrics.h"
#include "devices/dev_sandbox.h"
#include "devices/device.h"

/* A struct net_spec whose mac the device manager has settled. */
extern const struct dev_sandbox e1000_sandbox;
/* Its part of the metrics line's "net" group (e1000_metrics.c). */
extern const struct dev_metrics e1000_metrics;

int e1000_new_device(const struct dev_ctx *ctx, const void *spec, struct device *out, char *err,
		     size_t errlen);
/* Refuses --net options that only virtio-net has. */
int e1000_spec_check(const void *spec, char *err, size_t errlen);

/* Its row in the device manager's table of kinds (e1000_kind.c). */
struct dm_kind;
extern const struct dm_kind e1000_kind;

#endif
