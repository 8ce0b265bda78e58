#include "cli/devices.h"

#include <stdio.h>
#include <string.h>

#include "devices/virtio_blk.h"
#include "devices/virtio_net.h"
#include "cli/vfio_wire.h"

static const struct {
	const char *kind;
	machine_add_fn add;
} device_kinds[] = {
    {"disk", virtio_blk_add},
    {"net", virtio_net_add},
    {"vfio-pci", vfio_pci_add},
};

int devices_attach(struct machine *m, const struct dev_arg *args, int n, char *err, size_t errlen)
{
	for (int i = 0; i < n; i++) {
		machine_add_fn add = NULL;
		for (size_t k = 0; k < sizeof(device_kinds) / sizeof(device_kinds[0]); k++)
			if (!strcmp(device_kinds[k].kind, args[i].kind))
				add = device_kinds[k].add;
		if (!add) {
			snprintf(err, errlen, "unknown device kind '%s'", args[i].kind);
			return -1;
		}
		char why[400];
		if (add(m, args[i].spec, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "--%s %s: %s", args[i].kind, args[i].spec, why);
			return -1;
		}
	}
	return 0;
}
