// SPDX-License-Identifier: Apache-2.0
/* A device kind's Firecracker API resource, as data the kind's folder
 * keeps and its row (the folder's *_kind.c) names: the route, the section of
 * --config-file and GET /vm/config, and a table mapping each JSON field
 * (Firecracker's name and serde type) onto a key of the kind's own
 * key=value option table. The API layer (api/api_kind*.c) parses a PUT
 * body and a config-file section by this table, turns it into the spec
 * the command-line option takes (so one parser and one check decide
 * both), and writes /vm/config from it; where the kind says, it also
 * shows the resource (GET), changes the running device (PATCH: its
 * dev_ops.update, new rate limits, a new medium) and shows its statistics
 * (its counters, named by the kind's map). A resource is the VM's one
 * device of the kind, or a collection of them keyed by an id in the route
 * (Firecracker's drives and network interfaces: max). A device never sees
 * a request, and nothing outside the folder names the kind's fields: the
 * kind's few hooks get the parsed values (struct dev_api_res). */
#ifndef SKIFF_DEV_API_H
#define SKIFF_DEV_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum dev_api_type {
	DEV_API_STR,	      /* a string: key=VALUE (no ',' in it), or apart */
	DEV_API_UINT,	      /* an unsigned integer from min up to max (serde's u8..u64) */
	DEV_API_BOOL,	      /* key=on|off */
	DEV_API_RATE_LIMITER, /* Firecracker's RateLimiter: KEYbw=, KEYops= */
	DEV_API_IGNORED,      /* a string taken and dropped (vsock_id) */
	DEV_API_REFUSED,      /* a boolean skiff has not: true is refused */
	/* skiff's own: "skiff_options", more keys of the option table
	 * ("backend=vhost"), after the others; GET shows the keys a spec
	 * has that no other field takes. At most one per table. */
	DEV_API_OPTIONS,
	DEV_API_FLAG, /* a boolean: true is the key alone ("ro"), false nothing */
	/* A string, one of values (the kind's check refuses others): key=
	 * the spec value at the same place ("Async": aio=io_uring). */
	DEV_API_ENUM,
};

#define DEV_API_REQUIRED 1u
/* A string taken whole, apart from the spec (a path may hold a comma):
 * the devmgr_arg's key and value. At most one per table. In a PATCH of
 * a collection's entry: the device's new medium (dev_ops.replace). */
#define DEV_API_APART 2u
/* With DEV_API_REQUIRED: required of a Firecracker body only. A body with
 * skiff_options may leave it out, and the option table decides (vsock's
 * uds_path, which backend=vhost does without). */
#define DEV_API_UNLESS_OPTIONS 4u
/* Shown as null when not given (serde's Option of an integer). */
#define DEV_API_NULL 8u
/* A collection's id (a string, the table's first field): the route's
 * ROUTE/ID must name it, and the devmgr_arg's id. */
#define DEV_API_ID 16u
/* A boolean: the entry that has it true is the VM's boot device, built
 * first of its kind (Firecracker's is_root_device: /dev/vda); the kind's
 * boot_args say what the command line gets. */
#define DEV_API_BOOT 32u

struct dev_api_field {
	const char *name; /* Firecracker's: "guest_cid" */
	enum dev_api_type type;
	const char *key; /* the option table's key ("cid"); a rate limiter's prefix; NULL: none */
	unsigned int flags;
	uint64_t max;	    /* DEV_API_UINT */
	uint64_t min;	    /* DEV_API_UINT */
	const char *expect; /* serde's words for a bad value, if not the type's */
	const char *dflt;   /* DEV_API_STR, DEV_API_ENUM: stored when not given */
	size_t size;	    /* a string's room with its NUL (0: DEV_API_STR_MAX) */
	unsigned int dir;   /* DEV_API_RATE_LIMITER: dev_ops.limit's DEV_RL_RX or _TX */
	const char *const *values, *const *spec_values; /* DEV_API_ENUM, NULL-ended */
};

#define DEV_API_FIELDS_MAX 12
#define DEV_API_STR_MAX	   1024

/* The parsed values a kind's hooks get. Firecracker's TokenBucket
 * (tokens, ms; given but size or refill_time 0: off) and RateLimiter (a
 * bucket not given is off at PUT, unchanged at PATCH). */
struct dev_api_bucket {
	int64_t size, one_time_burst, refill_time;
	uint32_t seen;
};
struct dev_api_rl {
	struct dev_api_bucket bandwidth, ops;
	uint32_t seen; /* bit 0 bandwidth, bit 1 ops: RL_BYTES, RL_OPS */
};
/* Field i of a resource is v[i], by its type; seen bit i: given. */
struct dev_api_val {
	char s[DEV_API_STR_MAX];
	int64_t i;
	bool b;
	struct dev_api_rl rl;
};
struct dev_api_res {
	struct dev_api_val v[DEV_API_FIELDS_MAX];
	uint32_t seen;
};

/* A PATCH of the running device (before the start it is refused, in
 * Firecracker's words): ROUTE and suffix (a collection's: ROUTE/ID), a
 * body of these fields (each also the resource's field of that name). A
 * one-device resource's become a spec of the option table's keys for the
 * device's dev_ops.update; a collection entry's rate limiters go to
 * dev_ops.limit and its DEV_API_APART string to dev_ops.replace. On
 * success the configured resource takes the new values. */
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

	/* A collection: up to max entries, PUT ROUTE/ID adds or replaces one
	 * (full: the fault's words when there is no room), the section is a
	 * list (required: --config-file must give it). A PATCH of an entry
	 * not configured is "FAULT: not_found"; of its medium, one the
	 * device refuses "FAULT: replace_words: BackingFile(why, PATH)". */
	unsigned int max;
	bool required;
	bool hide_empty;     /* GET /vm/config leaves the list out while empty */
	bool check_at_start; /* a PUT's spec is checked when the VM is built, not at PUT */
	const char *full, *not_found, *replace_words;
	const char *noun; /* the log's "Drive ID now has PATH" */
	/* Optional: an entry's own checks beyond types (put: a PUT's, which
	 * may look at the host, as Firecracker opens files at PUT; else the
	 * config file's): 0, or -1 with the whole fault message. */
	int (*check)(const struct dev_api_res *r, bool put, char *err, size_t errlen);
	/* Optional: an entry against the others (set[0..n), set[at] the one
	 * of the same id or at == n): 0, or -1 with the whole message, and
	 * *drop when the old entry of the id goes too (Firecracker's net). */
	int (*check_set)(const struct dev_api_res *set, unsigned int n, unsigned int at,
			 const struct dev_api_res *r, bool *drop, char *err, size_t errlen);
	/* Optional: the kernel command line's words for the boot entry
	 * (DEV_API_BOOT): "root=/dev/vda rw". */
	void (*boot_args)(const struct dev_api_res *r, char *out, size_t len);
};

#define DEV_API_TABLE(tbl) .fields = (tbl), .nr_fields = sizeof(tbl) / sizeof((tbl)[0])

#endif
