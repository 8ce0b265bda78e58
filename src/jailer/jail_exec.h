// SPDX-License-Identifier: Apache-2.0
/* The jailer's last steps, in this order: namespaces and pivot_root into
 * the jail, resource limits, privileges dropped, inherited fds closed,
 * exec. Each returns 0, or -1 with one line in err. */
#ifndef SKIFF_JAIL_EXEC_H
#define SKIFF_JAIL_EXEC_H

#include <stddef.h>

#include "jailer/jail_args.h"

/* setrlimit of each --resource-limit (soft and hard: the jailed process
 * cannot raise it again). */
int jail_rlimits_set(const struct jail_args *a, char *err, size_t errlen);

/* Whether jail_rlimits_set can set them, asked before anything is made:
 * no-file at most fs.nr_open (setrlimit's EPERM above it). */
int jail_rlimits_check(const struct jail_args *a, char *err, size_t errlen);

/* Joins the network namespace NETNS_FD (when >= 0), unshares the mount
 * namespace (a slave, as Firecracker's: none of ours leaks out; the
 * host's mounts below the jail's directory still come in) and
 * makes ROOT_PATH the root: bind-mounted on itself, pivot_root, the old
 * root detached. Refused unless ROOT_PATH still leads to ROOT_FD's
 * directory. */
int jail_enter(int netns_fd, int root_fd, const char *root_path, char *err, size_t errlen);

/* No supplementary groups, GID and UID (real, effective, saved), so no
 * capabilities left; no_new_privs. */
int jail_drop(const struct jail_args *a, char *err, size_t errlen);

/* Closes every fd above 2: close_range(2), else jail_close_fds_scan. */
void jail_close_fds(void);

/* The fallback (kernels before 5.9, or close_range filtered): close(2)
 * on each fd from 3 to fs.nr_open's default, 2^20, not to RLIMIT_NOFILE:
 * that limit bounds fds opened after it was set, not those inherited. */
void jail_close_fds_scan(void);

/* Execs /<exec name> with the arguments after "--" and only the
 * environment's SKIFF_* variables. Returns only on failure. */
void jail_exec(const struct jail_args *a, char *err, size_t errlen);

/* The exec file must be a static ELF executable: the jail holds no
 * libraries and no interpreter. 0, or -1 with a reason. */
int jail_exec_file_check(int fd, const char *path, char *err, size_t errlen);

/* FD (opened with O_NONBLOCK: a FIFO must not hang the jailer) must be a
 * network namespace (nsfs, NS_GET_NSTYPE): anything else is refused
 * before the jail is made, not found at setns once it is. 0, or -1. */
int jail_netns_check(int fd, const char *path, char *err, size_t errlen);

#endif
