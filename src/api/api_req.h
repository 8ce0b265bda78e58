// SPDX-License-Identifier: Apache-2.0
/* A parsed API request (the API thread fills it from HTTP and JSON) and
 * its reply (the main thread's controller fills it). */
#ifndef SKIFF_API_REQ_H
#define SKIFF_API_REQ_H

#include <stdbool.h>
#include <stddef.h>

#include "api/api_http.h"
#include "api/api_model.h"

enum api_op {
	OP_INFO,
	OP_VERSION,
	OP_BOOT,
	OP_MACHINE_GET,
	OP_MACHINE_PUT,
	OP_MACHINE_PATCH,
	OP_ACTION,
	OP_VM,
	OP_METRICS,
	OP_LOGGER,
	OP_VM_CONFIG,
	OP_STATS,
	OP_KIND_PUT,   /* a device kind's resource: kind says which */
	OP_KIND_GET,   /* ... the configured resource */
	OP_KIND_PATCH, /* ... the running device: kind's api->patch[patch] */
	OP_KIND_STATS, /* ... the running device's statistics */
	OP_SNAPSHOT_CREATE,
	OP_SNAPSHOT_LOAD,
	OP_MIG_RECEIVE,
	OP_MIG_SEND,
};

struct api_req {
	enum api_op op;
	char desc[96];		    /* Put request on "/drives/rootfs", for the log */
	const struct dm_kind *kind; /* OP_KIND_* */
	int patch;		    /* OP_KIND_PATCH */
	union {
		struct fc_boot boot;
		struct fc_machine machine;
		struct fc_action action;
		struct fc_vm_state vm;
		struct fc_metrics metrics;
		struct fc_logger logger;
		struct dev_api_res res; /* OP_KIND_PUT, OP_KIND_PATCH */
		struct fc_snapshot_create snap_create;
		struct fc_snapshot_load snap_load;
		struct fc_mig_receive mig_receive;
		struct fc_mig_send mig_send;
	} u;
};

struct api_reply {
	int status;
	const char *ctype;
	char *body; /* malloc'ed, or NULL */
	size_t len;
	bool deprecated; /* a deprecated field was used: "Deprecation: true" */
};

/* Routes a request: 0 with req filled for the controller, or 1 with the
 * reply already made (a bad path, method or body: 400). */
int api_route(enum api_method m, const char *mname, const char *url, const char *body, size_t len,
	      struct api_req *req, struct api_reply *rep);

/* Replies: {"fault_message": msg} with status; a JSON object (taken); no
 * body (204). */
void api_reply_fault(struct api_reply *rep, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void api_reply_json(struct api_reply *rep, struct json_object *o);
void api_reply_none(struct api_reply *rep);

#endif
