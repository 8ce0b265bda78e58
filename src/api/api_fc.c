// SPDX-License-Identifier: Apache-2.0
#include "api/api_fc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define POST_BOOT "The requested operation is not supported after starting the microVM."
#define PRE_BOOT  "The requested operation is not supported before starting the microVM."

static const char *const state_names[] = {"Not started", "Running", "Paused"};

static void info(struct api_fc *f, struct api_reply *rep)
{
	struct json_object *o = json_object_new_object();
	if (o) {
		json_object_object_add(o, "id", json_object_new_string("anonymous-instance"));
		json_object_object_add(o, "state", json_object_new_string(state_names[f->state]));
		json_object_object_add(o, "vmm_version", json_object_new_string(FC_VERSION));
		json_object_object_add(o, "app_name", json_object_new_string(FC_APP_NAME));
	}
	api_reply_json(rep, o);
}

/* Firecracker opens files when they are configured, so a missing one is a
 * 400 at once, not at InstanceStart. */
static int file_ok(const char *path, bool write, char *why, size_t len)
{
	if (access(path, write ? R_OK | W_OK : R_OK) == 0)
		return 0;
	snprintf(why, len, "%m (os error %d)", errno);
	return -1;
}

static void put_boot(struct api_fc *f, const struct fc_boot *b, struct api_reply *rep)
{
	char why[300];
	if (file_ok(b->kernel_image_path, false, why, sizeof(why)) < 0)
		return api_reply_fault(rep, 400,
				       "Boot source error: The kernel file cannot be "
				       "opened: %s",
				       why);
	if (b->initrd_path[0] && file_ok(b->initrd_path, false, why, sizeof(why)) < 0)
		return api_reply_fault(rep, 400,
				       "Boot source error: The initrd file cannot be "
				       "opened due to invalid path or invalid "
				       "permissions. %s",
				       why);
	f->cfg.boot = *b;
	f->cfg.has_boot = true;
	api_reply_none(rep);
}

static void put_drive(struct api_fc *f, const struct fc_drive *d, struct api_reply *rep)
{
	char why[400];
	if (fc_drive_check(d, why, sizeof(why)) < 0)
		return api_reply_fault(rep, 400, "%s", why);
	if (file_ok(d->path_on_host, !d->is_read_only, why, sizeof(why)) < 0)
		return api_reply_fault(rep, 400,
				       "Drive config error: Unable to create the virtio "
				       "block device: Error manipulating the backing "
				       "file: %s",
				       why);
	char spec[FC_DISK_SPEC_MAX];
	fc_drive_spec(d, spec, sizeof(spec));
	/* skiff_options through --disk's own table; the path apart, whole. */
	struct devmgr_arg a = {"disk", spec, "path", d->path_on_host, d->drive_id};
	if (devmgr_check_arg(&a, !f->base.no_ioeventfd, why, sizeof(why)) < 0)
		return api_reply_fault(rep, 400, "Drive config error: %s", why);
	if (fc_vmcfg_put_drive(&f->cfg, d, why, sizeof(why)) < 0)
		return api_reply_fault(rep, 400, "%s", why);
	api_reply_none(rep);
}

static void put_net(struct api_fc *f, const struct fc_net *n, struct api_reply *rep)
{
	char why[400], spec[FC_NET_SPEC_MAX];
	if (fc_net_check(n, why, sizeof(why)) < 0)
		return api_reply_fault(rep, 400, "%s", why);
	fc_net_spec(n, spec, sizeof(spec));
	struct devmgr_arg a = {"net", spec, "tap", n->host_dev_name, n->iface_id};
	if (devmgr_check_arg(&a, !f->base.no_ioeventfd, why, sizeof(why)) < 0)
		return api_reply_fault(rep, 400, "Network config error: %s", why);
	if (fc_vmcfg_put_net(&f->cfg, n, why, sizeof(why)) < 0)
		return api_reply_fault(rep, 400, "%s", why);
	api_reply_none(rep);
}

/* PUT of a device kind's resource (/entropy, /balloon, /vsock): checked
 * through the kind's option table now, as Firecracker builds the device
 * at PUT; a second PUT replaces the first (one per VM). */
static void put_kind(struct api_fc *f, const struct api_req *r, struct api_reply *rep)
{
	char why[600];
	/* A field taken and dropped (vsock_id) is deprecated in Firecracker,
	 * which says so in a header and its log whatever the outcome. */
	const struct dev_api *a = r->kind->api;
	for (size_t i = 0; i < a->nr_fields; i++)
		if (a->fields[i].type == DEV_API_IGNORED && (r->u.res.seen >> i) & 1u) {
			rep->deprecated = true;
			api_fc_log(f, "Warn", "PUT %s: %s field is deprecated.", a->route,
				   a->fields[i].name);
		}
	struct fc_res_cfg *s = fc_vmcfg_res(&f->cfg, r->kind);
	if (!s)
		return api_reply_fault(rep, 500, "no room for %s", r->kind->option);
	if (fc_res_check(r->kind, &r->u.res, !f->base.no_ioeventfd,
			 (uint64_t)f->cfg.machine.mem_size_mib, why, sizeof(why)) < 0)
		return api_reply_fault(rep, 400, "%s", why);
	s->r = r->u.res;
	s->has = true;
	api_reply_none(rep);
}

static void machine(struct api_fc *f, const struct api_req *r, struct api_reply *rep)
{
	char why[400];
	struct fc_machine m = r->u.machine;
	if (r->op == OP_MACHINE_PATCH) {
		m = f->cfg.machine;
		api_json_merge(&fc_machine_obj, &m, &r->u.machine);
	}
	if (fc_machine_check(&m, why, sizeof(why)) < 0)
		return api_reply_fault(rep, 400, "%s", why);
	f->cfg.machine = m;
	api_reply_none(rep);
	/* seen bit 5: machine_f's cpu_template (api_model.c), deprecated in
	 * Firecracker, which says so in a header and its log. */
	if (r->u.machine.seen & (1u << 5)) {
		rep->deprecated = true;
		api_fc_log(f, "Warn", "%s /machine-config: cpu_template field is deprecated.",
			   r->op == OP_MACHINE_PATCH ? "PATCH" : "PUT");
	}
}

static void patch_vm(struct api_fc *f, const struct fc_vm_state *s, struct api_reply *rep)
{
	bool pause = !strcmp(s->state, "Paused");
	if (!pause && strcmp(s->state, "Resumed"))
		return api_reply_fault(
		    rep, 400,
		    "An error occurred when deserializing the json body of a "
		    "request: unknown variant `%s`, expected `Paused` or `Resumed`.",
		    s->state);
	if (f->state == FC_NOT_STARTED)
		return api_reply_fault(rep, 400, PRE_BOOT);
	if ((pause ? vmm_pause(f->vmm) : vmm_resume(f->vmm)) < 0)
		return api_reply_fault(rep, 400, "Internal VMM error: cannot %s the vCPUs.",
				       pause ? "pause" : "resume");
	f->state = pause ? FC_PAUSED : FC_RUNNING;
	api_fc_log(f, "Info", "The microVM is %s.", pause ? "paused" : "resumed");
	api_reply_none(rep);
}

static void action(struct api_fc *f, const struct fc_action *a, struct api_reply *rep)
{
	char why[600];
	if (!strcmp(a->action_type, "FlushMetrics")) {
		api_fc_flush_metrics(f);
		return api_reply_none(rep);
	}
	if (!strcmp(a->action_type, "InstanceStart")) {
		if (f->state != FC_NOT_STARTED)
			return api_reply_fault(rep, 400, POST_BOOT);
		if (api_fc_start(f, NULL, why, sizeof(why)) < 0)
			return api_reply_fault(rep, 400, "Start microvm error: %s", why);
		return api_reply_none(rep);
	}
	if (!strcmp(a->action_type, "SendCtrlAltDel")) {
		if (f->state == FC_NOT_STARTED)
			return api_reply_fault(rep, 400, PRE_BOOT);
		if (vmm_ctrl_alt_del(f->vmm) < 0)
			return api_reply_fault(rep, 400,
					       "Internal VMM error: cannot send "
					       "Ctrl-Alt-Del (i8042).");
		return api_reply_none(rep);
	}
	api_reply_fault(rep, 400,
			"An error occurred when deserializing the json body of a request: unknown "
			"variant `%s`, expected one of `FlushMetrics`, `InstanceStart`, "
			"`SendCtrlAltDel`.",
			a->action_type);
}

static bool pre_boot_only(enum api_op op)
{
	return op == OP_BOOT || op == OP_DRIVE_PUT || op == OP_NET_PUT || op == OP_MACHINE_PUT ||
	       op == OP_MACHINE_PATCH || op == OP_METRICS || op == OP_LOGGER || op == OP_VFIO_PUT ||
	       op == OP_KIND_PUT;
}

/* PATCH /drives path_on_host: the disk's new image (Firecracker opens it
 * at once and answers 400 if it cannot, the old one staying in use). */
static int patch_drive_path(struct api_fc *f, int i, const char *path, struct api_reply *rep)
{
	char why[400];
	const struct fc_drive *d = &f->cfg.drives[i];
	if (vmm_disk_replace(f->vmm, f->disk_index[i], path, why, sizeof(why)) < 0) {
		api_reply_fault(rep, 400,
				"Drive config error: Unable to patch the block device: "
				"BackingFile(%s, \"%s\")",
				why, path);
		return -1;
	}
	snprintf(f->cfg.drives[i].path_on_host, sizeof(f->cfg.drives[i].path_on_host), "%s", path);
	api_fc_log(f, "Info", "Drive %s now has %s.", d->drive_id, path);
	return 0;
}

/* A PATCH's rate limiter onto the running device (index-th of option,
 * direction dir), then into the configuration GET /vm/config shows. */
static int patch_limiter(struct api_fc *f, const char *option, unsigned int index, unsigned int dir,
			 struct fc_rate_limiter *cur, const struct fc_rate_limiter *rl,
			 struct api_reply *rep)
{
	char why[400];
	struct ratelimit_cfg c;
	unsigned int mask;
	if (!rl->seen)
		return 0; /* absent or {}: nothing changes */
	fc_rate_limiter_cfg(rl, &c, &mask);
	if (vmm_dev_limit(f->vmm, option, index, dir, &c, mask, why, sizeof(why)) < 0) {
		api_reply_fault(rep, 400, "%s config error: Unable to update the rate limiter: %s",
				strcmp(option, "disk") ? "Network" : "Drive", why);
		return -1;
	}
	fc_rate_limiter_merge(cur, rl);
	return 0;
}

/* Post-boot PATCHes: a drive's path_on_host and rate_limiter, an
 * interface's rx_rate_limiter and tx_rate_limiter. */
static void patch_post_boot(struct api_fc *f, const struct api_req *r, struct api_reply *rep)
{
	bool drive = r->op == OP_DRIVE_PATCH;
	const char *id = drive ? r->u.drive.drive_id : r->u.net.iface_id;
	int found = -1;
	for (int i = 0; drive && i < f->cfg.nr_drives; i++)
		if (!strcmp(f->cfg.drives[i].drive_id, id))
			found = i;
	for (int i = 0; !drive && i < f->cfg.nr_nets; i++)
		if (!strcmp(f->cfg.nets[i].iface_id, id))
			found = i;
	if (f->state == FC_NOT_STARTED)
		return api_reply_fault(rep, 400, PRE_BOOT);
	if (found < 0)
		return api_reply_fault(rep, 400,
				       drive ? "Drive config error: Unable to patch the "
					       "block device: Device not found. Please "
					       "verify the request arguments."
					     : "Network config error: Unable to update "
					       "the net device: Device not found");
	if (drive) {
		struct fc_drive *d = &f->cfg.drives[found];
		/* seen bit 1: drive_patch_f's path_on_host (api_model.c). */
		if ((r->u.drive.seen & 2u &&
		     patch_drive_path(f, found, r->u.drive.path_on_host, rep) < 0) ||
		    patch_limiter(f, "disk", f->disk_index[found], DEV_RL_RX, &d->rate_limiter,
				  &r->u.drive.rate_limiter, rep) < 0)
			return;
	} else {
		struct fc_net *n = &f->cfg.nets[found];
		if (patch_limiter(f, "net", (unsigned int)found, DEV_RL_RX, &n->rx_rate_limiter,
				  &r->u.net.rx_rate_limiter, rep) < 0 ||
		    patch_limiter(f, "net", (unsigned int)found, DEV_RL_TX, &n->tx_rate_limiter,
				  &r->u.net.tx_rate_limiter, rep) < 0)
			return;
	}
	api_reply_none(rep);
}

static void dispatch(struct api_fc *f, const struct api_req *r, struct api_reply *rep)
{
	char why[600];
	switch (r->op) {
	case OP_INFO:
		return info(f, rep);
	case OP_VERSION: {
		struct json_object *o = json_object_new_object();
		if (o)
			json_object_object_add(o, "firecracker_version",
					       json_object_new_string(FC_VERSION));
		return api_reply_json(rep, o);
	}
	case OP_BOOT:
		return put_boot(f, &r->u.boot, rep);
	case OP_DRIVE_PUT:
		return put_drive(f, &r->u.drive, rep);
	case OP_NET_PUT:
		return put_net(f, &r->u.net, rep);
	case OP_DRIVE_PATCH:
	case OP_NET_PATCH:
		return patch_post_boot(f, r, rep);
	case OP_MACHINE_GET:
		return api_reply_json(rep, api_json_from(&fc_machine_obj, &f->cfg.machine));
	case OP_MACHINE_PUT:
	case OP_MACHINE_PATCH:
		return machine(f, r, rep);
	case OP_ACTION:
		return action(f, &r->u.action, rep);
	case OP_VM:
		return patch_vm(f, &r->u.vm, rep);
	case OP_METRICS:
		if (api_fc_metrics_open(f, &r->u.metrics, why, sizeof(why)) < 0)
			return api_reply_fault(rep, 400, "%s", why);
		return api_reply_none(rep);
	case OP_LOGGER:
		if (fc_logger_check(&r->u.logger, why, sizeof(why)) < 0 ||
		    api_fc_logger_open(f, &r->u.logger, why, sizeof(why)) < 0)
			return api_reply_fault(rep, 400, "%s", why);
		return api_reply_none(rep);
	case OP_VM_CONFIG:
		return api_reply_json(rep, fc_vmcfg_json(&f->cfg));
	case OP_STATS:
		*rep = (struct api_reply){.status = 200, .ctype = "text/plain"};
		rep->body = api_fc_stats_text(f, &rep->len);
		if (!rep->body)
			api_reply_fault(rep, 500, "out of memory");
		return;
	case OP_KIND_PUT:
		return put_kind(f, r, rep);
	case OP_KIND_GET:
	case OP_KIND_PATCH:
	case OP_KIND_STATS:
		return api_fc_kind(f, r, rep);
	case OP_VFIO_PUT:
		if (fc_vmcfg_put_vfio(&f->cfg, &r->u.vfio, why, sizeof(why)) < 0)
			return api_reply_fault(rep, 400, "%s", why);
		return api_reply_none(rep);
	case OP_SNAPSHOT_CREATE:
	case OP_SNAPSHOT_LOAD:
		return api_fc_snapshot(f, r, rep);
	case OP_MIG_RECEIVE:
	case OP_MIG_SEND:
		return api_fc_migration(f, r, rep);
	}
	api_reply_fault(rep, 500, "unknown operation");
}

void api_fc_handle(void *opaque, const struct api_req *r, struct api_reply *rep)
{
	struct api_fc *f = opaque;
	api_fc_log(f, "Info", "The API server received a %s.", r->desc);
	if (pre_boot_only(r->op) && f->state != FC_NOT_STARTED)
		return api_reply_fault(rep, 400, POST_BOOT);
	dispatch(f, r, rep);
	/* Firecracker's rule for /snapshot/load: the logger and metrics may
	 * come first, nothing boot-specific that was taken. */
	if (pre_boot_only(r->op) && r->op != OP_LOGGER && r->op != OP_METRICS && rep->status < 300)
		f->configured = true;
}
