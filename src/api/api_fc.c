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

/* PUT of a device kind's resource (/entropy, /balloon, /vsock): checked
 * through the kind's option table now, as Firecracker builds the device
 * at PUT; a second PUT replaces the first (one per VM). A collection's
 * entry (/drives/ID) is api_fc_coll_put's. */
static void put_kind(struct api_fc *f, const struct api_req *r, struct api_reply *rep)
{
	if (r->kind->api->max)
		return api_fc_coll_put(f, r, rep);
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
	return op == OP_BOOT || op == OP_MACHINE_PUT || op == OP_MACHINE_PATCH ||
	       op == OP_METRICS || op == OP_LOGGER || op == OP_KIND_PUT;
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
