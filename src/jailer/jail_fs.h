// SPDX-License-Identifier: Apache-2.0
/* The jail's directory: <base>/<exec file name>/<id>/root, made fresh
 * (an existing one is refused), with the exec file and device nodes in
 * it, and removed again when the jailer fails before its exec. */
#ifndef SKIFF_JAIL_FS_H
#define SKIFF_JAIL_FS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "jailer/jail_args.h"

struct jail_dir {
	int base_fd, name_fd, id_fd, root_fd; /* -1 when not open */
	bool made_base, made_name;	      /* ours to remove on failure */
	char root_path[PATH_MAX];
};

/* Makes the jail from the open EXEC_FD. 0; or an exit status (2: bad
 * input such as a jail that exists, 1: a failure) with one line in err,
 * everything made so far removed. */
int jail_dir_create(const struct jail_args *a, int exec_fd, struct jail_dir *d, char *err,
		    size_t errlen);

/* Removes what jail_dir_create made (before the exec: a failure). */
void jail_dir_remove(struct jail_dir *d, const struct jail_args *a);

/* Closes the directory fds (they are O_CLOEXEC too). */
void jail_dir_close(struct jail_dir *d);

/* Removes everything under the directory DIRFD, never following a
 * symlink. 0, or -1 with errno. */
int jail_rm_tree(int dirfd);

#endif
