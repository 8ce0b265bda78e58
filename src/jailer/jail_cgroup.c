// SPDX-License-Identifier: Apache-2.0
#include "jailer/jail_cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

const char *jail_cgroup_root(void)
{
	const char *r = getenv("SKIFF_JAILER_CGROUP_ROOT");
	return r && r[0] == '/' ? r : JAIL_CGROUP_ROOT;
}

int jail_cgroup_root_check(const char *root, char *err, size_t errlen)
{
	struct statfs fs;
	if (statfs(root, &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC)
		return 0;
	snprintf(err, errlen, "cgroup root %.200s is not a cgroup v2 file system%s", root,
		 strcmp(root, JAIL_CGROUP_ROOT) ? " (SKIFF_JAILER_CGROUP_ROOT)" : "");
	return -1;
}

/* DIR/NAME into OUT (PATH_MAX): 0, or -1 when it does not fit. */
static int path_join(char *out, const char *dir, const char *name)
{
	char tmp[PATH_MAX];
	int n = snprintf(tmp, sizeof(tmp), "%s/%s", dir, name);
	if (n < 0 || n >= PATH_MAX)
		return -1;
	memcpy(out, tmp, (size_t)n + 1);
	return 0;
}

/* Writes VALUE to DIR/NAME in one write(2), as the kernel wants it; never
 * through a symlink. In a real cgroup fs the file exists already; in a
 * test's directory it is made. 0, or -1 with errno. */
static int write_at(const char *dir, const char *name, const char *value)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	int e = errno;
	close(dfd);
	if (fd < 0) {
		errno = e;
		return -1;
	}
	size_t n = strlen(value);
	ssize_t w = write(fd, value, n);
	e = errno;
	close(fd);
	if (w != (ssize_t)n) {
		errno = w < 0 ? e : EIO;
		return -1;
	}
	return 0;
}

/* "+memory +pids": the controllers whose files the --cgroup values name. */
static void controllers(const struct jail_args *a, char *out, size_t outlen)
{
	size_t len = 0;
	out[0] = 0;
	for (unsigned int i = 0; i < a->n_cgroups; i++) {
		char word[80];
		const char *kv = a->cgroups[i];
		snprintf(word, sizeof(word), "+%.*s", (int)strcspn(kv, "."), kv);
		bool dup = false;
		for (const char *p = out; (p = strstr(p, word)); p += strlen(word))
			dup |= p[strlen(word)] == ' ' || !p[strlen(word)];
		if (!dup && len + strlen(word) + 2 < outlen)
			len +=
			    (size_t)snprintf(out + len, outlen - len, "%s%s", len ? " " : "", word);
	}
}

/* The directory's subtree_control, when it has one (a test root may not). */
static int enable(const char *dir, const char *ctls, char *err, size_t errlen)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
	if (!ctls[0] || access(path, F_OK) < 0)
		return 0;
	if (write_at(dir, "cgroup.subtree_control", ctls) == 0)
		return 0;
	snprintf(err, errlen, "cannot enable '%s' in %s: %s", ctls, path, strerror(errno));
	return -1;
}

/* The caller's own cgroup v2 path ("0::/x" in /proc/self/cgroup), or "". */
static void own_cgroup(char *out, size_t outlen)
{
	char line[PATH_MAX + 8];
	FILE *f = fopen("/proc/self/cgroup", "re");
	out[0] = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = 0;
		if (strlen(line + 3) < outlen)
			memcpy(out, line + 3, strlen(line + 3) + 1);
	}
	if (f)
		fclose(f);
}

static int make_parents(struct jail_cgroup *cg, const struct jail_args *a, char *err, size_t errlen)
{
	char rel[PATH_MAX];
	snprintf(rel, sizeof(rel), "%s", a->parent_cgroup);
	for (char *p = rel;;) {
		size_t n = strcspn(p, "/");
		char c = p[n];
		p[n] = 0;
		if (cg->n_parents == JAIL_PARENT_DEPTH_MAX) {
			snprintf(err, errlen, "--parent-cgroup '%.80s' is deeper than %d",
				 a->parent_cgroup, JAIL_PARENT_DEPTH_MAX);
			return -1;
		}
		char *dir = cg->parents[cg->n_parents++];
		if (path_join(dir, cg->root, rel) < 0) {
			cg->n_parents--;
			snprintf(err, errlen, "--parent-cgroup '%.80s': path too long",
				 a->parent_cgroup);
			return -1;
		}
		if (mkdir(dir, 0755) == 0) {
			cg->made_parents++;
		} else if (errno == EEXIST) {
			cg->made_parents = 0; /* only a made suffix is ours */
		} else {
			cg->n_parents--;
			snprintf(err, errlen, "cannot make cgroup %s: %s", dir, strerror(errno));
			return -1;
		}
		if (!c)
			return 0;
		p[n] = '/';
		p += n + 1;
	}
}

int jail_cgroup_setup(const char *root, const struct jail_args *a, pid_t pid,
		      struct jail_cgroup *cg, char *err, size_t errlen)
{
	char ctls[256], num[32];
	memset(cg, 0, sizeof(*cg));
	snprintf(cg->root, sizeof(cg->root), "%s", root);
	if (make_parents(cg, a, err, errlen) < 0)
		goto fail;
	controllers(a, ctls, sizeof(ctls));
	if (enable(cg->root, ctls, err, errlen) < 0)
		goto fail;
	for (unsigned int i = 0; i < cg->n_parents; i++)
		if (enable(cg->parents[i], ctls, err, errlen) < 0)
			goto fail;
	if (path_join(cg->leaf, cg->parents[cg->n_parents - 1], a->id) < 0) {
		snprintf(err, errlen, "cgroup path too long");
		goto fail;
	}
	if (mkdir(cg->leaf, 0755) < 0) {
		int exists = errno == EEXIST;
		snprintf(err, errlen, "%s %s%s", exists ? "cgroup" : "cannot make cgroup", cg->leaf,
			 exists ? " exists: remove it or choose another --id" : "");
		if (!exists)
			snprintf(err + strlen(err), errlen - strlen(err), ": %s", strerror(errno));
		jail_cgroup_remove(cg, a);
		return exists ? 2 : 1;
	}
	cg->made_leaf = true;
	for (unsigned int i = 0; i < a->n_cgroups; i++) {
		char file[80];
		const char *kv = a->cgroups[i];
		snprintf(file, sizeof(file), "%.*s", (int)strcspn(kv, "="), kv);
		if (write_at(cg->leaf, file, jail_cgroup_value(kv)) < 0) {
			snprintf(err, errlen, "cannot write '%s' to %s/%s: %s",
				 jail_cgroup_value(kv), cg->leaf, file, strerror(errno));
			goto fail;
		}
	}
	own_cgroup(cg->home, sizeof(cg->home));
	snprintf(num, sizeof(num), "%d", (int)pid);
	if (write_at(cg->leaf, "cgroup.procs", num) < 0) {
		snprintf(err, errlen, "cannot move pid %d into %s: %s", (int)pid, cg->leaf,
			 strerror(errno));
		goto fail;
	}
	cg->moved = pid;
	return 0;
fail:
	jail_cgroup_remove(cg, a);
	return 1;
}

void jail_cgroup_remove(struct jail_cgroup *cg, const struct jail_args *a)
{
	if (cg->moved && cg->home[0]) {
		char home[2 * PATH_MAX], num[32];
		snprintf(home, sizeof(home), "%s%s", cg->root, cg->home);
		snprintf(num, sizeof(num), "%d", (int)cg->moved);
		write_at(home, "cgroup.procs", num); /* best effort: rmdir then fails */
	}
	cg->moved = 0;
	if (cg->made_leaf) {
		/* A test root's interface files are plain files; the kernel's
		 * refuse unlink and go with the directory. */
		int dfd = open(cg->leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		for (unsigned int i = 0; dfd >= 0 && i < a->n_cgroups; i++) {
			char file[80];
			snprintf(file, sizeof(file), "%.*s", (int)strcspn(a->cgroups[i], "="),
				 a->cgroups[i]);
			unlinkat(dfd, file, 0);
		}
		if (dfd >= 0) {
			unlinkat(dfd, "cgroup.procs", 0);
			close(dfd);
		}
		rmdir(cg->leaf);
		cg->made_leaf = false;
	}
	while (cg->made_parents > 0) {
		rmdir(cg->parents[cg->n_parents - 1]);
		cg->n_parents--;
		cg->made_parents--;
	}
}
