// SPDX-License-Identifier: Apache-2.0
/* The jail's cgroup v2 leaf, <root>/<parent>/<id>: the parent's
 * controllers enabled for it, each --cgroup FILE=VALUE written, and a
 * process moved in. The root is /sys/fs/cgroup unless the environment's
 * SKIFF_JAILER_CGROUP_ROOT names another (the unit tests' temporary
 * directory, where the interface files are plain files). */
#ifndef SKIFF_JAIL_CGROUP_H
#define SKIFF_JAIL_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "jailer/jail_args.h"

#define JAIL_PARENT_DEPTH_MAX 8

struct jail_cgroup {
	char root[PATH_MAX];
	char leaf[PATH_MAX];
	char parents[JAIL_PARENT_DEPTH_MAX][PATH_MAX]; /* outermost first */
	unsigned int n_parents, made_parents;	       /* the innermost made_parents are ours */
	bool made_leaf;
	char home[PATH_MAX]; /* the mover's cgroup before, to go back on failure */
	pid_t moved;	     /* 0: nobody moved in */
};

/* The cgroup root to use: the override, or /sys/fs/cgroup. */
const char *jail_cgroup_root(void);

/* Whether the jailer may use ROOT: a cgroup v2 file system, so that the
 * limits hold and root writes nowhere else (the override comes from the
 * environment, which the orchestrator's caller may set). 0, or -1 with
 * one line in err. */
int jail_cgroup_root_check(const char *root, char *err, size_t errlen);

/* Makes the leaf for A under ROOT, writes the limits and moves PID in.
 * 0; or an exit status (2: bad input such as a leaf that exists, 1: a
 * failure) with one line in err, and nothing left behind. */
int jail_cgroup_setup(const char *root, const struct jail_args *a, pid_t pid,
		      struct jail_cgroup *cg, char *err, size_t errlen);

/* Undoes jail_cgroup_setup: the process moved back, the leaf and the
 * parents it made removed. */
void jail_cgroup_remove(struct jail_cgroup *cg, const struct jail_args *a);

#endif
