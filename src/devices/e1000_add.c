/* Temporary: --net tap=NAME,model=e1000[,mac=MAC][,coalesce=off|on|all]. */
#include "devices/e1000_add.h"

#include <stdio.h>
#include <string.h>

#include "core/coalesced_mmio.h"
#include "core/vm.h"
#include "devices/e1000.h"
#include "pci/pci.h"
#include "stats/counters.h"

static int zone_add(void *opaque, uint64_t addr, uint32_t len)
{
	return cmmio_zone_add(opaque, addr, len);
}

static int zone_del(void *opaque, uint64_t addr, uint32_t len)
{
	return cmmio_zone_del(opaque, addr, len);
}

int e1000_add(struct machine *m, const struct net_spec *s, char *err, size_t errlen)
{
	static unsigned int nr_e1000;
	char name[24];
	struct e1000_ctx ctx = {
	    .name = name,
	    .gm = &m->vm->mem,
	    .io = machine_iothread(m),
	    .coalesce = (enum e1000_coalesce)s->coalesce,
	    .zone_add = zone_add,
	    .zone_del = zone_del,
	    .flush = cmmio_flush_cb,
	    .cm_opaque = m->vm,
	};
	snprintf(name, sizeof(name), "e1000-%u", nr_e1000);
	if (s->has_mac)
		memcpy(ctx.mac, s->mac, 6);
	else
		net_mac_default(m->nr_nets, ctx.mac);
	if (tap_open(&ctx.tap, s->tap, err, errlen) < 0)
		return -1;
	struct e1000 *d = e1000_create(&ctx, err, errlen);
	if (!d)
		return -1;
	if (pci_bus_add_device(m->pci, e1000_pci(d), err, errlen) < 0) {
		e1000_stop(d);
		e1000_destroy(d);
		return -1;
	}
	for (unsigned int i = 0; i < e1000_counter_count(); i++) {
		char cname[64];
		snprintf(cname, sizeof(cname), "%s %s", name, e1000_counter_name(i));
		counters_register(cname, e1000_counter(d, i));
	}
	nr_e1000++;
	m->nr_nets++;
	return 0;
}
