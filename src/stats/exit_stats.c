#include "stats/exit_stats.h"

#include <inttypes.h>

#include "core/vcpu.h"
#include "core/vm.h"

void exit_stats_print(FILE *out, struct vm *vm)
{
	uint64_t total[VCPU_STAT_NR] = {0};
	for (int i = 0; i < vm->nr_cpus; i++)
		for (int s = 0; s < VCPU_STAT_NR; s++)
			if (vm->vcpus[i])
				total[s] += vm->vcpus[i]->exits[s];
	fprintf(out, "%-24s %12s\n", "exit reason", "count");
	for (int s = 0; s < VCPU_STAT_NR; s++)
		fprintf(out, "%-24s %12" PRIu64 "\n", vcpu_stat_name((enum vcpu_exit_stat)s),
			total[s]);
	const struct bus_table *pio = &vm->bus.space[BUS_PIO];
	const struct bus_table *mmio = &vm->bus.space[BUS_MMIO];
	fprintf(out, "%-24s %12" PRIu64 "\n", "pio unclaimed",
		pio->unclaimed_reads + pio->unclaimed_writes);
	fprintf(out, "%-24s %12" PRIu64 "\n", "mmio unclaimed",
		mmio->unclaimed_reads + mmio->unclaimed_writes);
}
