// SPDX-License-Identifier: Apache-2.0
/* The device manager's part of a snapshot (docs/SNAPSHOT.md): the device
 * list (what asked for each device, so a load builds the same ones: the
 * disk's path opened and locked again, the tap opened by name), and per
 * device, as sections named by its place in the manager, its PCI function
 * (and virtio transport), then the kind's own state (dev_ops.save). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/snap.h"
#include "pci/pci.h"
#include "virtio/virtio_pci.h"
#include "vmm/devmgr.h"

int devmgr_can_save(const struct devmgr *dm, const char *what, char *err, size_t errlen)
{
	for (unsigned int i = 0; i < dm->nr; i++) {
		const struct dm_entry *e = &dm->devs[i];
		const char *why =
		    e->kind->no_snapshot ? e->kind->no_snapshot : e->d.ops->no_snapshot;
		if (!why && (!e->d.ops->save || !e->d.ops->restore))
			why = "its kind saves no state yet";
		if (why) {
			snprintf(err, errlen, "cannot %s a VM with %s: %s", what, e->name, why);
			return -1;
		}
	}
	return 0;
}

int devmgr_can_track(const struct devmgr *dm, const char *what, bool logs, bool stops, char *err,
		     size_t errlen)
{
	for (unsigned int i = 0; i < dm->nr; i++) {
		const struct dm_entry *e = &dm->devs[i];
		const char *why = e->d.ops->dirty_blind ? e->d.ops->dirty_blind(e->d.dev) : NULL;
		if (why && !(logs && e->d.ops->dirty_log) && !(stops && e->d.ops->dirty_stop)) {
			snprintf(err, errlen, "cannot %s a VM with %s: %s", what, e->name, why);
			return -1;
		}
	}
	return 0;
}

int devmgr_dirty_stop(const struct devmgr *dm, bool stop, char *err, size_t errlen)
{
	char why[200];
	int r = 0;
	for (unsigned int i = 0; i < dm->nr; i++) {
		const struct dm_entry *e = &dm->devs[i];
		if (!e->d.ops->dirty_stop ||
		    e->d.ops->dirty_stop(e->d.dev, stop, why, sizeof(why)) == 0)
			continue;
		snprintf(err, errlen, "%s: %s", e->name, why);
		r = -1;
		if (!stop)
			continue; /* going again goes on past a failure */
		for (unsigned int j = 0; j < i; j++)
			if (dm->devs[j].d.ops->dirty_stop)
				dm->devs[j].d.ops->dirty_stop(dm->devs[j].d.dev, false, why,
							      sizeof(why));
		break;
	}
	return r;
}

int devmgr_dirty_log(const struct devmgr *dm, _Atomic uint64_t *log, char *err, size_t errlen)
{
	char why[200];
	for (unsigned int i = 0; i < dm->nr; i++) {
		const struct dm_entry *e = &dm->devs[i];
		if (!e->d.ops->dirty_log ||
		    e->d.ops->dirty_log(e->d.dev, log, why, sizeof(why)) == 0)
			continue;
		snprintf(err, errlen, "%s: %s", e->name, why);
		/* Off: those before this one, and this one (it turned itself
		 * off); a failure to stop leaves nothing to undo. */
		for (unsigned int j = 0; log && j < i; j++)
			if (dm->devs[j].d.ops->dirty_log)
				dm->devs[j].d.ops->dirty_log(dm->devs[j].d.dev, NULL, why,
							     sizeof(why));
		return -1;
	}
	return 0;
}

/* The list: a count, then per device five strings (name, option, key,
 * value, spec), each a 16-bit length and its bytes; "" for a NULL key. */
struct dm_list_buf {
	uint8_t *p;
	size_t len, cap;
};

static int list_put(struct dm_list_buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n > UINT16_MAX)
		return -1;
	if (b->len + 2 + n > b->cap) {
		size_t cap = (b->cap + 2 + n) * 2;
		uint8_t *p = realloc(b->p, cap);
		if (!p)
			return -1;
		b->p = p;
		b->cap = cap;
	}
	b->p[b->len++] = (uint8_t)n;
	b->p[b->len++] = (uint8_t)(n >> 8);
	memcpy(b->p + b->len, s ? s : "", n);
	b->len += n;
	return 0;
}

/* The device list (ids: the API's ids, a section of their own, so a file
 * written before them still loads). */
static int devmgr_save_list(const struct devmgr *dm, struct snap_writer *w, bool ids)
{
	struct dm_list_buf b = {0};
	uint8_t nr[4] = {(uint8_t)dm->nr};
	int r = list_put(&b, NULL); /* room; the count replaces it */
	b.len = 0;
	for (unsigned int i = 0; r == 0 && i < 4; i++)
		b.p[b.len++] = nr[i];
	for (unsigned int i = 0; r == 0 && i < dm->nr; i++) {
		const struct dm_entry *e = &dm->devs[i];
		r = ids ? list_put(&b, e->arg_id)
			: list_put(&b, e->name) | list_put(&b, e->kind->option) |
			      list_put(&b, e->arg_key) | list_put(&b, e->arg_value) |
			      list_put(&b, e->arg_spec);
	}
	if (r == 0)
		r = snap_put(w, ids ? SNAP_ID_DEV_IDS : SNAP_ID_DEV_LIST, 0, b.p, b.len);
	free(b.p);
	return r;
}

int devmgr_save(const struct devmgr *dm, struct snap_writer *w, char *err, size_t errlen)
{
	if (devmgr_can_save(dm, "snapshot", err, errlen) < 0)
		return -1;
	if (devmgr_save_list(dm, w, false) < 0 || devmgr_save_list(dm, w, true) < 0) {
		snprintf(err, errlen, "out of memory saving the device list");
		return -1;
	}
	for (unsigned int i = 0; i < dm->nr; i++) {
		const struct dm_entry *e = &dm->devs[i];
		/* The kind first: virtio-blk drains, and the queues it
		 * completes into are then saved as they end up. */
		if (e->d.ops->save(e->d.dev, w, SNAP_ID_DEVICE, i, err, errlen) < 0 ||
		    (e->d.vdev && virtio_pci_save(e->d.vdev, w, i, err, errlen) < 0) ||
		    (e->d.pci && pci_device_save(e->d.pci, w, i, err, errlen) < 0))
			return -1;
	}
	return 0;
}

int devmgr_save_list_only(const struct devmgr *dm, struct snap_writer *w)
{
	return devmgr_save_list(dm, w, false);
}

/* The next string of the list into out (NUL-terminated), or NULL. */
static const char *list_get(const uint8_t *d, size_t len, size_t *off, char **out)
{
	if (len - *off < 2)
		return NULL;
	size_t n = (size_t)d[*off] | (size_t)d[*off + 1] << 8;
	*off += 2;
	if (len - *off < n || memchr(d + *off, '\0', n))
		return NULL;
	char *s = *out;
	memcpy(s, d + *off, n);
	s[n] = '\0';
	*off += n;
	*out += n + 1;
	return s;
}

/* The ids, one per device, into l->id ("" for each if the file has
 * none); p has room for them (the buffer holds both sections). */
static int devmgr_snap_ids(const struct snap_image *img, struct devmgr_snap_list *l, uint32_t nr,
			   char **p)
{
	const struct snap_section *s = snap_find(img, SNAP_ID_DEV_IDS, 0);
	for (uint32_t i = 0; i < nr; i++)
		l->id[i] = "";
	if (!s)
		return 0;
	if (s->len < 4 || ((uint32_t)s->data[0] | (uint32_t)s->data[1] << 8 |
			   (uint32_t)s->data[2] << 16 | (uint32_t)s->data[3] << 24) != nr)
		return -1;
	size_t off = 4;
	for (uint32_t i = 0; i < nr; i++)
		if (!(l->id[i] = list_get(s->data, s->len, &off, p)))
			return -1;
	return off == s->len ? 0 : -1;
}

int devmgr_snap_list(const struct snap_image *img, struct devmgr_snap_list *l, char *err,
		     size_t errlen)
{
	const struct snap_section *s = snap_find(img, SNAP_ID_DEV_LIST, 0);
	memset(l, 0, sizeof(*l));
	if (!s && !snap_find(img, SNAP_ID_DEVICE, 0))
		return 0; /* a VM without devices */
	if (!s || s->len < 4) {
		snprintf(err, errlen, "snapshot has no device list");
		return -1;
	}
	uint32_t nr = (uint32_t)s->data[0] | (uint32_t)s->data[1] << 8 |
		      (uint32_t)s->data[2] << 16 | (uint32_t)s->data[3] << 24;
	const struct snap_section *ids = snap_find(img, SNAP_ID_DEV_IDS, 0);
	/* each string: one byte less than it took; the ids' too */
	char *p = l->buf = malloc((size_t)s->len + (ids ? ids->len : 0));
	size_t off = 4;
	bool ok = l->buf && nr <= DEVMGR_MAX;
	for (uint32_t i = 0; ok && i < nr; i++) {
		const char *f[5];
		for (int k = 0; ok && k < 5; k++)
			ok = (f[k] = list_get(s->data, s->len, &off, &p)) != NULL;
		if (ok && (!f[0][0] || !f[1][0] || !f[2][0] != !f[3][0]))
			ok = false;
		if (ok) {
			l->name[i] = f[0];
			l->arg[i] = (struct devmgr_arg){f[1], f[4], f[2][0] ? f[2] : NULL,
							f[2][0] ? f[3] : NULL, NULL};
		}
	}
	if (ok && off == s->len)
		ok = devmgr_snap_ids(img, l, nr, &p) == 0;
	if (!ok || off != s->len) {
		snprintf(err, errlen, "snapshot's device list is malformed");
		free(l->buf);
		l->buf = NULL;
		return -1;
	}
	l->nr = nr;
	return 0;
}

int devmgr_handover(struct devmgr *dm, bool release, char *err, size_t errlen)
{
	int r = 0;
	/* Taking back goes on past a failure: whatever can be had is. */
	for (unsigned int i = 0; i < dm->nr; i++) {
		const struct dm_entry *e = &dm->devs[i];
		if (e->d.ops->handover && e->d.ops->handover(e->d.dev, release, err, errlen) < 0) {
			r = -1;
			if (release)
				break;
		}
	}
	return r;
}

void devmgr_hold(struct devmgr *dm, bool on)
{
	for (unsigned int i = 0; i < dm->nr; i++) {
		const struct dm_entry *e = &dm->devs[i];
		if (e->d.ops->hold)
			e->d.ops->hold(e->d.dev, on);
	}
}

/* Every device's sections there, and the devices the ones listed. */
static int devmgr_restore_check(const struct devmgr *dm, const struct snap_image *img, char *err,
				size_t errlen)
{
	struct devmgr_snap_list l;
	if (devmgr_snap_list(img, &l, err, errlen) < 0)
		return -1;
	int r = 0;
	if (l.nr != dm->nr) {
		snprintf(err, errlen, "snapshot has %u devices, the VM %u", l.nr, dm->nr);
		r = -1;
	}
	for (unsigned int i = 0; r == 0 && i < dm->nr; i++) {
		static const uint32_t ids[] = {SNAP_ID_PCI_FN, SNAP_ID_VIRTIO_PCI, SNAP_ID_DEVICE};
		if (strcmp(l.name[i], dm->devs[i].name)) {
			snprintf(err, errlen, "snapshot device %u is %s, not %s", i, l.name[i],
				 dm->devs[i].name);
			r = -1;
		}
		/* A PCI-native device has no transport section; a device
		 * without a transport (tests) has its own section only. */
		const struct device *d = &dm->devs[i].d;
		for (size_t k = d->vdev || d->pci ? 0 : 2;
		     r == 0 && k < sizeof(ids) / sizeof(ids[0]); k++)
			if ((k != 1 || d->vdev) && !snap_find(img, ids[k], i)) {
				snprintf(err, errlen, "snapshot has no %s state for %s",
					 snap_id_name(ids[k]), dm->devs[i].name);
				r = -1;
			}
	}
	free(l.buf);
	return r;
}

int devmgr_restore(struct devmgr *dm, const struct snap_image *img, char *err, size_t errlen)
{
	if (devmgr_can_save(dm, "restore", err, errlen) < 0 ||
	    devmgr_restore_check(dm, img, err, errlen) < 0)
		return -1;
	for (unsigned int i = 0; i < dm->nr; i++) {
		struct dm_entry *e = &dm->devs[i];
		const struct snap_section *p = snap_find(img, SNAP_ID_PCI_FN, i);
		const struct snap_section *t = snap_find(img, SNAP_ID_VIRTIO_PCI, i);
		const struct snap_section *s = snap_find(img, SNAP_ID_DEVICE, i);
		/* The kind's section first: it refuses before the transport changes. */
		if (e->d.ops->restore(e->d.dev, s->data, s->len, err, errlen) < 0 ||
		    (e->d.vdev && virtio_pci_restore(e->d.vdev, p->data, p->len, t->data, t->len,
						     err, errlen) < 0) ||
		    (e->d.pci && pci_device_restore(e->d.pci, p->data, p->len, err, errlen) < 0))
			return -1;
	}
	return 0;
}
