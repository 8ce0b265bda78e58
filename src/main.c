// SPDX-License-Identifier: Apache-2.0
/* skiff: a small, fast KVM virtual machine monitor. */
#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/opts.h"
#include "core/vcpu.h"

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
	if (!strcmp(argv[1], "help"))
		return cmd_help(argc - 1, argv + 1);
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version"))
		return cmd_version(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		cli_usage(stdout);
		return 0;
	}
	fprintf(stderr, "skiff: unknown command '%s' (try 'skiff --help')\n", argv[1]);
	return EXIT_USAGE;
}
