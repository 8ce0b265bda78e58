// SPDX-License-Identifier: Apache-2.0
/* A device kind's Firecracker API resource, as data the kind's folder
 * keeps and its row (vmm/devmgr_kinds.c) names: the route, the section of
 * --config-file and GET /vm/config, and a table mapping each JSON field
 * (Firecracker's name and serde type) onto a key of the kind's own
 * key=value option table. The API layer (api/api_kind.c) parses a PUT
 * body and a config-file section by this table, turns it into the spec
 * the command-line option takes (so one parser and one check decide
 * both), and writes /vm/config from it. No code here: a device never sees
 * a request, and nothing outside the folder names the kind's fields. */
#ifndef SKIFF_DEV_API_H
#define SKIFF_DEV_API_H

#include <stddef.h>
#include <stdint.h>

enum dev_api_type {
	DEV_API_STR,	      /* a string: key=VALUE (no ',' in it), or apart */
	DEV_API_UINT,	      /* an unsigned integer up to max (serde's u8..u64) */
	DEV_API_BOOL,	      /* key=on|off */
	DEV_API_RATE_LIMITER, /* Firecracker's RateLimiter: KEYbw=, KEYops= */
	DEV_API_IGNORED,      /* a string taken and dropped (vsock_id) */
	DEV_API_REFUSED,      /* a boolean skiff has not: true is refused */
	/* skiff's own: "skiff_options", more keys of the option table
	 * ("backend=vhost"), after the others; GET shows the keys a spec
	 * has that no other field takes. At most one per table. */
	DEV_API_OPTIONS,
};

#define DEV_API_REQUIRED 1u
/* A string taken whole, apart from the spec (a path may hold a comma):
 * the devmgr_arg's key and value. At most one per table. */
#define DEV_API_APART 2u
/* With DEV_API_REQUIRED: required of a Firecracker body only. A body with
 * skiff_options may leave it out, and the option table decides (vsock's
 * uds_path, which backend=vhost does without). */
#define DEV_API_UNLESS_OPTIONS 4u

struct dev_api_field {
	const char *name; /* Firecracker's: "guest_cid" */
	enum dev_api_type type;
	const char *key; /* the option table's key ("cid"); a rate limiter's prefix */
	unsigned int flags;
	uint64_t max; /* DEV_API_UINT */
};

#define DEV_API_FIELDS_MAX 8

struct dev_api {
	const char *route;   /* "/vsock": PUT, pre-boot only; a second PUT replaces */
	const char *section; /* VmmConfig's key: "vsock" */
	const char *schema;  /* Firecracker's definition, for serde's messages */
	const char *fault;   /* the 400's prefix, Firecracker's words */
	const struct dev_api_field *fields;
	size_t nr_fields;
	/* Optional: the parsed spec against the machine (its memory in MiB),
	 * once machine-config is known: 0, or -1 with Firecracker's words. */
	int (*check_vm)(const void *spec, uint64_t mem_mib, char *err, size_t errlen);
};

#define DEV_API_TABLE(tbl) .fields = (tbl), .nr_fields = sizeof(tbl) / sizeof((tbl)[0])

#endif
