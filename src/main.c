/* skiff: a small, fast KVM virtual machine monitor. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/opts.h"
#include "core/vcpu.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: skiff COMMAND [options]\n"
		"  run     boot a Linux guest (skiff run --help)\n"
		"  probe   report what this host's KVM offers (exit 0: guest kernel code\n"
		"          runs natively; 1: /dev/kvm works but emulates it; 2: no usable KVM)\n"
		"  unpack  decompress a bzImage's kernel into the cache ahead of time\n"
		"  stat    live exit accounting of a VM started with --api-sock PATH\n");
}

int main(int argc, char **argv)
{
	uint64_t start_ns = monotonic_ns();
	if (argc < 2) {
		fprintf(stderr, "skiff: no command given (try 'skiff --help')\n");
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1, start_ns);
	if (!strcmp(argv[1], "probe"))
		return cmd_probe(argc - 1, argv + 1);
	if (!strcmp(argv[1], "unpack"))
		return cmd_unpack(argc - 1, argv + 1);
	if (!strcmp(argv[1], "stat"))
		return cmd_stat(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "skiff: unknown command '%s' (try 'skiff --help')\n", argv[1]);
	return EXIT_USAGE;
}
