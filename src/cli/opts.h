/* Command-line parsing for `skiff run`, and value parsers shared by other
 * commands. Exit statuses: 2 for bad input, 1 for failures at run time. */
#ifndef SKIFF_OPTS_H
#define SKIFF_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/devices.h"

#define EXIT_USAGE   2
#define EXIT_RUNTIME 1

#define OPTS_MEM_MIN	     (16ULL << 20)
#define OPTS_MEM_MAX	     (1ULL << 40)
#define OPTS_CPUS_MAX	     64
#define OPTS_DEFAULT_CMDLINE "console=ttyS0"
#define OPTS_MAX_DEVICES     64

struct run_opts {
	const char *kernel;
	const char *initrd;
	const char *cmdline;
	uint64_t mem;
	int cpus;
	int iothreads; /* --iothreads N, 1..IOTHREAD_MAX */
	bool timing;
	bool stats;
	const char *stats_json; /* --stats-json FILE */
	bool no_seccomp;
	const char *api_sock; /* --api-sock PATH */
	bool no_ioeventfd;
	bool guest_unpack; /* --unpack guest: let the bzImage decompress itself */
	struct dev_arg devs[OPTS_MAX_DEVICES];
	int nr_devs;
};

/* Parses "256M", "2G", "512K", "1T" or a bare number of MiB (as QEMU).
 * 0 on success; -1 if malformed or out of range. */
int parse_size(const char *s, uint64_t *out);
/* Parses a decimal integer in [min, max]. */
int parse_int(const char *s, long min, long max, long *out);

/* Parses `skiff run` arguments (argv[0] is "run"). On error returns -1
 * with a one-line message in err. */
int run_opts_parse(int argc, char **argv, struct run_opts *o, char *err, size_t errlen);

void run_opts_usage(void);

#endif
