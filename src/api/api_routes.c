// SPDX-License-Identifier: Apache-2.0
/* One table of routes: method, path (with an {id} or not), the operation
 * and the JSON object its body holds; then the device kinds' endpoints
 * from their rows (devices/dev_api.h). Errors use Firecracker's words. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_req.h"

struct route {
	enum api_method method;
	const char *path; /* "/drives/" with an id after it when id_field */
	enum api_op op;
	const struct api_object *obj; /* NULL: no body */
	const char *id_field;	      /* the body field the path's id must equal */
};

static const struct route routes[] = {
    {API_GET, "/", OP_INFO, NULL, NULL},
    {API_GET, "/version", OP_VERSION, NULL, NULL},
    {API_PUT, "/boot-source", OP_BOOT, &fc_boot_obj, NULL},
    {API_GET, "/machine-config", OP_MACHINE_GET, NULL, NULL},
    {API_PUT, "/machine-config", OP_MACHINE_PUT, &fc_machine_obj, NULL},
    {API_PATCH, "/machine-config", OP_MACHINE_PATCH, &fc_machine_obj, NULL},
    {API_PUT, "/actions", OP_ACTION, &fc_action_obj, NULL},
    {API_PATCH, "/vm", OP_VM, &fc_vm_state_obj, NULL},
    {API_PUT, "/metrics", OP_METRICS, &fc_metrics_obj, NULL},
    {API_PUT, "/logger", OP_LOGGER, &fc_logger_obj, NULL},
    {API_GET, "/vm/config", OP_VM_CONFIG, NULL, NULL},
    {API_GET, "/stats", OP_STATS, NULL, NULL},
    {API_PUT, "/snapshot/create", OP_SNAPSHOT_CREATE, &fc_snapshot_create_obj, NULL},
    {API_PUT, "/snapshot/load", OP_SNAPSHOT_LOAD, &fc_snapshot_load_obj, NULL},
    {API_PUT, "/migration/receive", OP_MIG_RECEIVE, &fc_mig_receive_obj, NULL},
    {API_PUT, "/migration/send", OP_MIG_SEND, &fc_mig_send_obj, NULL},
};

void api_reply_fault(struct api_reply *rep, int status, const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	struct json_object *o = json_object_new_object();
	if (o)
		json_object_object_add(o, "fault_message", json_object_new_string(msg));
	api_reply_json(rep, o);
	rep->status = status;
}

void api_reply_json(struct api_reply *rep, struct json_object *o)
{
	rep->status = 200;
	rep->ctype = "application/json";
	rep->body = NULL;
	rep->len = 0;
	if (o) {
		size_t n;
		const char *s = json_object_to_json_string_length(
		    o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
		rep->body = s ? strndup(s, n) : NULL;
		rep->len = rep->body ? n : 0;
		json_object_put(o);
	}
	if (!rep->body)
		rep->status = 500;
}

void api_reply_none(struct api_reply *rep)
{
	/* A Deprecation header set before the reply stays (api_reply_json
	 * and api_reply_fault keep it too). */
	*rep = (struct api_reply){.status = 204, .deprecated = rep->deprecated};
}

/* The id of an object behind the path (body_id: the body's, NULL if it
 * has none): Firecracker's checks on it, then the body's id must be the
 * same. */
static int route_id(const char *id, const char *body_id, struct api_reply *rep)
{
	if (!*id) {
		api_reply_fault(rep, 400, "The ID cannot be empty.");
		return 1;
	}
	if (!fc_id_ok(id)) {
		api_reply_fault(rep, 400,
				"API Resource IDs can only contain alphanumeric "
				"characters and underscores.");
		return 1;
	}
	if (!body_id || strcmp(body_id, id)) {
		api_reply_fault(rep, 400,
				"The id from the path does not match the id from the body!");
		return 1;
	}
	return 0;
}

static int body_fault(struct api_reply *rep, const char *why)
{
	api_reply_fault(
	    rep, 400, "An error occurred when deserializing the json body of a request: %s.", why);
	return 1;
}

/* Whether path is a kind's route with this suffix; a collection's, its
 * route and an id ("/drives/ID", or "/drives" alone, whose id is then
 * refused as empty). */
static bool kind_path(const struct dm_kind *k, const char *suffix, const char *path)
{
	size_t n = strlen(k->api->route);
	if (!suffix || strncmp(path, k->api->route, n))
		return false;
	return k->api->max ? !path[n] || path[n] == '/' : !strcmp(path + n, suffix);
}

/* A device kind's endpoint (devices/dev_api.h): PUT of its resource, and
 * where the kind has them GET, PATCH of the running device and GET of its
 * statistics. The kind, the operation and the PATCH's index into req;
 * false if path is none of them. */
static bool route_kind_find(enum api_method m, const char *path, struct api_req *req)
{
	for (size_t i = 0; i < dm_nr_kinds; i++) {
		const struct dev_api *a = dm_kinds[i]->api;
		bool found = true;
		if (!a)
			continue;
		if (m == API_PUT && kind_path(dm_kinds[i], "", path))
			req->op = OP_KIND_PUT;
		else if (m == API_GET && a->get && kind_path(dm_kinds[i], "", path))
			req->op = OP_KIND_GET;
		else if (m == API_GET && a->stats.map &&
			 kind_path(dm_kinds[i], a->stats.suffix, path))
			req->op = OP_KIND_STATS;
		else
			found = false;
		for (int p = 0; !found && m == API_PATCH && p < DEV_API_PATCHES_MAX; p++)
			if (a->patch[p].schema &&
			    kind_path(dm_kinds[i], a->patch[p].suffix, path)) {
				req->op = OP_KIND_PATCH;
				req->patch = p;
				found = true;
			}
		if (found) {
			req->kind = dm_kinds[i];
			return true;
		}
	}
	return false;
}

/* A device kind's endpoint: a PUT's body by the kind's own table, a
 * PATCH's by its own; a collection's id from the path, as the body's
 * (its table's first field). */
static int route_kind(enum api_method m, const char *path, struct api_req *req, const char *body,
		      size_t len, struct api_reply *rep)
{
	char why[480];
	if (req->op != OP_KIND_PUT && req->op != OP_KIND_PATCH)
		return 0;
	if (!len) {
		api_reply_fault(rep, 400, "Empty %s request.", m == API_PUT ? "PUT" : "PATCH");
		return 1;
	}
	int r = req->op == OP_KIND_PUT
		    ? fc_res_fill_text(req->kind, body, len, &req->u.res, why, sizeof(why))
		    : fc_patch_fill_text(&req->kind->api->patch[req->patch], body, len, &req->u.res,
					 why, sizeof(why));
	if (r < 0)
		return body_fault(rep, why);
	size_t n = strlen(req->kind->api->route);
	if (req->kind->api->max)
		return route_id(path[n] ? path + n + 1 : "", req->u.res.v[0].s, rep);
	return 0;
}

static bool route_match(const struct route *t, const char *path)
{
	size_t n = strlen(t->path);
	if (!t->id_field)
		return !strcmp(path, t->path);
	/* "/drives/ID", and "/drives" alone, whose id is then refused as empty */
	return !strncmp(path, t->path, n) || (!strncmp(path, t->path, n - 1) && !path[n - 1]);
}

int api_route(enum api_method m, const char *mname, const char *url, const char *body, size_t len,
	      struct api_req *req, struct api_reply *rep)
{
	char path[API_URL_MAX + 1];
	snprintf(path, sizeof(path), "%.*s", (int)strcspn(url, "?"), url);
	size_t plen = strlen(path);
	if (plen > 1 && path[plen - 1] == '/')
		path[--plen] = '\0';
	memset(req, 0, sizeof(*req));
	const struct route *r = NULL;
	for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]) && !r; i++)
		if (routes[i].method == m && route_match(&routes[i], path))
			r = &routes[i];
	/* Firecracker's log words: "Put request on \"/boot-source\"". */
	snprintf(req->desc, sizeof(req->desc), "%c%.6s request on \"%.60s\"", mname[0], mname + 1,
		 path);
	for (char *d = req->desc + 1; *d && *d != ' '; d++)
		*d = (char)tolower((unsigned char)*d);
	if (!r && route_kind_find(m, path, req))
		return route_kind(m, path, req, body, len, rep);
	if (!r) {
		api_reply_fault(rep, 400, "Invalid request method and/or path: %s %s.", mname,
				path);
		return 1;
	}
	req->op = r->op;
	if (!r->obj)
		return 0;
	if (!len) {
		api_reply_fault(rep, 400, "Empty %s request.", m == API_PUT ? "PUT" : "PATCH");
		return 1;
	}
	char why[480];
	if (r->op == OP_MACHINE_PUT || r->op == OP_MACHINE_PATCH)
		fc_machine_defaults(&req->u.machine);
	/* PATCH /machine-config: every field optional, merged by the mask. */
	struct api_object patch;
	const struct api_object *obj = r->obj;
	struct api_field fields[16];
	if (r->op == OP_MACHINE_PATCH) {
		patch = *r->obj;
		for (size_t i = 0; i < patch.n && i < 16; i++) {
			fields[i] = patch.fields[i];
			fields[i].flags &= ~AF_REQUIRED;
		}
		patch.fields = fields;
		obj = &patch;
		req->u.machine.seen = 0;
	}
	if (api_json_fill_text(obj, body, len, &req->u, why, sizeof(why)) < 0)
		return body_fault(rep, why);
	if (r->id_field) {
		/* the id is each table's first field */
		const struct api_field *f = &r->obj->fields[0];
		return route_id(
		    plen < strlen(r->path) ? "" : path + strlen(r->path),
		    strcmp(f->name, r->id_field) ? NULL : (const char *)&req->u + f->off, rep);
	}
	return 0;
}
