// SPDX-License-Identifier: Apache-2.0
/* skiff-jailer's command line, Firecracker's jailer interface where it
 * applies (docs/jailer.md there): every argument checked before anything
 * is created, since the jailer runs as root. */
#ifndef SKIFF_JAIL_ARGS_H
#define SKIFF_JAIL_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define JAIL_ID_MAX	    64
#define JAIL_CGROUPS_MAX    16
#define JAIL_RLIMITS_MAX    4
#define JAIL_DEVICES_MAX    16
#define JAIL_DEFAULT_BASE   "/srv/jailer"
#define JAIL_DEFAULT_PARENT "skiff"
#define JAIL_CGROUP_ROOT    "/sys/fs/cgroup"

struct jail_rlimit {
	int resource; /* RLIMIT_FSIZE or RLIMIT_NOFILE */
	uint64_t value;
};

struct jail_args {
	const char *id;
	const char *exec_file; /* absolute */
	const char *exec_name; /* its last component */
	const char *chroot_base;
	const char *netns;	   /* NULL: stay in the jailer's */
	const char *parent_cgroup; /* relative to the cgroup root */
	uid_t uid;
	gid_t gid;
	const char *cgroups[JAIL_CGROUPS_MAX]; /* "FILE=VALUE", checked */
	unsigned int n_cgroups;
	struct jail_rlimit rlimits[JAIL_RLIMITS_MAX];
	unsigned int n_rlimits;
	const char *devices[JAIL_DEVICES_MAX]; /* extra nodes: "vhost-net", "vfio/12" */
	unsigned int n_devices;
	bool daemonize;
	bool new_pid_ns;
	bool help;
	char **exec_argv; /* after "--", NULL-terminated (argv's own end) */
};

/* Parses argv (argv[0] is the program). 0, or -1 with one line in err. */
int jail_args_parse(int argc, char **argv, struct jail_args *a, char *err, size_t errlen);

/* The checks, one per argument kind: 0 or -1 with a reason in err. */
int jail_id_check(const char *id, char *err, size_t errlen);
int jail_name_check(const char *what, const char *name, char *err, size_t errlen);
int jail_cgroup_check(const char *kv, char *err, size_t errlen);
int jail_rlimit_parse(const char *s, struct jail_rlimit *out, char *err, size_t errlen);

/* Where the value of a checked "FILE=VALUE" starts. */
const char *jail_cgroup_value(const char *kv);

/* Makes ERR one printable line: each control character becomes '?'
 * (messages quote arguments and paths, which may hold a newline). */
void jail_err_oneline(char *err);

extern const char jail_usage[];

#endif
