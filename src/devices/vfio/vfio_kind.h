// SPDX-License-Identifier: Apache-2.0
/* The passthrough device kind for the device manager. */
#ifndef SKIFF_VFIO_KIND_H
#define SKIFF_VFIO_KIND_H

#include <stdbool.h>

#include "core/opt.h"
#include "devices/dev_api.h"
#include "devices/dev_sandbox.h"
#include "devices/device.h"

struct vfio_spec {
	char addr[32];
	bool mmap;
	bool rom;
};

extern const struct opt_table vfio_spec_table;
void vfio_spec_init(void *spec);
int vfio_spec_check(const void *spec, char *err, size_t errlen);
int vfio_spec_check_set(const void *const *specs, unsigned int n, unsigned int *bad, char *err,
			size_t errlen);
int vfio_new_device(const struct dev_ctx *ctx, const void *spec, struct device *out, char *err,
		    size_t errlen);

/* PUT /skiff/vfio/ID, the "skiff-vfio" list (vfio_api.c). */
extern const struct dev_api vfio_api;
/* Its ioctls on the vCPU and main threads (vfio_sandbox.c). */
extern const struct dev_sandbox vfio_sandbox;

/* Its row in the device manager's table of kinds (vfio_kind.c). */
struct dm_kind;
extern const struct dm_kind vfio_kind;

#endif
