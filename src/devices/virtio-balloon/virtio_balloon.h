// SPDX-License-Identifier: Apache-2.0
/* virtio-balloon (virtio 1.2 §5.5, the traditional balloon): the host asks
 * the guest for memory back, Firecracker's "balloon" device. The host sets
 * a target (config num_pages, in 4 KiB pages); the guest gives pages on
 * the inflate queue as page frame numbers, which skiff hands back to the
 * host kernel (madvise MADV_DONTNEED on guest RAM's private anonymous
 * mapping: the RSS drops, a later touch faults in a zero page); it takes
 * pages back on the deflate queue (nothing to do: they fault back in).
 * With stats=SECS the guest's memory statistics come on the stats queue
 * and the device hands the buffer back every SECS seconds for fresh ones
 * (a timer on the device's I/O thread). With reporting=on the guest
 * reports free memory on the free page reporting queue
 * (VIRTIO_BALLOON_F_REPORTING), which goes back the same way without a
 * target. deflate-on-oom=on offers VIRTIO_BALLOON_F_DEFLATE_ON_OOM.
 *
 * Queues, in the order the driver numbers them (only present ones count,
 * as Linux's virtio_find_vqs does): inflate, deflate, then stats if
 * offered, then reporting if offered.
 *
 * Which thread: a kick runs its queue on the vCPU that wrote it (the
 * device asks for trapped kicks, virtio_dev.kicks_on_vcpu: its madvise
 * from another thread would interrupt a running vCPU); the stats timer on
 * the I/O thread; a new target or interval from the API's main thread. One
 * mutex serializes them and a reset.
 *
 * A hostile guest: every PFN is checked against guest RAM
 * (guest_mem_ptr) before anything is discarded, a PFN outside RAM or in
 * the PCI hole is counted and skipped; an inflate chain of more than
 * BALLOON_PFNS_MAX PFNs, a length not a multiple of 4 or a device-writable
 * buffer is refused whole; a run does at most BALLOON_POP_BUDGET chains; a
 * stats buffer is read for at most BALLOON_STATS_MAX entries, a trailing
 * partial entry and unknown tags are counted; a guest that never gives a
 * stats buffer back only leaves the statistics old. */
#ifndef SKIFF_VIRTIO_BALLOON_H
#define SKIFF_VIRTIO_BALLOON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/counter.h"
#include "core/opt.h"
#include "devices/dev_api.h"
#include "devices/dev_metrics.h"
#include "devices/device.h"

/* PFNs in one inflate or deflate chain: Linux's driver sends at most 256
 * (VIRTIO_BALLOON_ARRAY_PFNS_MAX), as Firecracker accepts. */
#define BALLOON_PFNS_MAX 256
/* Chains per run of a queue, then the transport calls again. */
#define BALLOON_POP_BUDGET 64
/* Statistics entries read from one stats buffer. */
#define BALLOON_STATS_MAX 32
/* The largest polling interval, Firecracker's (a u16 of seconds). */
#define BALLOON_STATS_S_MAX   65535u
#define BALLOON_PAGES_PER_MIB 256u

/* `--balloon amount=MIB[,deflate-on-oom=on|off][,stats=SECS][,reporting=on|off]` */
struct balloon_spec {
	unsigned int amount_mib;
	bool deflate_on_oom;
	unsigned int stats_s; /* 0: no stats queue */
	bool reporting;
};
extern const struct opt_table balloon_spec_table;
void balloon_spec_init(void *spec);
/* PUT /balloon, --config-file's and /vm/config's section (virtio_balloon_api.c). */
extern const struct dev_api balloon_api;
/* Its "balloon" group in the metrics line (virtio_balloon_metrics.c). */
extern const struct dev_metrics virtio_balloon_metrics;

/* The device kind behind --balloon (one per VM, as Firecracker's). */
int virtio_balloon_new_device(const struct dev_ctx *ctx, const void *spec, struct device *out,
			      char *err, size_t errlen);

/* For tests: the device without a transport (the caller fills in
 * vdev->transport and the queues); gm is guest RAM, the target is checked
 * against it. NULL with a reason on error. */
struct virtio_dev *virtio_balloon_create(const char *name, const struct balloon_spec *s,
					 const struct guest_mem *gm, char *err, size_t errlen);
void virtio_balloon_destroy(struct virtio_dev *vdev);
/* While the guest runs (dev_ops.update), `amount=MIB` (a new target: a
 * config interrupt) or `stats=SECS` (a new interval, the first update at
 * once; on and off are fixed at boot, as Firecracker's). 0, or -1 with
 * Firecracker's words in err. */
int virtio_balloon_update(struct virtio_dev *vdev, const char *spec, char *err, size_t errlen);
/* Its counters: the device's events, "target pages" and "actual pages",
 * and "stat NAME" for each statistic the guest has reported
 * (Firecracker's names: swap_in, free_memory, ...). */
void virtio_balloon_counters(struct virtio_dev *vdev, counter_emit_fn emit, void *ctx);
/* Snapshots (virtio_balloon_snap.c), as struct dev_ops' save and restore
 * (dev: the struct virtio_dev): the config space, the target and interval
 * the API last set, the held stats buffer and the last statistics; a
 * restore checks all of it before it changes anything, before the
 * transport's restore activates the device. 0, or -1 with one line. */
struct snap_writer;
int virtio_balloon_save(void *dev, struct snap_writer *w, uint32_t id, uint32_t instance, char *err,
			size_t errlen);
int virtio_balloon_restore(void *dev, const void *data, size_t len, char *err, size_t errlen);
/* The stats timer's handler; tests call it directly. */
void virtio_balloon_stats_tick(void *opaque, uint32_t events);

/* Its row in the device manager's table of kinds (virtio_balloon_kind.c). */
struct dm_kind;
extern const struct dm_kind virtio_balloon_kind;

#endif
