// SPDX-License-Identifier: Apache-2.0
/* PUT /snapshot/create and PUT /snapshot/load, as Firecracker: create on
 * a paused VM, load on a fresh process before anything but the logger and
 * metrics is configured. Diff snapshots need dirty page tracking
 * (machine-config's or load's track_dirty_pages); the Uffd backend, which
 * skiff does not have, is refused in one line. */
#include <stdio.h>
#include <string.h>

#include "api/api_fc.h"
#include "core/vm_dirty.h"

#define PRE_BOOT "The requested operation is not supported before starting the microVM."
#define LOAD_LATE                                                                                  \
	"Loading a microVM snapshot not allowed after configuring boot-specific resources."
#define DESER "An error occurred when deserializing the json body of a request: "

static void snap_create(struct api_fc *f, const struct fc_snapshot_create *s, struct api_reply *rep)
{
	char why[600];
	if (f->state == FC_NOT_STARTED)
		return api_reply_fault(rep, 400, PRE_BOOT);
	bool diff = !strcmp(s->snapshot_type, "Diff");
	if (s->snapshot_type[0] && strcmp(s->snapshot_type, "Full") && !diff)
		return api_reply_fault(rep, 400,
				       DESER "unknown variant `%s`, expected `Full` or `Diff`.",
				       s->snapshot_type);
	if (diff && !vm_dirty_on(&f->vmm->vm))
		return api_reply_fault(rep, 400,
				       "Diff snapshots are not allowed on uVMs with dirty page "
				       "tracking disabled.");
	if (f->state != FC_PAUSED)
		return api_reply_fault(rep, 400,
				       "Create snapshot error: Cannot save the microVM state: "
				       "Operation not allowed: save/restore unavailable while "
				       "running");
	if (vmm_snapshot_create(f->vmm, s->snapshot_path, s->mem_file_path, diff, why,
				sizeof(why)) < 0)
		return api_reply_fault(rep, 400, "Create snapshot error: %s", why);
	api_fc_log(f, "Info", "The microVM's snapshot is in %s, its memory in %s.",
		   s->snapshot_path, s->mem_file_path);
	api_reply_none(rep);
}

/* The memory file: mem_backend (File) or the deprecated mem_file_path,
 * exactly one. NULL after a fault reply. */
static const char *snap_mem_path(const struct fc_snapshot_load *s, struct api_reply *rep)
{
	bool file = s->seen & FC_LOAD_SEEN_MEM_FILE, backend = s->seen & FC_LOAD_SEEN_BACKEND;
	if (file == backend) {
		api_reply_fault(rep, 400,
				file ? DESER "too many fields: either `mem_backend` or "
					     "`mem_file_path` exclusively is required."
				     : DESER "missing field: either `mem_backend` or "
					     "`mem_file_path` is required.");
		return NULL;
	}
	if (file)
		return s->mem_file_path;
	if (!strcmp(s->mem_backend.backend_type, "File"))
		return s->mem_backend.backend_path;
	if (!strcmp(s->mem_backend.backend_type, "Uffd"))
		api_reply_fault(rep, 400,
				"Load snapshot error: the Uffd memory backend is not supported "
				"by skiff yet");
	else
		api_reply_fault(rep, 400, DESER "unknown variant `%s`, expected `File` or `Uffd`.",
				s->mem_backend.backend_type);
	return NULL;
}

void api_fc_restore_base(const struct api_fc *f, const struct fc_net_override *o, uint32_t n,
			 struct vmm_net_override *ov, struct vmm_config *base)
{
	*base = f->base;
	base->disk_replace = f->serving;
	for (uint32_t i = 0; i < n; i++)
		ov[i] = (struct vmm_net_override){o[i].iface_id, o[i].host_dev_name};
	base->net_overrides = ov;
	base->nr_net_overrides = n;
}

void api_fc_restored(struct api_fc *f, enum fc_state state)
{
	fc_vmcfg_from_devices(&f->cfg, &f->vmm->dm);
	if (f->on_vm)
		f->on_vm(&f->vmm->vm);
	f->state = state;
}

static void snap_load(struct api_fc *f, const struct fc_snapshot_load *s, struct api_reply *rep)
{
	char why[600];
	/* mem_file_path alone: deprecated in Firecracker, which says so in a
	 * header and its log whatever the load's outcome. */
	if ((s->seen & (FC_LOAD_SEEN_MEM_FILE | FC_LOAD_SEEN_BACKEND)) == FC_LOAD_SEEN_MEM_FILE) {
		rep->deprecated = true;
		api_fc_log(f, "Warn", "PUT /snapshot/load: mem_file_path field is deprecated.");
	}
	if (f->state != FC_NOT_STARTED)
		return api_reply_fault(rep, 400,
				       "The requested operation is not supported after starting "
				       "the microVM.");
	if (f->configured)
		return api_reply_fault(rep, 400, LOAD_LATE);
	const char *mem = snap_mem_path(s, rep);
	if (!mem)
		return;
	int status;
	struct vmm_config base;
	struct vmm_net_override ov[FC_MAX_NETS];
	api_fc_restore_base(f, s->network_overrides, s->nr_network_overrides, ov, &base);
	/* enable_diff_snapshots: Firecracker's older name of the same switch */
	base.track_dirty_pages = s->track_dirty_pages || s->enable_diff_snapshots;
	if (vmm_snapshot_load(f->vmm, &base, s->snapshot_path, mem, s->resume_vm, f->start_ns,
			      &status, why, sizeof(why)) < 0) {
		api_fc_log(f, "Error", "Load snapshot error: %s", why);
		return api_reply_fault(rep, 400, "Load snapshot error: %s", why);
	}
	api_fc_restored(f, s->resume_vm ? FC_RUNNING : FC_PAUSED);
	api_fc_log(f, "Info", "Loaded the microVM from %s (%s).", s->snapshot_path,
		   s->resume_vm ? "running" : "paused");
	api_reply_none(rep);
}

void api_fc_snapshot(struct api_fc *f, const struct api_req *r, struct api_reply *rep)
{
	if (r->op == OP_SNAPSHOT_CREATE)
		snap_create(f, &r->u.snap_create, rep);
	else
		snap_load(f, &r->u.snap_load, rep);
}
