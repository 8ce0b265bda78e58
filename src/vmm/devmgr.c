// SPDX-License-Identifier: Apache-2.0
#include "vmm/devmgr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/virtio-net/virtio_net_spec.h"
#include "iothread/iothread.h"
#include "pci/pci.h"
#include "virtio/virtio_pci.h"

/* The value of key= in a spec ("" if absent), for choosing a kind before
 * the spec is parsed with that kind's table. */
static void spec_value(const char *spec, const char *key, char *out, size_t outlen)
{
	size_t klen = strlen(key);
	out[0] = '\0';
	for (const char *p = spec; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
		if (!strncmp(p, key, klen) && p[klen] == '=') {
			const char *v = p + klen + 1;
			size_t n = strcspn(v, ",");
			snprintf(out, outlen, "%.*s", (int)(n < outlen ? n : outlen - 1), v);
		}
	}
}

static const struct dm_kind *kind_find(const struct dm_kind *const *kinds, size_t n,
				       const char *option, const char *spec, char *err,
				       size_t errlen)
{
	char model[32];
	spec_value(spec, "model", model, sizeof(model));
	const struct dm_kind *first = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct dm_kind *k = kinds[i];
		if (strcmp(k->option, option))
			continue;
		if (!first)
			first = k;
		if (!model[0] || (k->model && !strcmp(k->model, model)))
			return model[0] ? k : first;
	}
	if (!first)
		snprintf(err, errlen, "unknown device kind '%s'", option);
	else
		snprintf(err, errlen, "invalid model=%s (no such %s model)", model, option);
	return NULL;
}

const struct dm_kind *devmgr_kind(const char *option, const char *spec, char *err, size_t errlen)
{
	return kind_find(dm_kinds, dm_nr_kinds, option, spec, err, errlen);
}

/* mac= settled by the VM: the default follows the card's index among all
 * network cards, and no two cards may share one. */
static int dm_net_mac(struct devmgr *dm, struct net_spec *s, struct dm_entry *e, char *err,
		      size_t errlen)
{
	if (!s->has_mac)
		net_mac_default(dm->nr_net, s->mac);
	for (unsigned int i = 0; i < dm->nr; i++) {
		if (dm->devs[i].kind->is_net && !memcmp(dm->devs[i].mac, s->mac, NET_MAC_LEN)) {
			char macs[NET_MAC_STRLEN];
			net_mac_format(s->mac, macs);
			snprintf(err, errlen, "mac %s is already used by %s", macs,
				 dm->devs[i].name);
			return -1;
		}
	}
	memcpy(e->mac, s->mac, NET_MAC_LEN);
	return 0;
}

static int dm_attach(struct devmgr *dm, struct dm_entry *e, struct iothread *io, char *err,
		     size_t errlen)
{
	if (e->kind->transport == DM_PCI)
		return pci_bus_add_device(dm->pci, e->d.pci, err, errlen);
	struct virtio_pci_env env = {
	    .pci = dm->pci, .io = io, .gm = dm->gm, .use_ioeventfd = dm->use_ioeventfd};
	return virtio_pci_attach(&env, e->d.vdev, err, errlen);
}

static unsigned int dm_count_prefix(const struct devmgr *dm, const char *prefix)
{
	unsigned int n = 0;
	for (unsigned int i = 0; i < dm->nr; i++)
		n += !strcmp(dm->devs[i].kind->prefix, prefix);
	return n;
}

/* A device that pins guest RAM and one that gives it back (struct
 * dm_kind): the second of them is refused. */
static int dm_ram_clash(const struct devmgr *dm, const struct dm_kind *k, char *err, size_t errlen)
{
	for (unsigned int i = 0; i < dm->nr; i++) {
		const struct dm_kind *o = dm->devs[i].kind;
		if ((k->pins_ram && o->discards_ram) || (k->discards_ram && o->pins_ram)) {
			snprintf(err, errlen,
				 "cannot share a VM with %s: %s pins guest RAM for DMA, and "
				 "memory the balloon gives back would stay the device's",
				 dm->devs[i].name, k->pins_ram ? "it" : o->prefix);
			return -1;
		}
	}
	return 0;
}

/* The kind's own calls for this spec's device into the filters its
 * threads will install: before create, which may start a thread that
 * filters itself at once (a disk's queue threads). */
static int dm_sandbox(const struct dm_kind *k, const void *spec, char *err, size_t errlen)
{
	const struct dev_sandbox *sb = k->sandbox_of ? k->sandbox_of(spec) : k->sandbox;
	for (int r = 0; sb && r < SANDBOX_NR_ROLES; r++) {
		const struct sandbox_rules *set = &sb->role[r];
		if (set->n && sandbox_add_rules((enum sandbox_role)r, set) < 0) {
			snprintf(err, errlen, "too many rule sets for the %s thread's filter",
				 sandbox_role_name((enum sandbox_role)r));
			return -1;
		}
	}
	return 0;
}

static int dm_add(struct devmgr *dm, const struct dm_kind *k, void *spec, char *err, size_t errlen)
{
	if (dm->nr == DEVMGR_MAX) {
		snprintf(err, errlen, "too many devices (at most %d)", DEVMGR_MAX);
		return -1;
	}
	if (dm_ram_clash(dm, k, err, errlen) < 0)
		return -1;
	struct dm_entry *e = &dm->devs[dm->nr];
	memset(e, 0, sizeof(*e));
	e->kind = k;
	if (k->is_net && dm_net_mac(dm, spec, e, err, errlen) < 0)
		return -1;
	snprintf(e->name, sizeof(e->name), "%s%u", k->prefix, dm_count_prefix(dm, k->prefix));
	/* Whole devices go round-robin over the I/O threads in command-line
	 * order: a device's queues and its other event sources share state,
	 * and one thread per device needs no locking between them. */
	struct iothread *io = dm->nr_io ? &dm->io[dm->nr % dm->nr_io] : NULL;
	struct dev_ctx ctx = {.name = e->name,
			      .index = dm_count_prefix(dm, k->prefix),
			      .gm = dm->gm,
			      .io = io,
			      .host = dm->host,
			      .nr_vcpus = dm->nr_vcpus,
			      .halt_in_guest = dm->halt_in_guest};
	if (dm_sandbox(k, spec, err, errlen) < 0 || k->create(&ctx, spec, &e->d, err, errlen) < 0)
		return -1;
	if (dm_attach(dm, e, io, err, errlen) < 0) {
		e->d.ops->destroy(e->d.dev);
		return -1;
	}
	dm->nr++;
	dm->nr_net += k->is_net;
	return 0;
}

/* a's spec parsed with k's table into parsed (spec_init'ed): 0, or -1. */
static int dm_spec(const struct dm_kind *k, const struct devmgr_arg *a, void *parsed, char *err,
		   size_t errlen)
{
	return a->key ? opt_parse_spec_with(k->spec, a->key, a->value, a->spec, parsed, err, errlen)
		      : opt_parse_spec(k->spec, a->spec, parsed, err, errlen);
}

/* Finds the kind, parses spec with its table and checks what the VM must
 * offer; returns the parsed spec (free it) or NULL with a reason. */
static void *dm_parse(const struct devmgr *dm, const struct devmgr_arg *a, bool use_ioeventfd,
		      const struct dm_kind **kind, char *err, size_t errlen)
{
	const char *option = a->option, *spec = a->spec;
	const struct dm_kind *k =
	    dm && dm->kinds ? kind_find(dm->kinds, dm->nr_kinds, option, spec, err, errlen)
			    : devmgr_kind(option, spec, err, errlen);
	void *parsed = k ? calloc(1, k->spec_size) : NULL;
	if (k && !parsed)
		snprintf(err, errlen, "out of memory");
	if (!parsed)
		return NULL;
	k->spec_init(parsed);
	const char *needs = NULL;
	if (dm_spec(k, a, parsed, err, errlen) == 0 &&
	    (!k->check || k->check(parsed, err, errlen) == 0)) {
		needs = k->needs_ioeventfd ? k->needs_ioeventfd(parsed) : NULL;
		if (!needs || use_ioeventfd) {
			*kind = k;
			return parsed;
		}
		snprintf(err, errlen, "%s needs ioeventfd kicks (drop --no-ioeventfd)", needs);
	}
	free(parsed);
	return NULL;
}

/* "--disk SPEC", or with a typed value "--disk path=VALUE (SPEC)". */
static void dm_fail(const struct devmgr_arg *a, const char *why, char *err, size_t errlen)
{
	if (a->key)
		snprintf(err, errlen, "--%s %s=%s%s%s%s: %s", a->option, a->key, a->value,
			 *a->spec ? " (" : "", a->spec, *a->spec ? ")" : "", why);
	else
		snprintf(err, errlen, "--%s %s: %s", a->option, a->spec, why);
}

int devmgr_check_arg(const struct devmgr_arg *a, bool use_ioeventfd, char *err, size_t errlen)
{
	char why[400];
	const struct dm_kind *k;
	void *parsed = dm_parse(NULL, a, use_ioeventfd, &k, why, sizeof(why));
	if (!parsed)
		dm_fail(a, why, err, errlen);
	free(parsed);
	return parsed ? 0 : -1;
}

int devmgr_check_api(const struct devmgr_arg *a, bool use_ioeventfd, uint64_t mem_mib, char *err,
		     size_t errlen)
{
	char why[400];
	const struct dm_kind *k;
	void *parsed = dm_parse(NULL, a, use_ioeventfd, &k, why, sizeof(why));
	if (!parsed) {
		dm_fail(a, why, err, errlen);
		return -1;
	}
	int r = k->api && k->api->check_vm ? k->api->check_vm(parsed, mem_mib, err, errlen) : 0;
	free(parsed);
	return r;
}

/* The specs of args that are kind k's, to its check_set. */
static int dm_check_set(const struct dm_kind *k, const struct devmgr_arg *args,
			const struct dm_kind *const *kinds, void *const *parsed, unsigned int n,
			char *err, size_t errlen)
{
	const void *set[DEVMGR_MAX];
	unsigned int idx[DEVMGR_MAX], m = 0, bad = 0;
	char why[400];
	for (unsigned int i = 0; i < n; i++)
		if (kinds[i] == k) {
			idx[m] = i;
			set[m++] = parsed[i];
		}
	if (k->check_set(set, m, &bad, why, sizeof(why)) == 0)
		return 0;
	dm_fail(&args[idx[bad < m ? bad : 0]], why, err, errlen);
	return -1;
}

int devmgr_check_args(const struct devmgr_arg *args, unsigned int n, bool use_ioeventfd, char *err,
		      size_t errlen)
{
	const struct dm_kind *kinds[DEVMGR_MAX];
	void *parsed[DEVMGR_MAX];
	unsigned int nr = 0;
	int r = 0;
	if (n > DEVMGR_MAX) {
		snprintf(err, errlen, "more than %d devices", DEVMGR_MAX);
		return -1;
	}
	for (; nr < n && r == 0; nr++) {
		char why[400];
		parsed[nr] = dm_parse(NULL, &args[nr], use_ioeventfd, &kinds[nr], why, sizeof(why));
		if (!parsed[nr]) {
			dm_fail(&args[nr], why, err, errlen);
			r = -1;
		}
	}
	/* Each kind once, at its first spec. */
	for (unsigned int i = 0; r == 0 && i < n; i++) {
		bool first = true;
		for (unsigned int j = 0; j < i; j++)
			first = first && kinds[j] != kinds[i];
		if (first && kinds[i]->check_set)
			r = dm_check_set(kinds[i], args, kinds, parsed, n, err, errlen);
	}
	for (unsigned int i = 0; i < nr; i++)
		free(parsed[i]);
	return r;
}

/* One device of a migration's CONFIG list, parsed only: the kinds' host
 * checks (VFIO's sysfs) are the build's, after skiff_allow, never a
 * hostile source's probe of this host. A device that cannot migrate is
 * refused here. 0, or -1 with why. */
static int dm_prepare_one(const struct devmgr_arg *a, char *why, size_t whylen)
{
	const struct dm_kind *k = devmgr_kind(a->option, a->spec, why, whylen);
	if (!k)
		return -1;
	if (k->no_snapshot)
		return snprintf(why, whylen, "cannot migrate: %s", k->no_snapshot), -1;
	void *parsed = calloc(1, k->spec_size);
	if (!parsed)
		return snprintf(why, whylen, "out of memory"), -1;
	k->spec_init(parsed);
	int r = dm_spec(k, a, parsed, why, whylen);
	if (r == 0)
		r = dm_sandbox(k, parsed, why, whylen);
	free(parsed);
	return r;
}

int devmgr_sandbox_prepare(const struct devmgr_arg *args, unsigned int n, char *err, size_t errlen)
{
	int r = 0;
	sandbox_clear_rules();
	for (unsigned int i = 0; i < n && r == 0; i++) {
		char why[400];
		if ((r = dm_prepare_one(&args[i], why, sizeof(why))) < 0)
			dm_fail(&args[i], why, err, errlen);
	}
	if (r == 0 && (r = sandbox_prepare()) < 0)
		snprintf(err, errlen, "cannot compile the seccomp filters: %s", strerror(-r));
	/* The VM's build starts from none and adds its own devices' sets. */
	sandbox_clear_rules();
	return r < 0 ? -1 : 0;
}

int devmgr_check(const char *option, const char *spec, bool use_ioeventfd, char *err, size_t errlen)
{
	struct devmgr_arg a = {.option = option, .spec = spec};
	return devmgr_check_arg(&a, use_ioeventfd, err, errlen);
}

static void dm_free_arg(struct dm_entry *e)
{
	free(e->arg_option);
	free(e->arg_key);
	free(e->arg_value);
	free(e->arg_spec);
	free(e->arg_id);
	e->arg_option = e->arg_key = e->arg_value = e->arg_spec = e->arg_id = NULL;
}

static char *dm_strdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* The device stays (its owner destroys the VM on -1, freeing it). */
static int dm_keep_arg(struct dm_entry *e, const struct devmgr_arg *a)
{
	e->arg_option = dm_strdup(a->option);
	e->arg_spec = dm_strdup(a->spec ? a->spec : "");
	e->arg_key = dm_strdup(a->key);
	e->arg_value = dm_strdup(a->key ? a->value : NULL);
	e->arg_id = dm_strdup(a->id ? a->id : "");
	if (e->arg_option && e->arg_spec && e->arg_id && (!a->key || (e->arg_key && e->arg_value)))
		return 0;
	return -1;
}

int devmgr_add_arg(struct devmgr *dm, const struct devmgr_arg *a, char *err, size_t errlen)
{
	char why[400];
	const struct dm_kind *k;
	void *parsed = dm_parse(dm, a, dm->use_ioeventfd, &k, why, sizeof(why));
	int r = parsed ? dm_add(dm, k, parsed, why, sizeof(why)) : -1;
	free(parsed);
	if (r < 0)
		dm_fail(a, why, err, errlen);
	if (r == 0 && dm_keep_arg(&dm->devs[dm->nr - 1], a) < 0) {
		snprintf(err, errlen, "out of memory");
		r = -1;
	}
	return r;
}

int devmgr_add(struct devmgr *dm, const char *option, const char *spec, char *err, size_t errlen)
{
	struct devmgr_arg a = {.option = option, .spec = spec};
	return devmgr_add_arg(dm, &a, err, errlen);
}

int devmgr_start(struct devmgr *dm, char *err, size_t errlen)
{
	for (unsigned int i = 0; i < dm->nr; i++) {
		struct dm_entry *e = &dm->devs[i];
		char why[300];
		if (e->d.ops->start && e->d.ops->start(e->d.dev, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "%s: %s", e->name, why);
			return -1;
		}
	}
	return 0;
}

void devmgr_stop(struct devmgr *dm)
{
	if (dm->stopped)
		return;
	dm->stopped = true;
	for (unsigned int i = dm->nr; i-- > 0;)
		dm->devs[i].d.ops->stop(dm->devs[i].d.dev);
}

void devmgr_destroy(struct devmgr *dm)
{
	devmgr_stop(dm);
	for (unsigned int i = dm->nr; i-- > 0;) {
		dm->devs[i].d.ops->destroy(dm->devs[i].d.dev);
		dm_free_arg(&dm->devs[i]);
	}
	dm->nr = 0;
}

/* The index-th device given by option (--disk, --net), while the devices
 * run; NULL with why in err. */
static struct dm_entry *dm_live(struct devmgr *dm, const char *option, unsigned int index,
				char *err, size_t errlen)
{
	for (unsigned int i = 0; i < dm->nr; i++) {
		struct dm_entry *e = &dm->devs[i];
		if (strcmp(e->kind->option, option) || index--)
			continue;
		if (!dm->stopped)
			return e;
		snprintf(err, errlen, "%s: stopped", e->name);
		return NULL;
	}
	snprintf(err, errlen, "no such device");
	return NULL;
}

int devmgr_replace(struct devmgr *dm, const char *option, unsigned int index, const char *path,
		   char *err, size_t errlen)
{
	struct dm_entry *e = dm_live(dm, option, index, err, errlen);
	if (e && !e->d.ops->replace) {
		snprintf(err, errlen, "%s: its medium cannot change", e->name);
		return -1;
	}
	return e ? e->d.ops->replace(e->d.dev, path, err, errlen) : -1;
}

int devmgr_limit(struct devmgr *dm, const char *option, unsigned int index, unsigned int dir,
		 const struct ratelimit_cfg *cfg, unsigned int mask, char *err, size_t errlen)
{
	struct dm_entry *e = dm_live(dm, option, index, err, errlen);
	if (e && !e->d.ops->limit) {
		snprintf(err, errlen, "%s: it has no rate limiter", e->name);
		return -1;
	}
	return e ? e->d.ops->limit(e->d.dev, dir, cfg, mask, err, errlen) : -1;
}

int devmgr_update(struct devmgr *dm, const char *option, unsigned int index, const char *spec,
		  char *err, size_t errlen)
{
	struct dm_entry *e = dm_live(dm, option, index, err, errlen);
	if (e && !e->d.ops->update) {
		snprintf(err, errlen, "%s: it cannot change while the guest runs", e->name);
		return -1;
	}
	return e ? e->d.ops->update(e->d.dev, spec, err, errlen) : -1;
}

const char *devmgr_name(const struct devmgr *dm, const char *option, unsigned int index)
{
	for (unsigned int i = 0; i < dm->nr; i++)
		if (!strcmp(dm->devs[i].kind->option, option) && !index--)
			return dm->devs[i].name;
	return NULL;
}

void devmgr_counters(const struct devmgr *dm, counter_emit_fn emit, void *ctx)
{
	for (unsigned int i = 0; i < dm->nr; i++) {
		const struct dm_entry *e = &dm->devs[i];
		if (e->kind->transport == DM_VIRTIO_PCI)
			virtio_pci_counters(e->d.vdev, emit, ctx);
		if (e->d.ops->counters)
			e->d.ops->counters(e->d.dev, emit, ctx);
	}
}
