// SPDX-License-Identifier: Apache-2.0
/* The options of `skiff run`: one table (opts.c) behind the parser,
 * `--help` and the synopsis in docs/CLI.md. Device options (--disk, --net, ...)
 * come from the device manager's table of kinds. Exit statuses: 2 for bad
 * input, 1 for failures at run time. */
#ifndef SKIFF_OPTS_H
#define SKIFF_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/opt.h"
#include "vmm/vmm.h"

#define EXIT_USAGE   2
#define EXIT_RUNTIME 1

#define OPTS_CPUS_MAX	      64
#define OPTS_HALT_POLL_MAX_US 1000000 /* 1 s: KVM takes up to 2^32-1 ns */
#define OPTS_DEFAULT_CMDLINE  "console=ttyS0"

struct run_opts {
	struct vmm_config vm;
	bool timing;
	bool stats;
	const char *stats_json; /* --stats-json FILE */
	const char *api_sock, *config_file;
	bool no_api;
	int log_level; /* --log-level: index of error|warn|info|debug */
};

/* Parses `skiff run` arguments (argv[0] is "run"). 0; 1 if --help was
 * given; -1 with a one-line message in err. */
int run_opts_parse(int argc, char **argv, struct run_opts *o, char *err, size_t errlen);

void run_opts_usage(FILE *out);
/* The table behind the parser and --help (device options included), for
 * the man page and completion. */
const struct opt_table *run_opts_table(void);
/* The synopsis alone, as docs/CLI.md shows it. */
void run_opts_synopsis(FILE *out);

#endif
