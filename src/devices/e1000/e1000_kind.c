// SPDX-License-Identifier: Apache-2.0
/* --net tap=NAME,model=e1000[,mac=MAC][,coalesce=off|on|all]: the e1000 as
 * a device kind. It shares --net's option table and tap backend with
 * virtio-net; the options only virtio-net has are refused here. */
#include "devices/e1000/e1000_kind.h"

#include <stdio.h>
#include <string.h>

#include "devices/e1000/e1000.h"
#include "devices/virtio-net/virtio_net_spec.h"
#include "devices/dev_kind.h"

static void e1000_dev_stop(void *dev)
{
	e1000_stop(dev);
}

static void e1000_dev_destroy(void *dev)
{
	e1000_destroy(dev);
}

static void e1000_dev_counters(void *dev, counter_emit_fn emit, void *ctx)
{
	const struct e1000 *d = dev;
	for (unsigned int i = 0; i < e1000_counter_count(); i++)
		emit(ctx, e1000_name(d), e1000_counter_name(i), counter_get(e1000_counter(d, i)));
}

static int e1000_dev_save(void *dev, struct snap_writer *w, uint32_t id, uint32_t instance,
			  char *err, size_t errlen)
{
	return e1000_save(dev, w, id, instance, err, errlen);
}

static int e1000_dev_restore(void *dev, const void *data, size_t len, char *err, size_t errlen)
{
	return e1000_restore(dev, data, len, err, errlen);
}

static int e1000_dev_handover(void *dev, bool release, char *err, size_t errlen)
{
	return e1000_handover(dev, release, err, errlen);
}

static const struct dev_ops e1000_dev_ops = {
    .stop = e1000_dev_stop,
    .destroy = e1000_dev_destroy,
    .counters = e1000_dev_counters,
    .save = e1000_dev_save,
    .restore = e1000_dev_restore,
    .handover = e1000_dev_handover,
};

int e1000_spec_check(const void *spec, char *err, size_t errlen)
{
	const struct net_spec *s = spec;
	const char *only = s->vhost		      ? "vhost="
			   : s->poll.mode != POLL_OFF ? "poll="
			   : net_spec_limited(s)      ? "a rate limiter"
			   : s->queues		      ? "queues="
						      : NULL;
	if (!only)
		return 0;
	snprintf(err, errlen, "%s is for model=virtio, not model=e1000", only);
	return -1;
}

int e1000_new_device(const struct dev_ctx *ctx, const void *spec, struct device *out, char *err,
		     size_t errlen)
{
	const struct net_spec *s = spec;
	const struct dev_host *h = ctx->host;
	struct e1000_ctx ec = {.name = ctx->name,
			       .gm = ctx->gm,
			       .io = ctx->io,
			       .coalesce = s->coalesce < 0 ? E1000_COALESCE_ON
							   : (enum e1000_coalesce)s->coalesce};
	/* Without the VM's batching (tests, a KVM without coalesced MMIO)
	 * every write simply exits. */
	if (h && h->mmio_batch_add) {
		ec.zone_add = h->mmio_batch_add;
		ec.zone_del = h->mmio_batch_del;
		ec.flush = h->mmio_batch_flush;
		ec.cm_opaque = h->opaque;
	}
	memcpy(ec.mac, s->mac, sizeof(ec.mac));
	if (tap_open(&ec.tap, s->tap, err, errlen) < 0)
		return -1;
	struct e1000 *d = e1000_create(&ec, err, errlen);
	if (!d)
		return -1;
	*out = (struct device){.dev = d, .ops = &e1000_dev_ops, .pci = e1000_pci(d)};
	return 0;
}

/* Its row in the device manager's table of kinds (vmm/devmgr_kinds.c
 * lists it after virtio-net's): --net ...,model=e1000. */
const struct dm_kind e1000_kind = {
    .option = "net",
    .model = "e1000",
    .prefix = "e1000-",
    .spec = &net_spec_table,
    .spec_size = sizeof(struct net_spec),
    .spec_init = net_spec_init,
    .check = e1000_spec_check,
    .is_net = true,
    .transport = DM_PCI,
    .create = e1000_new_device,
    .sandbox = &e1000_sandbox,
    .metrics = &e1000_metrics,
};
