// SPDX-License-Identifier: Apache-2.0
#include "jailer/jail_args.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "jailer/jail_dev.h"

const char jail_usage[] =
    "usage: skiff-jailer --id ID --exec-file PATH --uid UID --gid GID\n"
    "         [--chroot-base-dir DIR] [--netns PATH] [--cgroup-version 2]\n"
    "         [--parent-cgroup PATH] [--cgroup FILE=VALUE]...\n"
    "         [--resource-limit fsize=N|no-file=N]... [--device NAME]...\n"
    "         [--daemonize] [--new-pid-ns] -- [skiff arguments]\n"
    "Makes DIR/<exec file name>/ID/root (DIR defaults to " JAIL_DEFAULT_BASE "), copies the\n"
    "exec file and the device nodes it needs in (/dev/kvm, /dev/net/tun; --device adds\n"
    "vhost-net, vhost-vsock, urandom, vfio/vfio, vfio/N), puts itself in a cgroup v2 leaf\n"
    "(" JAIL_CGROUP_ROOT "/<parent, default " JAIL_DEFAULT_PARENT ">/ID) when --cgroup is given,\n"
    "joins --netns, pivots into the jail in a mount namespace of its own, drops to\n"
    "UID:GID with no groups and no_new_privs, and execs the file. A jail that exists\n"
    "is refused; remove DIR/<name>/ID and the cgroup after the VM exits.\n";

/* Firecracker's default for no-file; fsize has none. */
#define JAIL_DEFAULT_NOFILE 2048

int jail_id_check(const char *id, char *err, size_t errlen)
{
	size_t n = strlen(id);
	if (n < 1 || n > JAIL_ID_MAX ||
	    strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		       "0123456789-") != n) {
		snprintf(err, errlen, "invalid --id '%.80s': use 1 to %d of A-Z a-z 0-9 -", id,
			 JAIL_ID_MAX);
		return -1;
	}
	return 0;
}

/* A single path component we create: no '/', not "." or "..", printable. */
int jail_name_check(const char *what, const char *name, char *err, size_t errlen)
{
	size_t n = strlen(name);
	bool ok =
	    n > 0 && n <= NAME_MAX && strcmp(name, ".") && strcmp(name, "..") &&
	    strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.+") == n;
	if (!ok) {
		snprintf(err, errlen, "invalid %s name '%.80s'", what, name);
		return -1;
	}
	return 0;
}

/* FILE=VALUE: FILE is a controller's interface file ("memory.max",
 * "cpu.max", "memory.swap.max", "hugetlb.2MB.max": capitals after the
 * controller's name), never a path and never a cgroup.* core file
 * (cgroup.procs would move other processes in); VALUE one line. */
int jail_cgroup_check(const char *kv, char *err, size_t errlen)
{
	const char *eq = strchr(kv, '=');
	size_t flen = eq ? (size_t)(eq - kv) : 0;
	size_t ctl = strspn(kv, "abcdefghijklmnopqrstuvwxyz");
	if (!eq || flen > 64 || ctl == 0 || ctl >= flen || kv[ctl] != '.' ||
	    strspn(kv + ctl, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._") !=
		flen - ctl ||
	    memmem(kv, flen, "..", 2) || kv[flen - 1] == '.' || !strncmp(kv, "cgroup.", 7)) {
		snprintf(err, errlen,
			 "invalid --cgroup '%.80s': use FILE=VALUE with FILE a controller's file "
			 "such as memory.max",
			 kv);
		return -1;
	}
	const char *v = eq + 1;
	size_t vlen = strlen(v);
	for (size_t i = 0; i < vlen; i++) {
		if ((unsigned char)v[i] < 0x20 || v[i] == 0x7f) {
			vlen = 0;
			break;
		}
	}
	if (vlen == 0 || vlen > 256) {
		snprintf(err, errlen, "invalid --cgroup '%.80s': VALUE must be one printable line",
			 kv);
		return -1;
	}
	return 0;
}

const char *jail_cgroup_value(const char *kv)
{
	return strchr(kv, '=') + 1;
}

static const struct {
	const char *name;
	int resource;
} jail_rlimit_names[] = {
    {"fsize", RLIMIT_FSIZE},
    {"no-file", RLIMIT_NOFILE},
};

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int jail_rlimit_parse(const char *s, struct jail_rlimit *out, char *err, size_t errlen)
{
	const char *eq = strchr(s, '=');
	for (size_t i = 0; eq && i < sizeof(jail_rlimit_names) / sizeof(jail_rlimit_names[0]);
	     i++) {
		const char *name = jail_rlimit_names[i].name;
		if (strlen(name) != (size_t)(eq - s) || strncmp(s, name, eq - s))
			continue;
		if (parse_u64(eq + 1, &out->value) < 0 || out->value == RLIM_INFINITY)
			break;
		out->resource = jail_rlimit_names[i].resource;
		return 0;
	}
	snprintf(err, errlen, "invalid --resource-limit '%.80s': use fsize=N or no-file=N", s);
	return -1;
}

static int parse_id(const char *flag, const char *s, unsigned int *out, char *err, size_t errlen)
{
	uint64_t v;
	/* 0 is root, (uid_t)-1 means "unchanged" to setresuid. */
	if (parse_u64(s, &v) < 0 || v == 0 || v >= UINT32_MAX) {
		snprintf(err, errlen, "invalid %s '%.80s': use a number from 1 to %u (not root)",
			 flag, s, UINT32_MAX - 1);
		return -1;
	}
	*out = (unsigned int)v;
	return 0;
}

/* An absolute path of at most PATH_MAX - 1 bytes. */
static int parse_abs(const char *flag, const char *s, char *err, size_t errlen)
{
	if (s[0] != '/' || strlen(s) >= PATH_MAX) {
		snprintf(err, errlen, "invalid %s '%.80s': give an absolute path", flag, s);
		return -1;
	}
	return 0;
}

typedef int (*jail_flag_fn)(struct jail_args *a, const char *v, char *err, size_t errlen);

static int f_id(struct jail_args *a, const char *v, char *err, size_t errlen)
{
	a->id = v;
	return jail_id_check(v, err, errlen);
}

static int f_exec(struct jail_args *a, const char *v, char *err, size_t errlen)
{
	if (parse_abs("--exec-file", v, err, errlen) < 0)
		return -1;
	a->exec_file = v;
	a->exec_name = strrchr(v, '/') + 1;
	return jail_name_check("--exec-file", a->exec_name, err, errlen);
}

static int f_uid(struct jail_args *a, const char *v, char *err, size_t errlen)
{
	unsigned int id;
	if (parse_id("--uid", v, &id, err, errlen) < 0)
		return -1;
	a->uid = id;
	return 0;
}

static int f_gid(struct jail_args *a, const char *v, char *err, size_t errlen)
{
	unsigned int id;
	if (parse_id("--gid", v, &id, err, errlen) < 0)
		return -1;
	a->gid = id;
	return 0;
}

static int f_base(struct jail_args *a, const char *v, char *err, size_t errlen)
{
	a->chroot_base = v;
	return parse_abs("--chroot-base-dir", v, err, errlen);
}

static int f_netns(struct jail_args *a, const char *v, char *err, size_t errlen)
{
	a->netns = v;
	return parse_abs("--netns", v, err, errlen);
}

static int f_cgver(struct jail_args *a, const char *v, char *err, size_t errlen)
{
	(void)a;
	if (strcmp(v, "2")) {
		snprintf(err, errlen, "invalid --cgroup-version '%.80s': only 2 (cgroup v2)", v);
		return -1;
	}
	return 0;
}

/* PATH under the cgroup root: components of [A-Za-z0-9-_.], none "." or "..". */
static int f_parent(struct jail_args *a, const char *v, char *err, size_t errlen)
{
	char part[NAME_MAX + 1];
	const char *p = v;
	a->parent_cgroup = v;
	if (strlen(v) >= 256 || !*v)
		goto bad;
	while (*p) {
		size_t n = strcspn(p, "/");
		if (n == 0 || n > NAME_MAX)
			goto bad;
		memcpy(part, p, n);
		part[n] = 0;
		if (jail_name_check("--parent-cgroup", part, err, errlen) < 0)
			goto bad;
		p += n + (p[n] == '/');
	}
	if (v[strlen(v) - 1] != '/')
		return 0;
bad:
	snprintf(err, errlen,
		 "invalid --parent-cgroup '%.80s': a relative path such as skiff/tenant", v);
	return -1;
}

static int f_cgroup(struct jail_args *a, const char *v, char *err, size_t errlen)
{
	if (a->n_cgroups == JAIL_CGROUPS_MAX) {
		snprintf(err, errlen, "too many --cgroup (at most %d)", JAIL_CGROUPS_MAX);
		return -1;
	}
	if (jail_cgroup_check(v, err, errlen) < 0)
		return -1;
	a->cgroups[a->n_cgroups++] = v;
	return 0;
}

static int f_rlimit(struct jail_args *a, const char *v, char *err, size_t errlen)
{
	struct jail_rlimit r;
	if (jail_rlimit_parse(v, &r, err, errlen) < 0)
		return -1;
	/* A later value for the same resource replaces the earlier one. */
	for (unsigned int i = 0; i < a->n_rlimits; i++) {
		if (a->rlimits[i].resource == r.resource) {
			a->rlimits[i] = r;
			return 0;
		}
	}
	a->rlimits[a->n_rlimits++] = r; /* at most one per resource: fits */
	return 0;
}

static int f_device(struct jail_args *a, const char *v, char *err, size_t errlen)
{
	if (a->n_devices == JAIL_DEVICES_MAX) {
		snprintf(err, errlen, "too many --device (at most %d)", JAIL_DEVICES_MAX);
		return -1;
	}
	if (jail_device_check(v, err, errlen) < 0)
		return -1;
	a->devices[a->n_devices++] = v;
	return 0;
}

static const struct jail_flag {
	const char *name;
	jail_flag_fn fn; /* NULL: a switch, set through its bool */
	size_t flag_off;
} jail_flags[] = {
    {"--id", f_id, 0},
    {"--exec-file", f_exec, 0},
    {"--uid", f_uid, 0},
    {"--gid", f_gid, 0},
    {"--chroot-base-dir", f_base, 0},
    {"--netns", f_netns, 0},
    {"--cgroup-version", f_cgver, 0},
    {"--parent-cgroup", f_parent, 0},
    {"--cgroup", f_cgroup, 0},
    {"--resource-limit", f_rlimit, 0},
    {"--device", f_device, 0},
    {"--daemonize", NULL, offsetof(struct jail_args, daemonize)},
    {"--new-pid-ns", NULL, offsetof(struct jail_args, new_pid_ns)},
    {"--help", NULL, offsetof(struct jail_args, help)},
};

static const struct jail_flag *flag_find(const char *name)
{
	for (size_t i = 0; i < sizeof(jail_flags) / sizeof(jail_flags[0]); i++)
		if (!strcmp(jail_flags[i].name, name))
			return &jail_flags[i];
	return NULL;
}

static int args_parse(int argc, char **argv, struct jail_args *a, char *err, size_t errlen)
{
	static char *no_args[] = {NULL};
	memset(a, 0, sizeof(*a));
	a->chroot_base = JAIL_DEFAULT_BASE;
	a->parent_cgroup = JAIL_DEFAULT_PARENT;
	a->exec_argv = no_args;
	a->rlimits[0] = (struct jail_rlimit){RLIMIT_NOFILE, JAIL_DEFAULT_NOFILE};
	a->n_rlimits = 1;
	bool seen_uid = false, seen_gid = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			a->exec_argv = &argv[i + 1];
			break;
		}
		const struct jail_flag *f = flag_find(argv[i]);
		if (!f) {
			snprintf(err, errlen, "unknown option '%.80s' (skiff's own go after --)",
				 argv[i]);
			return -1;
		}
		if (!f->fn) {
			*(bool *)((char *)a + f->flag_off) = true;
			continue;
		}
		if (i + 1 >= argc) {
			snprintf(err, errlen, "%s needs a value", f->name);
			return -1;
		}
		if (f->fn(a, argv[++i], err, errlen) < 0)
			return -1;
		seen_uid |= f->fn == f_uid;
		seen_gid |= f->fn == f_gid;
	}
	if (a->help)
		return 0;
	const char *missing = !a->id	      ? "--id"
			      : !a->exec_file ? "--exec-file"
			      : !seen_uid     ? "--uid"
			      : !seen_gid     ? "--gid"
					      : NULL;
	if (missing) {
		snprintf(err, errlen, "missing %s (skiff-jailer --help)", missing);
		return -1;
	}
	return 0;
}

void jail_err_oneline(char *err)
{
	for (; *err; err++)
		if ((unsigned char)*err < 0x20 || *err == 0x7f)
			*err = '?';
}

int jail_args_parse(int argc, char **argv, struct jail_args *a, char *err, size_t errlen)
{
	if (args_parse(argc, argv, a, err, errlen) == 0)
		return 0;
	jail_err_oneline(err);
	return -1;
}
