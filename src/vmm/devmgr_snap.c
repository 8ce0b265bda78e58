/* The device manager's part of a snapshot: each device's own state, as
 * one section named by its place in the manager (devmgr.h). */
#include <stdio.h>

#include "core/snap.h"
#include "vmm/devmgr.h"

int devmgr_can_save(const struct devmgr *dm, char *err, size_t errlen)
{
	for (unsigned int i = 0; i < dm->nr; i++) {
		const struct dm_entry *e = &dm->devs[i];
		if (e->kind->no_snapshot) {
			snprintf(err, errlen, "cannot snapshot a VM with %s: %s", e->name,
				 e->kind->no_snapshot);
			return -1;
		}
		if (!e->d.ops->save || !e->d.ops->restore) {
			snprintf(err, errlen,
				 "cannot snapshot a VM with %s: its kind saves no state yet",
				 e->name);
			return -1;
		}
	}
	return 0;
}

int devmgr_save(const struct devmgr *dm, struct snap_writer *w, char *err, size_t errlen)
{
	if (devmgr_can_save(dm, err, errlen) < 0)
		return -1;
	for (unsigned int i = 0; i < dm->nr; i++) {
		const struct dm_entry *e = &dm->devs[i];
		if (e->d.ops->save(e->d.dev, w, SNAP_ID_DEVICE, i, err, errlen) < 0)
			return -1;
	}
	return 0;
}

int devmgr_restore(struct devmgr *dm, const struct snap_image *img, char *err, size_t errlen)
{
	if (devmgr_can_save(dm, err, errlen) < 0)
		return -1;
	for (unsigned int i = 0; i < dm->nr; i++)
		if (!snap_find(img, SNAP_ID_DEVICE, i)) {
			snprintf(err, errlen, "snapshot has no state for %s", dm->devs[i].name);
			return -1;
		}
	for (unsigned int i = 0; i < dm->nr; i++) {
		struct dm_entry *e = &dm->devs[i];
		const struct snap_section *s = snap_find(img, SNAP_ID_DEVICE, i);
		if (e->d.ops->restore(e->d.dev, s->data, s->len, err, errlen) < 0)
			return -1;
	}
	return 0;
}
