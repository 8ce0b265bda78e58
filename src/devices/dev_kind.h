// SPDX-License-Identifier: Apache-2.0
/* A device kind's row (struct dm_kind): everything the rest of skiff
 * knows about the kind, defined in the kind's folder (its *_kind.c) and
 * listed in vmm/devmgr_kinds.c. Here, below the device manager, so that
 * a kind fills in its row without including the vmm layer. */
#ifndef SKIFF_DEV_KIND_H
#define SKIFF_DEV_KIND_H

#include <stdbool.h>
#include <stddef.h>

#include "core/opt.h"
#include "devices/dev_api.h"
#include "devices/dev_metrics.h"
#include "devices/dev_sandbox.h"
#include "devices/device.h"

enum dm_transport { DM_VIRTIO_PCI, DM_PCI };

/* One device kind: a row of the table, defined in the kind's folder.
 * Kinds that share a command-line option (--net) are told apart by its
 * model= key; the first is the default. */
struct dm_kind {
	const char *option; /* "disk": --disk SPEC */
	const char *model;  /* model=NAME that selects it, or NULL */
	const char *prefix; /* device names: prefix + index */
	const char *metavar, *help;
	unsigned int cli_flags;	      /* OPT_OPTVAL: --OPTION alone is an empty spec */
	const struct opt_table *spec; /* its key=value options */
	size_t spec_size;
	void (*spec_init)(void *spec); /* defaults */
	bool is_net;		       /* a MAC on the VM's network: mac= settled here */
	enum dm_transport transport;
	int (*create)(const struct dev_ctx *ctx, const void *spec, struct device *out, char *err,
		      size_t errlen);
	/* Optional: checks a parsed spec against the host (0, or -1 with a
	 * reason), before the VM exists. */
	int (*check)(const void *spec, char *err, size_t errlen);
	/* Optional: checks the kind's n specs together, for what no spec
	 * tells alone (a passthrough group given in part): 0, or -1 with a
	 * reason about specs[*bad]. */
	int (*check_set)(const void *const *specs, unsigned int n, unsigned int *bad, char *err,
			 size_t errlen);
	/* Optional: what in a spec needs ioeventfd kicks ("poll="), or NULL. */
	const char *(*needs_ioeventfd)(const void *spec);
	/* Guest RAM pinned for a device's DMA (an IOMMU mapping), and guest
	 * RAM given back to the host (madvise): never in one VM, as a page
	 * given back would stay the device's, apart from what the guest sees. */
	bool pins_ram, discards_ram;
	/* Optional: its Firecracker API resource (PUT route, --config-file
	 * and /vm/config section, JSON fields onto spec keys), kept in the
	 * kind's folder; the API layer serves it from here alone. */
	const struct dev_api *api;
	/* Optional: its calls per thread role (devices/dev_sandbox.h), added
	 * to the filters when a device of the kind is added: all a device of
	 * the kind may need. */
	const struct dev_sandbox *sandbox;
	/* Optional: the part of sandbox one spec's device needs, where its
	 * keys decide which threads run what (vsock's backend=: its own
	 * thread and a migration's hand-over, or the kernel's worker started
	 * from a vCPU); NULL: all of sandbox. */
	const struct dev_sandbox *(*sandbox_of)(const void *spec);
	/* Optional: its group in Firecracker's metrics line. Kinds whose
	 * groups share a name (virtio-net's and the e1000's "net") list the
	 * same fields, each from its own counters, summed in one aggregate. */
	const struct dev_metrics *metrics;
	/* Why this kind can never be snapshotted (its state is outside skiff),
	 * or NULL: then it can once its dev_ops have save and restore. */
	const char *no_snapshot;
};

#endif
