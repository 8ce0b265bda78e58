// SPDX-License-Identifier: Apache-2.0
/* What a migration's target lets the incoming state open (issue 34, C1;
 * docs/MIGRATION.md, "What the target opens"). The state names its
 * devices as specs (`--disk PATH`, `--net tap=NAME`, `--vsock uds=PATH`):
 * a hostile source could name any file the target's user reaches, a
 * socket anywhere, another VM's tap. The target's operator gives, on
 * PUT /migration/receive, skiff_allow: directories the paths must lie in
 * and the taps the cards may open; every device is checked against it
 * before anything is built or opened.
 *
 * A path is allowed if, resolved (realpath: no symlink or `..` escapes;
 * a path that does not exist yet, a socket to bind, by its directory's
 * realpath and its last name), it is an allowed entry (resolved alike) or
 * lies under one, on a '/' boundary: "/srv/vm1" admits /srv/vm1/a, never
 * /srv/vm10/a. A tap is allowed if it is in taps, or if a network
 * override named it for that card. A device whose kind cannot migrate
 * (VFIO) is refused. The check runs in the target alone, against what its
 * operator owns: the allowed directories must not be writable by anyone
 * who should not choose the VM's files (a symlink swapped in after the
 * check would be followed). */
#ifndef SKIFF_VMM_MIG_ALLOW_H
#define SKIFF_VMM_MIG_ALLOW_H

#include <stddef.h>

#define VMM_ALLOW_MAX 64 /* entries of each list */

struct vmm_config;

struct vmm_allow {
	const char *paths[VMM_ALLOW_MAX]; /* absolute, not empty */
	unsigned int nr_paths;
	const char *taps[VMM_ALLOW_MAX];
	unsigned int nr_taps;
};

/* Every device of c (its devs, network overrides applied; c's
 * net_overrides name the taps they allow) against a: 0, or -1 with one
 * line naming the device and the path or tap. a NULL: 0 (the state is
 * trusted, as Cloud Hypervisor's target trusts it). Opens nothing. */
int vmm_allow_check(const struct vmm_allow *a, const struct vmm_config *c, char *err,
		    size_t errlen);

/* One path against a's paths: 0 if allowed, else -1 with why in err
 * ("is outside skiff_allow's paths", "cannot be resolved: ..."). */
int vmm_allow_path(const struct vmm_allow *a, const char *path, char *err, size_t errlen);

#endif
