// SPDX-License-Identifier: Apache-2.0
/* The metrics line (PUT /metrics, FlushMetrics, the end of the run):
 * Firecracker's groups and field names ("block", "block_<drive_id>",
 * "net", "net_<iface_id>", "entropy", "vsock", "balloon", "vcpu") where
 * skiff has the numbers, beside
 * all of skiff's own under "skiff". Built from the flat statistics text
 * (exit_stats_flat), so it shows what GET /stats shows. Counters are
 * cumulative: Firecracker resets most of its per flush, skiff does not. */
#ifndef SKIFF_API_METRICS_H
#define SKIFF_API_METRICS_H

#include <json-c/json.h>

#include "vmm/devmgr.h"

/* A device behind a group (its kind's row's metrics): its counters' owner
 * ("virtio-blk0"), and the API's id for it (drive_id, iface_id), or NULL:
 * then it counts in the aggregate only (a disk from the command line). */
struct fc_metrics_dev {
	const struct dev_metrics *group;
	const char *dev;
	const char *id;
};

/* The whole object for one line, from flat ("name<TAB>value" lines) and
 * the devices; NULL if out of memory. */
struct json_object *fc_metrics_object(const char *flat, const struct fc_metrics_dev *devs,
				      unsigned int n);

struct api_fc;
/* The running VM's devices of every kind with a metrics group, with their
 * API ids: at most max of them; none before InstanceStart. */
unsigned int api_fc_metrics_devs(const struct api_fc *f, struct fc_metrics_dev *devs,
				 unsigned int max);

#endif
