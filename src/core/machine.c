#include "core/machine.h"

#include "iothread/iothread.h"

struct iothread *machine_iothread(const struct machine *m)
{
	if (!m->io || !m->nr_io)
		return NULL;
	return &m->io[(m->nr_disks + m->nr_nets) % m->nr_io];
}
