// SPDX-License-Identifier: Apache-2.0
#include "jailer/jail_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jailer/jail_dev.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

static int rm_tree_depth(int dirfd, int depth)
{
	int fd = openat(dirfd, ".", DIR_FLAGS);
	DIR *dir = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *e;
	int r = 0;
	if (!dir) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((e = readdir(dir))) {
		struct stat st;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd, e->d_name, DIR_FLAGS);
			if (sub < 0 || depth > 16 || rm_tree_depth(sub, depth + 1) < 0)
				r = -1;
			if (sub >= 0)
				close(sub);
		}
		if (unlinkat(dirfd, e->d_name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0)
			r = -1;
	}
	int e2 = errno;
	closedir(dir);
	errno = e2;
	return r;
}

int jail_rm_tree(int dirfd)
{
	return rm_tree_depth(dirfd, 0);
}

/* mkdir -p of the base, an absolute path the caller (root) chose: it may
 * go through symlinks of the host's own. MADE: its last component was
 * made here. */
static int make_base(const char *path, bool *made)
{
	char buf[PATH_MAX];
	size_t n = (size_t)snprintf(buf, sizeof(buf), "%s", path);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = 0;
	*made = false;
	for (char *p = buf + 1;; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;
		*p = 0;
		if (mkdir(buf, 0755) == 0)
			*made = !c;
		else if (errno != EEXIST)
			return -1;
		else
			*made = false;
		if (!c)
			return 0;
		*p = c;
	}
}

/* Copies the exec file into the jail's root as NAME, root's and
 * read-only: the jailed process cannot change the binary it runs. */
static int copy_exec(int exec_fd, int rootfd, const char *name)
{
	char buf[65536];
	int out = openat(rootfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0500);
	ssize_t n = 0;
	if (out < 0 || lseek(exec_fd, 0, SEEK_SET) < 0)
		goto fail;
	while ((n = read(exec_fd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, n - off);
			if (w < 0)
				goto fail;
			off += w;
		}
	}
	if (n < 0 || fchmod(out, 0555) < 0)
		goto fail;
	return close(out);
fail:
	if (out >= 0) {
		int e = errno;
		close(out);
		errno = e;
	}
	return -1;
}

static int fail_with(struct jail_dir *d, const struct jail_args *a, int status, char *err,
		     size_t errlen, const char *what)
{
	int e = errno;
	if (what)
		snprintf(err, errlen, "%s: %s", what, strerror(e));
	jail_dir_remove(d, a);
	return status;
}

/* <base>/<exec name> may be there already (other jails of the same file,
 * or made by whoever may write the base): it must be root's and writable
 * by root alone (or sticky, as /tmp), else its owner could swap the <id>
 * directory made in it between the jailer's mkdirat and openat, and with
 * it the root where device nodes are made and chowned. */
static int name_dir_check(struct jail_dir *d, const struct jail_args *a, char *err, size_t errlen)
{
	struct stat st;
	if (fstat(d->name_fd, &st) < 0) {
		snprintf(err, errlen, "cannot stat %s/%s: %s", a->chroot_base, a->exec_name,
			 strerror(errno));
		return -1;
	}
	if (st.st_uid == 0 && (!(st.st_mode & 022) || (st.st_mode & S_ISVTX)))
		return 0;
	snprintf(err, errlen,
		 "%s/%s (uid %u, mode %04o) may be written by others: make it root's, mode 0755",
		 a->chroot_base, a->exec_name, (unsigned int)st.st_uid,
		 (unsigned int)(st.st_mode & 07777));
	d->made_name = false; /* not the one made, or not ours to remove */
	return -1;
}

int jail_dir_create(const struct jail_args *a, int exec_fd, struct jail_dir *d, char *err,
		    size_t errlen)
{
	char what[PATH_MAX + 64];
	*d = (struct jail_dir){-1, -1, -1, -1, false, false, ""};
	if ((size_t)snprintf(d->root_path, sizeof(d->root_path), "%s/%s/%s/root", a->chroot_base,
			     a->exec_name, a->id) >= sizeof(d->root_path)) {
		snprintf(err, errlen, "--chroot-base-dir '%.80s' is too long", a->chroot_base);
		return 2;
	}
	snprintf(what, sizeof(what), "cannot make --chroot-base-dir %s", a->chroot_base);
	if (make_base(a->chroot_base, &d->made_base) < 0)
		return fail_with(d, a, 1, err, errlen, what);
	d->base_fd = open(a->chroot_base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->base_fd < 0)
		return fail_with(d, a, 1, err, errlen, what);
	snprintf(what, sizeof(what), "cannot make %s/%s", a->chroot_base, a->exec_name);
	if (mkdirat(d->base_fd, a->exec_name, 0755) == 0)
		d->made_name = true;
	else if (errno != EEXIST)
		return fail_with(d, a, 1, err, errlen, what);
	d->name_fd = openat(d->base_fd, a->exec_name, DIR_FLAGS);
	if (d->name_fd < 0)
		return fail_with(d, a, 1, err, errlen, what);
	if (name_dir_check(d, a, err, errlen) < 0)
		return fail_with(d, a, 2, err, errlen, NULL);
	if (mkdirat(d->name_fd, a->id, 0755) < 0) {
		if (errno != EEXIST)
			return fail_with(d, a, 1, err, errlen, what);
		snprintf(err, errlen,
			 "jail %s/%s/%s exists: remove it (and its cgroup) or choose another --id",
			 a->chroot_base, a->exec_name, a->id);
		/* Not ours: only what was made before it goes. */
		d->made_name = false;
		return fail_with(d, a, 2, err, errlen, NULL);
	}
	d->id_fd = openat(d->name_fd, a->id, DIR_FLAGS);
	snprintf(what, sizeof(what), "cannot make %s", d->root_path);
	if (d->id_fd < 0 || mkdirat(d->id_fd, "root", 0700) < 0)
		return fail_with(d, a, 1, err, errlen, what);
	d->root_fd = openat(d->id_fd, "root", DIR_FLAGS);
	if (d->root_fd < 0)
		return fail_with(d, a, 1, err, errlen, what);
	snprintf(what, sizeof(what), "cannot copy %s into the jail", a->exec_file);
	if (copy_exec(exec_fd, d->root_fd, a->exec_name) < 0)
		return fail_with(d, a, 1, err, errlen, what);
	if (jail_devices_make(d->root_fd, a->devices, a->n_devices, a->uid, a->gid, err, errlen) <
	    0)
		return fail_with(d, a, 1, err, errlen, NULL);
	/* The jailed process may make its API socket in its root; given to it
	 * last, as Firecracker does: while the root still made its nodes, the
	 * UID (any process of it) could have planted a /dev of its own there
	 * and swapped a node for a link between mknod and chown. */
	snprintf(what, sizeof(what), "cannot make %s", d->root_path);
	if (fchown(d->root_fd, a->uid, a->gid) < 0)
		return fail_with(d, a, 1, err, errlen, what);
	return 0;
}

void jail_dir_remove(struct jail_dir *d, const struct jail_args *a)
{
	if (d->id_fd >= 0) {
		jail_rm_tree(d->id_fd);
		unlinkat(d->name_fd, a->id, AT_REMOVEDIR);
	}
	if (d->made_name)
		unlinkat(d->base_fd, a->exec_name, AT_REMOVEDIR);
	if (d->made_base)
		rmdir(a->chroot_base);
	jail_dir_close(d);
}

void jail_dir_close(struct jail_dir *d)
{
	int *fds[] = {&d->root_fd, &d->id_fd, &d->name_fd, &d->base_fd};
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}
