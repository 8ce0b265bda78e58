// SPDX-License-Identifier: Apache-2.0
#include "api/api_model.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/log.h"
#include "core/mem_zero.h"
#include "core/vm.h"

#define STR(s, f, fl)                                                                              \
	{                                                                                          \
		.name = #f, .type = AF_STR, .off = offsetof(s, f), .size = sizeof(((s *)0)->f),    \
		.flags = (fl), .expect = "a string"                                                \
	}
#define BOOL(s, f, fl)                                                                             \
	{                                                                                          \
		.name = #f, .type = AF_BOOL, .off = offsetof(s, f), .flags = (fl),                 \
		.expect = "a boolean"                                                              \
	}
#define INT(s, f, lo, hi, fl, what)                                                                \
	{                                                                                          \
		.name = #f, .type = AF_INT, .off = offsetof(s, f), .min = (lo), .max = (hi),       \
		.flags = (fl), .expect = (what)                                                    \
	}
#define OBJ(s, f, so, what)                                                                        \
	{                                                                                          \
		.name = #f, .type = AF_OBJ, .off = offsetof(s, f), .size = sizeof(((s *)0)->f),    \
		.sub = &(so), .expect = (what)                                                     \
	}
#define RL(s, f) OBJ(s, f, fc_rate_limiter_obj, "struct RateLimiterConfig")
#define OBJECT(var, s, nm, tbl)                                                                    \
	const struct api_object var = {.name = nm,                                                 \
				       .fields = tbl,                                              \
				       .n = sizeof(tbl) / sizeof(tbl[0]),                          \
				       .seen_off = offsetof(s, seen)}

/* Firecracker's u64 fields, within what JSON integers carry here. */
static const struct api_field bucket_f[] = {
    INT(struct dev_api_bucket, size, 0, INT64_MAX, AF_REQUIRED, "u64"),
    INT(struct dev_api_bucket, one_time_burst, 0, INT64_MAX, AF_OPTIONAL, "u64"),
    INT(struct dev_api_bucket, refill_time, 0, INT64_MAX, AF_REQUIRED, "u64"),
};
OBJECT(fc_token_bucket_obj, struct dev_api_bucket, "TokenBucketConfig", bucket_f);

/* Field order is RL_BYTES, RL_OPS: the seen bits are the mask. */
static const struct api_field rate_limiter_f[] = {
    OBJ(struct dev_api_rl, bandwidth, fc_token_bucket_obj, "struct TokenBucketConfig"),
    OBJ(struct dev_api_rl, ops, fc_token_bucket_obj, "struct TokenBucketConfig"),
};
OBJECT(fc_rate_limiter_obj, struct dev_api_rl, "RateLimiterConfig", rate_limiter_f);

static const struct api_field boot_f[] = {
    STR(struct fc_boot, kernel_image_path, AF_REQUIRED),
    STR(struct fc_boot, initrd_path, 0),
    STR(struct fc_boot, boot_args, 0),
};
OBJECT(fc_boot_obj, struct fc_boot, "BootSourceConfig", boot_f);

static const struct api_field machine_f[] = {
    INT(struct fc_machine, vcpu_count, 0, 255, AF_REQUIRED, "u8"),
    /* Firecracker takes any usize and fails at start; skiff refuses what
     * no host has at once, saying its bound (the value is a usize). */
    INT(struct fc_machine, mem_size_mib, 0, INT64_MAX / 2, AF_REQUIRED | AF_SAY_MAX, "usize"),
    BOOL(struct fc_machine, smt, 0),
    BOOL(struct fc_machine, track_dirty_pages, 0),
    STR(struct fc_machine, huge_pages, 0),
    STR(struct fc_machine, cpu_template, AF_IF_SEEN),
    /* skiff's own: shown only if given, so the object is Firecracker's. */
    INT(struct fc_machine, skiff_iothreads, 1, 8, AF_IF_SEEN, "an integer from 1 to 8"),
    BOOL(struct fc_machine, skiff_cpu_pm, AF_IF_SEEN),
    INT(struct fc_machine, skiff_halt_poll_us, 0, 1000000, AF_IF_SEEN,
	"an integer from 0 to 1000000"),
};
OBJECT(fc_machine_obj, struct fc_machine, "MachineConfig", machine_f);

static const struct api_field logger_f[] = {
    STR(struct fc_logger, log_path, 0),	   STR(struct fc_logger, level, 0),
    BOOL(struct fc_logger, show_level, 0), BOOL(struct fc_logger, show_log_origin, 0),
    STR(struct fc_logger, module, 0),
};
OBJECT(fc_logger_obj, struct fc_logger, "LoggerConfig", logger_f);

static const struct api_field metrics_f[] = {STR(struct fc_metrics, metrics_path, AF_REQUIRED)};
OBJECT(fc_metrics_obj, struct fc_metrics, "MetricsConfig", metrics_f);

static const struct api_field action_f[] = {STR(struct fc_action, action_type, AF_REQUIRED)};
OBJECT(fc_action_obj, struct fc_action, "ActionBody", action_f);

static const struct api_field vm_state_f[] = {STR(struct fc_vm_state, state, AF_REQUIRED)};
OBJECT(fc_vm_state_obj, struct fc_vm_state, "Vm", vm_state_f);

static const struct api_field snapshot_create_f[] = {
    STR(struct fc_snapshot_create, snapshot_path, AF_REQUIRED),
    STR(struct fc_snapshot_create, mem_file_path, AF_REQUIRED),
    STR(struct fc_snapshot_create, snapshot_type, 0),
};
OBJECT(fc_snapshot_create_obj, struct fc_snapshot_create, "SnapshotCreateParams",
       snapshot_create_f);

static const struct api_field mem_backend_f[] = {
    STR(struct fc_mem_backend, backend_type, AF_REQUIRED),
    STR(struct fc_mem_backend, backend_path, AF_REQUIRED),
};
OBJECT(fc_mem_backend_obj, struct fc_mem_backend, "MemoryBackend", mem_backend_f);

static const struct api_field net_override_f[] = {
    STR(struct fc_net_override, iface_id, AF_REQUIRED),
    STR(struct fc_net_override, host_dev_name, AF_REQUIRED),
};
OBJECT(fc_net_override_obj, struct fc_net_override, "NetworkOverride", net_override_f);

/* network_overrides: a list of NetworkOverride, at most one per card. */
#define NET_OVERRIDES(s)                                                                           \
	{                                                                                          \
		.name = "network_overrides", .type = AF_ARR,                                       \
		.off = offsetof(s, network_overrides), .size = sizeof(struct fc_net_override),     \
		.max = FC_MAX_NETS, .count_off = offsetof(s, nr_network_overrides),                \
		.sub = &fc_net_override_obj, .expect = "a sequence"                                \
	}

/* Order matters: FC_LOAD_SEEN_* are bits of it. */
static const struct api_field snapshot_load_f[] = {
    STR(struct fc_snapshot_load, snapshot_path, AF_REQUIRED),
    STR(struct fc_snapshot_load, mem_file_path, 0),
    OBJ(struct fc_snapshot_load, mem_backend, fc_mem_backend_obj, "struct MemoryBackend"),
    BOOL(struct fc_snapshot_load, resume_vm, 0),
    BOOL(struct fc_snapshot_load, track_dirty_pages, 0),
    BOOL(struct fc_snapshot_load, enable_diff_snapshots, 0),
    NET_OVERRIDES(struct fc_snapshot_load),
};
OBJECT(fc_snapshot_load_obj, struct fc_snapshot_load, "SnapshotLoadParams", snapshot_load_f);

#define STRS(s, f, n)                                                                              \
	{                                                                                          \
		.name = #f, .type = AF_STRS, .off = offsetof(s, f),                                \
		.size = sizeof(((s *)0)->f[0]), .max = FC_ALLOW_MAX, .count_off = offsetof(s, n),  \
		.expect = "a sequence"                                                             \
	}
static const struct api_field skiff_allow_f[] = {
    STRS(struct fc_skiff_allow, paths, nr_paths),
    STRS(struct fc_skiff_allow, taps, nr_taps),
};
OBJECT(fc_skiff_allow_obj, struct fc_skiff_allow, "SkiffAllow", skiff_allow_f);

/* Order matters: FC_MIG_SEEN_ALLOW is a bit of it. */
static const struct api_field mig_receive_f[] = {
    STR(struct fc_mig_receive, receiver_url, AF_REQUIRED),
    NET_OVERRIDES(struct fc_mig_receive),
    OBJ(struct fc_mig_receive, skiff_allow, fc_skiff_allow_obj, "struct SkiffAllow"),
};
OBJECT(fc_mig_receive_obj, struct fc_mig_receive, "ReceiveMigrationData", mig_receive_f);

static const struct api_field mig_send_f[] = {
    STR(struct fc_mig_send, destination_url, AF_REQUIRED),
};
OBJECT(fc_mig_send_obj, struct fc_mig_send, "SendMigrationData", mig_send_f);

void fc_machine_defaults(struct fc_machine *m)
{
	memset(m, 0, sizeof(*m));
	m->vcpu_count = 1;
	m->mem_size_mib = 128;
	m->skiff_iothreads = 1;
	strcpy(m->huge_pages, "None");
}

void fc_vmcfg_init(struct fc_vmcfg *c)
{
	mem_zero(c, sizeof(*c)); /* 740 KiB, nearly all of it never used */
	fc_machine_defaults(&c->machine);
}

bool fc_id_ok(const char *id)
{
	if (!*id)
		return false;
	for (; *id; id++)
		if (!isalnum((unsigned char)*id) && *id != '_')
			return false;
	return true;
}

int fc_machine_check(const struct fc_machine *m, char *err, size_t errlen)
{
	if (m->vcpu_count < 1 || m->vcpu_count > 32 ||
	    (m->smt && m->vcpu_count > 1 && m->vcpu_count % 2)) {
		snprintf(err, errlen,
			 "Machine config error: The number of vCPUs must be greater than 0, less "
			 "than 32 and must be 1 or an even number if SMT is enabled.");
		return -1;
	}
	/* skiff's own floor: below 16 MiB no Linux kernel fits. */
	if (m->mem_size_mib < (int64_t)(VM_MEM_MIN >> 20) ||
	    m->mem_size_mib > (int64_t)(VM_MEM_MAX >> 20)) {
		snprintf(err, errlen,
			 "Machine config error: The memory size (MiB) is either 0, or not a "
			 "multiple of the configured page size. (skiff: use 16 to 1048576)");
		return -1;
	}
	return fc_machine_check_features(m, err, errlen);
}

/* Firecracker's static templates: skiff has none of them but "None". */
static const char *const cpu_templates[] = {"C3", "T2", "T2S", "T2CL", "T2A", "V1N1", "None"};

/* What skiff does not do is refused, never stored and ignored: SMT (the
 * guest sees one thread per core), huge pages, CPU templates. Dirty page
 * tracking is taken: it serves Diff snapshots (core/vm_dirty.h). */
int fc_machine_check_features(const struct fc_machine *m, char *err, size_t errlen)
{
	size_t n = sizeof(cpu_templates) / sizeof(cpu_templates[0]), i = 0;
	while (m->cpu_template[0] && i < n && strcmp(m->cpu_template, cpu_templates[i]))
		i++;
	if (i == n) {
		snprintf(err, errlen,
			 "An error occurred when deserializing the json body of a request: "
			 "unknown variant `%s`, expected one of `C3`, `T2`, `T2S`, `T2CL`, `T2A`, "
			 "`V1N1`, `None`",
			 m->cpu_template);
		return -1;
	}
	if (strcmp(m->huge_pages, "None") && strcmp(m->huge_pages, "2M")) {
		snprintf(err, errlen,
			 "An error occurred when deserializing the json body of a request: "
			 "unknown variant `%s`, expected `None` or `2M`",
			 m->huge_pages);
		return -1;
	}
	const char *what = m->smt			     ? "simultaneous multithreading (smt)"
			   : strcmp(m->huge_pages, "None")   ? "huge pages"
			   : i < n - 1 && m->cpu_template[0] ? "CPU templates"
							     : NULL;
	if (what) {
		snprintf(err, errlen, "The requested operation is not supported: skiff has no %s.",
			 what);
		return -1;
	}
	return 0;
}

int fc_logger_check(const struct fc_logger *l, char *err, size_t errlen)
{
	enum log_level level;
	if (!l->level[0] || log_level_parse(l->level, &level) == 0)
		return 0;
	snprintf(err, errlen, "Logger error: Invalid level: %s", l->level);
	return -1;
}

void fc_rate_limiter_cfg(const struct dev_api_rl *r, struct ratelimit_cfg *c, unsigned int *mask)
{
	const struct dev_api_bucket *b[RL_NR] = {[RL_BYTES] = &r->bandwidth, [RL_OPS] = &r->ops};
	*mask = 0;
	for (int i = 0; i < RL_NR; i++) {
		c->b[i] = (struct ratelimit_bucket_cfg){(uint64_t)b[i]->size,
							(uint64_t)b[i]->one_time_burst,
							(uint64_t)b[i]->refill_time};
		if (r->seen & (1u << i))
			*mask |= 1u << i;
	}
}

void fc_rate_limiter_merge(struct dev_api_rl *dst, const struct dev_api_rl *src)
{
	if (src->seen & (1u << RL_BYTES))
		dst->bandwidth = src->bandwidth;
	if (src->seen & (1u << RL_OPS))
		dst->ops = src->ops;
	dst->seen |= src->seen;
}

void fc_rate_limiter_spec(const struct dev_api_rl *r, const char *prefix, char *out, size_t len)
{
	static const char *const names[RL_NR] = {[RL_BYTES] = "bw", [RL_OPS] = "ops"};
	struct ratelimit_cfg c;
	unsigned int mask;
	size_t n = 0;
	fc_rate_limiter_cfg(r, &c, &mask);
	out[0] = '\0';
	for (int i = 0; i < RL_NR && n < len; i++) {
		char key[16];
		snprintf(key, sizeof(key), "%s%s", prefix, names[i]);
		if (mask & (1u << i))
			ratelimit_opt_format(key, &c.b[i], out + n, len - n);
		n = strlen(out);
	}
}
