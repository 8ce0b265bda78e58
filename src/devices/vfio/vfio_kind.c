// SPDX-License-Identifier: Apache-2.0
/* --vfio-pci ADDR[,mmap=on|off][,rom=on|off]: the passthrough device kind. */
#include "devices/vfio/vfio_kind.h"

#include <stdio.h>
#include <string.h>

#include "devices/vfio/vfio.h"
#include "devices/vfio/vfio_sys.h"
#include "devices/dev_kind.h"

static int vfio_spec_addr(const struct opt *o, const char *val, void *target, char *err,
			  size_t errlen)
{
	(void)o;
	struct vfio_spec *s = target;
	size_t n = strlen(val);
	if (n == 0 || n >= sizeof(s->addr)) {
		snprintf(err, errlen, "malformed PCI address '%s': use DDDD:BB:DD.F", val);
		return -1;
	}
	memcpy(s->addr, val, n + 1);
	return 0;
}

/* The address against the host (sysfs, IOMMU group, driver), once the
 * whole spec is known good: bad input is told before the VM exists. */
int vfio_spec_check(const void *spec, char *err, size_t errlen)
{
	return vfio_sys_check(((const struct vfio_spec *)spec)->addr, err, errlen);
}

/* The devices together: each IOMMU group given whole. */
int vfio_spec_check_set(const void *const *specs, unsigned int n, unsigned int *bad, char *err,
			size_t errlen)
{
	const char *addrs[64];
	if (n > sizeof(addrs) / sizeof(addrs[0])) {
		snprintf(err, errlen, "more than %zu passthrough devices",
			 sizeof(addrs) / sizeof(addrs[0]));
		*bad = 0;
		return -1;
	}
	for (unsigned int i = 0; i < n; i++)
		addrs[i] = ((const struct vfio_spec *)specs[i])->addr;
	return vfio_groups_whole(addrs, n, bad, err, errlen);
}

static const struct opt vfio_opts[] = {
    {.name = "addr",
     .type = OPT_CUSTOM,
     .flags = OPT_POSITIONAL | OPT_REQUIRED,
     .parse = vfio_spec_addr,
     .metavar = "ADDR",
     .help = "host PCI address (DDDD:BB:DD.F), bound to vfio-pci or a variant"},
    {.name = "mmap",
     .type = OPT_ONOFF,
     .off = offsetof(struct vfio_spec, mmap),
     .hint = "use on or off",
     .metavar = "on|off",
     .help = "map BARs into the guest (default on); off traps every access"},
    {.name = "rom",
     .type = OPT_ONOFF,
     .off = offsetof(struct vfio_spec, rom),
     .hint = "use on or off",
     .metavar = "on|off",
     .help = "show the device's expansion ROM to the guest (default off)"},
};
const struct opt_table vfio_spec_table = OPT_TABLE(vfio_opts, "option", NULL);

void vfio_spec_init(void *spec)
{
	struct vfio_spec *s = spec;
	memset(s, 0, sizeof(*s));
	s->mmap = true;
}

static int vfio_dev_start(void *dev, char *err, size_t errlen)
{
	return vfio_pci_start(dev, err, errlen);
}

static void vfio_dev_stop(void *dev)
{
	vfio_pci_stop(dev);
}

static void vfio_dev_destroy(void *dev)
{
	vfio_pci_destroy(dev);
}

static const struct dev_ops vfio_dev_ops = {
    .start = vfio_dev_start,
    .stop = vfio_dev_stop,
    .destroy = vfio_dev_destroy,
};

int vfio_new_device(const struct dev_ctx *ctx, const void *spec, struct device *out, char *err,
		    size_t errlen)
{
	const struct vfio_spec *s = spec;
	if (!ctx->host || !ctx->host->memslot_add || !ctx->host->vfio) {
		snprintf(err, errlen, "passthrough needs KVM memory slots and a VFIO container");
		return -1;
	}
	struct vfio_ctx vc = {.mem = ctx->gm,
			      .container = ctx->host->vfio,
			      .host = ctx->host->opaque,
			      .memslot_add = ctx->host->memslot_add,
			      .memslot_del = ctx->host->memslot_del,
			      .kvm_vfio_add = ctx->host->kvm_vfio_add};
	struct vfio_pci *v;
	unsigned int flags = (s->mmap ? VFIO_F_MMAP : 0) | (s->rom ? VFIO_F_ROM : 0);
	if (vfio_pci_create(s->addr, flags, &vc, &v, err, errlen) < 0)
		return -1;
	*out = (struct device){.dev = v, .ops = &vfio_dev_ops, .pci = vfio_pci_dev(v)};
	return 0;
}

/* Its row in the device manager's table of kinds (vmm/devmgr_kinds.c
 * lists it): --vfio-pci, its options and checks, /skiff/vfio, sandbox
 * rules; never in a snapshot. */
const struct dm_kind vfio_kind = {
    .option = "vfio-pci",
    .prefix = "vfio",
    .metavar = "ADDR[,mmap=on|off][,rom=on|off]",
    .help = "pass a host PCI device through (bound to vfio-pci; repeatable)",
    .spec = &vfio_spec_table,
    .spec_size = sizeof(struct vfio_spec),
    .spec_init = vfio_spec_init,
    .check = vfio_spec_check,
    .pins_ram = true,
    .check_set = vfio_spec_check_set,
    .transport = DM_PCI,
    .create = vfio_new_device,
    .api = &vfio_api,
    .sandbox = &vfio_sandbox,
    .no_snapshot = "a VFIO passthrough device's state is in the host's hardware",
};
