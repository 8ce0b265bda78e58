// SPDX-License-Identifier: Apache-2.0
/* A device kind's Firecracker API resource, as data the kind's folder
 * keeps and its row (vmm/devmgr_kinds.c) names: the route, the section of
 * --config-file and GET /vm/config, and a table mapping each JSON field
 * (Firecracker's name and serde type) onto a key of the kind's own
 * key=value option table. The API layer (api/api_kind.c) parses a PUT
 * body and a config-file section by this table, turns it into the spec
 * the command-line option takes (so one parser and one check decide
 * both), and writes /vm/config from it; where the kind says, it also
 * shows the resource (GET), changes the running device (PATCH: its
 * dev_ops.update) and shows its statistics (its counters, named by the
 * kind's map). No request code here: a device never sees a request, and
 * nothing outside the folder names the kind's fields. */
#ifndef SKIFF_DEV_API_H
#define SKIFF_DEV_API_H

#include <stdbool.h>
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

/* A PATCH of the running device (before the start it is refused, in
 * Firecracker's words): ROUTE and suffix, a body of these fields (each
 * also the resource's field of that name), turned into a spec of the
 * option table's keys for the device's dev_ops.update; on success the
 * configured resource takes the new values. */
struct dev_api_patch {
	const char *suffix; /* "" (ROUTE itself) or "/statistics" */
	const char *schema; /* Firecracker's definition: "BalloonUpdateConfig" */
	const struct dev_api_field *fields;
	size_t nr_fields;
};
#define DEV_API_PATCHES_MAX 2

/* One of a device's counters (dev_ops.counters: what, value) as the
 * fields of its statistics object: put(ctx, NAME, VALUE) for each (none:
 * not one of them). */
typedef void (*dev_api_put_fn)(void *ctx, const char *name, uint64_t value);
typedef void (*dev_api_stat_fn)(const char *what, uint64_t value, dev_api_put_fn put, void *ctx);

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

	/* Optional: the VM's one device of the kind, as it runs. GET ROUTE
	 * shows the configured resource (before the start too); without
	 * one, it and the rest answer "FAULT: missing". */
	bool get;
	const char *missing; /* "No balloon device found." */
	struct dev_api_patch patch[DEV_API_PATCHES_MAX];
	/* GET ROUTE + suffix, after the start: the device's counters through
	 * map, once the resource's integer field on is not 0 (else "FAULT:
	 * off"). */
	struct {
		const char *suffix, *on, *off;
		dev_api_stat_fn map;
	} stats;
};

#define DEV_API_TABLE(tbl) .fields = (tbl), .nr_fields = sizeof(tbl) / sizeof((tbl)[0])

#endif
