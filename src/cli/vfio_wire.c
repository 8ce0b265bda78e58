/* Temporary wiring of --vfio-pci ADDR[,mmap=on|off] until the device
 * manager takes passthrough devices (issue 9). */
#include "cli/vfio_wire.h"

#include <stdio.h>
#include <string.h>

#include "core/vm.h"
#include "pci/pci.h"
#include "vfio/vfio.h"
#include "vfio/vfio_sys.h"

int vfio_spec_parse(const char *spec, char addr[32], bool *mmap, char *err, size_t errlen)
{
	const char *comma = strchr(spec, ',');
	size_t n = comma ? (size_t)(comma - spec) : strlen(spec);
	*mmap = true;
	if (n == 0 || n >= 32) {
		snprintf(err, errlen, "malformed PCI address '%.*s': use DDDD:BB:DD.F", (int)n,
			 spec);
		return -1;
	}
	memcpy(addr, spec, n);
	addr[n] = 0;
	if (!comma)
		return 0;
	if (!strcmp(comma + 1, "mmap=on"))
		return 0;
	if (!strcmp(comma + 1, "mmap=off")) {
		*mmap = false;
		return 0;
	}
	snprintf(err, errlen, "unknown option '%s': use mmap=on or mmap=off", comma + 1);
	return -1;
}

int vfio_spec_check(const char *spec, char *err, size_t errlen)
{
	char addr[32];
	bool mmap;
	if (vfio_spec_parse(spec, addr, &mmap, err, errlen) < 0)
		return -1;
	return vfio_sys_check(addr, err, errlen);
}

static int slot_add(void *host, uint64_t gpa, uint64_t size, void *hva)
{
	return vm_memslot_add(host, gpa, size, hva);
}

static int slot_del(void *host, int slot)
{
	return vm_memslot_del(host, slot);
}

int vfio_pci_add(struct machine *m, const char *spec, char *err, size_t errlen)
{
	char addr[32];
	bool mmap;
	if (vfio_spec_parse(spec, addr, &mmap, err, errlen) < 0)
		return -1;
	struct vfio_ctx ctx = {
	    .mem = &m->vm->mem, .host = m->vm, .memslot_add = slot_add, .memslot_del = slot_del};
	struct vfio_pci *v;
	if (vfio_pci_create(addr, mmap, &ctx, &v, err, errlen) < 0)
		return -1;
	if (pci_bus_add_device(m->pci, vfio_pci_dev(v), err, errlen) < 0) {
		vfio_pci_destroy(v);
		return -1;
	}
	/* On the bus now: released (stopped, reset, closed) with it. */
	return vfio_pci_start(v, err, errlen);
}
