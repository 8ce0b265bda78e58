// SPDX-License-Identifier: Apache-2.0
/* skiff_allow: the incoming state's paths and taps against what the
 * target's operator allowed (vmm_mig_allow.h). Each device's spec is
 * parsed with its kind's own table, as the build will parse it, and the
 * keys the table marks OPT_HOST_PATH or OPT_HOST_IFACE are checked. */
#include "vmm/vmm_mig_allow.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vmm/devmgr.h"
#include "vmm/vmm.h"

/* At most this much of a path the source chose, control bytes as '?': a
 * refusal stays one line. */
static void shown(const char *s, char *out, size_t len)
{
	size_t n = 0;
	for (; *s && n + 1 < len && n < 200; s++)
		out[n++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
	out[n] = '\0';
}

/* path resolved into out (PATH_MAX): realpath, or for a path that does
 * not exist yet (a socket to bind) its directory's realpath and its last
 * name, which must be a name (not "", "." or "..") and not a dangling
 * symlink. 0, or -1 with why. */
static int resolve(const char *path, char *out, char *err, size_t errlen)
{
	char dir[PATH_MAX], rdir[PATH_MAX];
	struct stat st;
	if (realpath(path, out))
		return 0;
	int e = errno;
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	size_t dlen = slash ? (size_t)(slash - path) : 0;
	if (e == ENOENT && lstat(path, &st) == 0) {
		snprintf(err, errlen, "cannot be resolved: a dangling symlink");
		return -1;
	}
	if (e != ENOENT || !*base || !strcmp(base, ".") || !strcmp(base, "..") ||
	    dlen >= sizeof(dir)) {
		snprintf(err, errlen, "cannot be resolved: %s",
			 e == ENOENT ? "not a name in a directory" : strerror(e));
		return -1;
	}
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (!dlen)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)dlen, path);
	if (!realpath(dir, rdir)) {
		snprintf(err, errlen, "cannot be resolved: its directory: %s", strerror(errno));
		return -1;
	}
	if (snprintf(out, PATH_MAX, "%s%s%s", rdir, strcmp(rdir, "/") ? "/" : "", base) >=
	    PATH_MAX) {
		snprintf(err, errlen, "cannot be resolved: too long");
		return -1;
	}
	return 0;
}

/* p is dir or lies under it, on a '/' boundary (both resolved). */
static int under(const char *p, const char *dir)
{
	size_t n = strlen(dir);
	return !strncmp(p, dir, n) && (p[n] == '\0' || p[n] == '/' || (n && dir[n - 1] == '/'));
}

int vmm_allow_path(const struct vmm_allow *a, const char *path, char *err, size_t errlen)
{
	char res[PATH_MAX], ent[PATH_MAX], no[8];
	if (resolve(path, res, err, errlen) < 0)
		return -1;
	/* An entry resolves as a path does (a socket named that is not
	 * there yet); one that cannot admits nothing. */
	for (unsigned int i = 0; i < a->nr_paths; i++)
		if (resolve(a->paths[i], ent, no, sizeof(no)) == 0 && under(res, ent))
			return 0;
	char r[240];
	shown(res, r, sizeof(r));
	snprintf(err, errlen, "is outside skiff_allow's paths (resolved: %s)", r);
	return -1;
}

static int allow_tap(const struct vmm_allow *a, const struct vmm_config *c, const char *id,
		     const char *tap)
{
	for (unsigned int i = 0; i < a->nr_taps; i++)
		if (!strcmp(a->taps[i], tap))
			return 0;
	/* The operator named this tap for this card. */
	for (unsigned int k = 0; id && *id && k < c->nr_net_overrides; k++)
		if (!strcmp(c->net_overrides[k].iface_id, id) &&
		    !strcmp(c->net_overrides[k].host_dev_name, tap))
			return 0;
	return -1;
}

/* The host names one parsed spec holds, each checked. */
static int check_spec(const struct vmm_allow *a, const struct vmm_config *c, int i,
		      const struct dm_kind *k, const void *spec, const char *name, char *err,
		      size_t errlen)
{
	char why[300], val[240];
	for (size_t o = 0; o < k->spec->n; o++) {
		const struct opt *op = &k->spec->opts[o];
		const char *v = (const char *)spec + op->off;
		if (!(op->flags & (OPT_HOST_PATH | OPT_HOST_IFACE)) || !*v)
			continue;
		shown(v, val, sizeof(val));
		if (op->flags & OPT_HOST_PATH && vmm_allow_path(a, v, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "skiff_allow refuses %s's %s=%s: it %s", name,
				 op->name, val, why);
			return -1;
		}
		if (op->flags & OPT_HOST_IFACE && allow_tap(a, c, c->devs[i].id, v) < 0) {
			snprintf(err, errlen,
				 "skiff_allow refuses %s's %s=%s: not in skiff_allow's taps nor "
				 "given by a network override",
				 name, op->name, val);
			return -1;
		}
	}
	return 0;
}

/* Device i: its kind, its name as the device manager will give it, its
 * spec parsed by the kind's table (nothing opened), then checked. */
static int check_dev(const struct vmm_allow *a, const struct vmm_config *c, int i, char *err,
		     size_t errlen)
{
	const struct vmm_dev_arg *d = &c->devs[i];
	char why[300], name[48];
	const struct dm_kind *k = devmgr_kind(d->option, d->spec, why, sizeof(why));
	if (!k) {
		snprintf(err, errlen, "skiff_allow refuses device %d: %s", i, why);
		return -1;
	}
	unsigned int nth = 0;
	for (int j = 0; j < i; j++) {
		const struct dm_kind *kj = devmgr_kind(c->devs[j].option, c->devs[j].spec, why, 1);
		nth += kj && !strcmp(kj->prefix, k->prefix);
	}
	snprintf(name, sizeof(name), "%s%u", k->prefix, nth);
	if (k->no_snapshot) {
		snprintf(err, errlen, "skiff_allow refuses %s: %s", name, k->no_snapshot);
		return -1;
	}
	void *spec = calloc(1, k->spec_size);
	if (!spec) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	k->spec_init(spec);
	int r =
	    d->key ? opt_parse_spec_with(k->spec, d->key, d->value, d->spec, spec, why, sizeof(why))
		   : opt_parse_spec(k->spec, d->spec, spec, why, sizeof(why));
	if (r < 0)
		snprintf(err, errlen, "skiff_allow refuses %s: %s", name, why);
	else
		r = check_spec(a, c, i, k, spec, name, err, errlen);
	free(spec);
	return r;
}

int vmm_allow_check(const struct vmm_allow *a, const struct vmm_config *c, char *err, size_t errlen)
{
	for (int i = 0; a && i < c->nr_devs; i++)
		if (check_dev(a, c, i, err, errlen) < 0)
			return -1;
	return 0;
}
