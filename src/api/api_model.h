// SPDX-License-Identifier: Apache-2.0
/* Firecracker's API objects as C structs, each with the field table that
 * parses and prints it (api_model.c). Names are Firecracker's; fields
 * starting with skiff_ are skiff's own (docs/CLI.md: "Driving skiff from
 * an orchestrator"). */
#ifndef SKIFF_API_MODEL_H
#define SKIFF_API_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "api/api_json.h"
#include "core/ratelimit.h"
#include "vmm/devmgr.h"

#define FC_ID_MAX    64
#define FC_PATH_MAX  1024
#define FC_ARGS_MAX  2048
#define FC_SKIFF_MAX 256
#define FC_MAX_NETS  8 /* a snapshot load's network overrides */
/* Room for a spec's rate limiter keys: 4 of ",tx-bw=SIZE:MS:BURST". */
#define FC_RL_SPEC_MAX 320

struct fc_boot {
	char kernel_image_path[FC_PATH_MAX], initrd_path[FC_PATH_MAX], boot_args[FC_ARGS_MAX];
	uint32_t seen;
};

struct fc_machine {
	int64_t vcpu_count, mem_size_mib;
	bool smt, track_dirty_pages;
	char huge_pages[8], cpu_template[16];
	int64_t skiff_iothreads;
	bool skiff_cpu_pm;	    /* --cpu-pm on */
	int64_t skiff_halt_poll_us; /* --halt-poll USEC, if given */
	uint32_t seen;
};
/* machine-config's seen bits of skiff_cpu_pm and skiff_halt_poll_us: not
 * given, the command line's --cpu-pm and --halt-poll apply. */
#define FC_MACHINE_SEEN_CPU_PM	  (1u << 7)
#define FC_MACHINE_SEEN_HALT_POLL (1u << 8)

struct fc_logger {
	char log_path[FC_PATH_MAX], level[16], module[FC_ID_MAX];
	bool show_level, show_log_origin;
	uint32_t seen;
};

struct fc_metrics {
	char metrics_path[FC_PATH_MAX];
	uint32_t seen;
};

struct fc_action {
	char action_type[32];
	uint32_t seen;
};

struct fc_vm_state {
	char state[16];
	uint32_t seen;
};

/* SnapshotCreateParams: PUT /snapshot/create. */
struct fc_snapshot_create {
	char snapshot_type[8]; /* "Full" (the default) or "Diff" */
	char snapshot_path[FC_PATH_MAX], mem_file_path[FC_PATH_MAX];
	uint32_t seen;
};

/* MemoryBackend and SnapshotLoadParams: PUT /snapshot/load. */
struct fc_mem_backend {
	char backend_type[8]; /* "File" or "Uffd" */
	char backend_path[FC_PATH_MAX];
	uint32_t seen;
};

/* NetworkOverride: the tap a restored card opens instead of its own. */
struct fc_net_override {
	char iface_id[FC_ID_MAX], host_dev_name[FC_ID_MAX];
	uint32_t seen;
};

struct fc_snapshot_load {
	char snapshot_path[FC_PATH_MAX], mem_file_path[FC_PATH_MAX];
	struct fc_mem_backend mem_backend;
	bool resume_vm, track_dirty_pages, enable_diff_snapshots;
	struct fc_net_override network_overrides[FC_MAX_NETS];
	uint32_t nr_network_overrides;
	uint32_t seen;
};
/* skiff_allow of PUT /migration/receive (vmm/vmm_mig_allow.h): the
 * directories the incoming state's paths must lie in, the taps its cards
 * may open. Absolute, not empty, bounded. */
#define FC_ALLOW_MAX	  64
#define FC_ALLOW_PATH_MAX 512
#define FC_ALLOW_TAP_MAX  16 /* IFNAMSIZ */
struct fc_skiff_allow {
	char paths[FC_ALLOW_MAX][FC_ALLOW_PATH_MAX];
	uint32_t nr_paths;
	char taps[FC_ALLOW_MAX][FC_ALLOW_TAP_MAX];
	uint32_t nr_taps;
	uint32_t seen;
};
/* PUT /migration/receive and /migration/send, as Cloud Hypervisor's
 * ReceiveMigrationData and SendMigrationData (docs/MIGRATION.md), and
 * skiff's own skiff_allow. */
struct fc_mig_receive {
	char receiver_url[FC_PATH_MAX];
	struct fc_net_override network_overrides[FC_MAX_NETS];
	uint32_t nr_network_overrides;
	struct fc_skiff_allow skiff_allow;
	uint32_t seen;
};
/* fc_mig_receive's seen bit of skiff_allow (mig_receive_f's order) */
#define FC_MIG_SEEN_ALLOW (1u << 2)
struct fc_mig_send {
	char destination_url[FC_PATH_MAX];
	uint32_t seen;
};

/* seen bits of fc_snapshot_load (snapshot_load_f's order, api_model.c) */
#define FC_LOAD_SEEN_MEM_FILE (1u << 1)
#define FC_LOAD_SEEN_BACKEND  (1u << 2)

/* A device kind's resource (its row's dev_api: struct dev_api_res, field
 * i of the kind's table is v[i]): one device's, or a collection's
 * entries. */
struct fc_res_cfg {
	bool has;
	struct dev_api_res r;
};
#define FC_RES_MAX  8  /* kinds with a resource */
#define FC_COLL_MAX 16 /* a collection's entries (dev_api.max at most) */
struct fc_coll {
	struct dev_api_res item[FC_COLL_MAX];
	unsigned int n;
};
#define FC_COLLS 3 /* kinds with a collection */
/* A resource as a spec: its strings but the one apart, rate limiters. */
#define FC_RES_SPEC_MAX (FC_PATH_MAX + 4 * FC_RL_SPEC_MAX)

/* Everything configured: what GET /vm/config shows and InstanceStart boots. */
struct fc_vmcfg {
	bool has_boot, has_logger, has_metrics;
	struct fc_boot boot;
	struct fc_machine machine;
	struct fc_logger logger;
	struct fc_metrics metrics;
	struct fc_res_cfg res[FC_RES_MAX]; /* by the kinds' rows: fc_vmcfg_res */
	struct fc_coll coll[FC_COLLS];	   /* the collections': fc_vmcfg_coll */
};

extern const struct api_object fc_boot_obj, fc_machine_obj, fc_logger_obj, fc_metrics_obj,
    fc_action_obj, fc_vm_state_obj, fc_token_bucket_obj, fc_rate_limiter_obj,
    fc_snapshot_create_obj, fc_snapshot_load_obj, fc_mig_receive_obj, fc_mig_send_obj,
    fc_skiff_allow_obj;

/* Firecracker's defaults: 1 vCPU, 128 MiB, no SMT; one I/O thread. */
void fc_machine_defaults(struct fc_machine *m);
void fc_vmcfg_init(struct fc_vmcfg *c);
/* Checks a filled object beyond types (ids, enums, values skiff does not
 * support). 0, or -1 with Firecracker's message in err. */
int fc_machine_check(const struct fc_machine *m, char *err, size_t errlen);
/* The part of fc_machine_check about smt, huge_pages and cpu_template. */
int fc_machine_check_features(const struct fc_machine *m, char *err, size_t errlen);
int fc_logger_check(const struct fc_logger *l, char *err, size_t errlen);
/* Adds or replaces (same id) in the configuration; -1 when full. */
/* The buckets a RateLimiter gives, as the devices take them: their bits
 * (1 << RL_*) in *mask. */
void fc_rate_limiter_cfg(const struct dev_api_rl *r, struct ratelimit_cfg *c, unsigned int *mask);
/* A PATCH's RateLimiter into the configured one: the buckets it gives. */
void fc_rate_limiter_merge(struct dev_api_rl *dst, const struct dev_api_rl *src);
/* ",KEY=..." spec keys for the limiter's enabled buckets (prefix "" for a
 * disk's bw= / ops=, "rx-" / "tx-" for a card's). */
void fc_rate_limiter_spec(const struct dev_api_rl *r, const char *prefix, char *out, size_t len);
/* GET /vm/config's FullVmConfiguration. */
struct json_object *fc_vmcfg_json(const struct fc_vmcfg *c);
/* Firecracker's --config-file: the same objects under "boot-source",
 * "drives", ... 0 or -1 with one line in err. */
int fc_vmcfg_parse_file(struct fc_vmcfg *c, const char *text, size_t len, char *err, size_t errlen);
/* The kinds' resources (api_kind.c). The kind behind a PUT route or a
 * config-file section, or NULL. */
const struct dm_kind *fc_kind_by_route(const char *path);
const struct dm_kind *fc_kind_by_section(const char *key);
/* The kind's slot in the configuration (NULL: the kind has none, or a
 * collection); a collection's (NULL: the kind has none). */
struct fc_res_cfg *fc_vmcfg_res(struct fc_vmcfg *c, const struct dm_kind *k);
struct fc_coll *fc_vmcfg_coll(struct fc_vmcfg *c, const struct dm_kind *k);
int fc_coll_slot(const struct dm_kind *k); /* its index into coll[], or -1 */
/* An entry's id; the index of the entry with this id, or -1. */
const char *fc_coll_id(const struct dev_api_res *r);
int fc_coll_find(const struct fc_coll *c, const char *id);
/* Adds or replaces (same id) an entry, checked against the others (the
 * kind's check_set) and the room: 0, or -1 with Firecracker's words. */
int fc_coll_put(const struct dm_kind *k, struct fc_coll *c, const struct dev_api_res *r, char *err,
		size_t errlen);
/* The collections in GET /vm/config (o: its object) and an item list of
 * --config-file's section (0, or -1 with why). */
void fc_coll_json(const struct fc_vmcfg *c, struct json_object *o);
int fc_coll_file(struct fc_vmcfg *c, const struct dm_kind *k, struct json_object *arr, char *err,
		 size_t errlen);
/* A table's fields of known types (at most DEV_API_FIELDS_MAX). */
size_t fc_api_nr_fields(const struct dev_api *a);
/* After a snapshot load or a received migration: each device kind's
 * resource (PUT /balloon, /entropy, /vsock) from the spec its restored
 * device was built with, so GET and PATCH find it as after a PUT. */
void fc_vmcfg_from_devices(struct fc_vmcfg *c, const struct devmgr *dm);
/* The JSON table of a kind's resource, built from its fields (f holds
 * DEV_API_FIELDS_MAX). */
void fc_res_object(const struct dev_api *a, struct api_object *obj, struct api_field *f);
/* A resource from JSON (an object, or text), strictly; 0 or -1 with
 * serde's words. */
int fc_res_fill(const struct dm_kind *k, struct json_object *o, struct dev_api_res *r, char *err,
		size_t errlen);
int fc_res_fill_text(const struct dm_kind *k, const char *text, size_t len, struct dev_api_res *r,
		     char *err, size_t errlen);
/* The resource as JSON, as GET /vm/config shows it. */
struct json_object *fc_res_json(const struct dm_kind *k, const struct dev_api_res *r);
/* The integer field NAME of a resource, or NULL. */
int64_t *fc_res_int(const struct dm_kind *k, struct dev_api_res *r, const char *name);
/* The resource as the kind's --OPTION spec (in spec) and a devmgr_arg
 * (the DEV_API_APART string apart, pointing into r). 0, or -1 with why. */
int fc_res_arg(const struct dm_kind *k, const struct dev_api_res *r, char *spec, size_t len,
	       struct devmgr_arg *a, char *err, size_t errlen);
/* A PATCH's body by its table (serde's words), the spec its values make
 * for the device's dev_ops.update, and its values into the configured
 * resource (the fields of the same names). 0, or -1 with why. */
int fc_patch_fill_text(const struct dev_api_patch *p, const char *text, size_t len,
		       struct dev_api_res *r, char *err, size_t errlen);
int fc_patch_spec(const struct dev_api_patch *p, const struct dev_api_res *r, char *spec,
		  size_t len, char *err, size_t errlen);
void fc_patch_apply(const struct dm_kind *k, struct dev_api_res *cur, const struct dev_api_patch *p,
		    const struct dev_api_res *r);
/* The spec through the option's own table and the kind's check against
 * the machine: 0, or -1 with "FAULT: why" (the kind's fault prefix). */
int fc_res_check(const struct dm_kind *k, const struct dev_api_res *r, bool use_ioeventfd,
		 uint64_t mem_mib, char *err, size_t errlen);
/* fc_res_check for every configured resource: "SECTION: FAULT: why". */
int fc_vmcfg_check_res(struct fc_vmcfg *c, char *err, size_t errlen);
/* An id from a path: Firecracker's rule (alphanumerics and '_'). */
bool fc_id_ok(const char *id);

#endif
