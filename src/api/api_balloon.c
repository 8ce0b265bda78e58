/* The balloon's endpoints, as Firecracker's: PUT /balloon before the
 * start; GET /balloon; after the start PATCH /balloon (a new target),
 * GET /balloon/statistics and PATCH /balloon/statistics (a new polling
 * interval). The running device is reached through the device manager
 * (vmm_dev_update); its statistics are its counters (virtio_balloon.h). */
#include <stdio.h>
#include <string.h>

#include "api/api_fc.h"

#define PRE_BOOT "The requested operation is not supported before starting the microVM."
#define NO_DEV	 "Balloon config error: No balloon device found."

int fc_balloon_check(const struct fc_balloon *b, const struct fc_machine *m, char *err,
		     size_t errlen)
{
	if (b->amount_mib > m->mem_size_mib) {
		snprintf(err, errlen,
			 "Balloon config error: Amount of pages requested is too large.");
		return -1;
	}
	if (b->free_page_hinting) {
		snprintf(err, errlen, "Balloon config error: skiff has no free page hinting.");
		return -1;
	}
	return 0;
}

void fc_balloon_spec(const struct fc_balloon *b, char *out, size_t len)
{
	snprintf(out, len, "amount=%lld,deflate-on-oom=%s,stats=%lld,reporting=%s",
		 (long long)b->amount_mib, b->deflate_on_oom ? "on" : "off",
		 (long long)b->stats_polling_interval_s, b->free_page_reporting ? "on" : "off");
}

static void put_balloon(struct api_fc *f, const struct fc_balloon *b, struct api_reply *rep)
{
	char why[400], spec[96];
	if (fc_balloon_check(b, &f->cfg.machine, why, sizeof(why)) < 0)
		return api_reply_fault(rep, 400, "%s", why);
	fc_balloon_spec(b, spec, sizeof(spec));
	if (devmgr_check("balloon", spec, !f->base.no_ioeventfd, why, sizeof(why)) < 0)
		return api_reply_fault(rep, 400, "Balloon config error: %s", why);
	f->cfg.balloon = *b;
	f->cfg.has_balloon = true;
	api_reply_none(rep);
}

/* A change to the running device; on success into the configuration. */
static void update(struct api_fc *f, const struct fc_balloon *b, bool stats, struct api_reply *rep)
{
	char why[400], spec[48];
	if (stats)
		snprintf(spec, sizeof(spec), "stats=%lld", (long long)b->stats_polling_interval_s);
	else
		snprintf(spec, sizeof(spec), "amount=%lld", (long long)b->amount_mib);
	if (vmm_dev_update(f->vmm, "balloon", 0, spec, why, sizeof(why)) < 0)
		return api_reply_fault(rep, 400, "Balloon config error: %s", why);
	if (stats)
		f->cfg.balloon.stats_polling_interval_s = b->stats_polling_interval_s;
	else
		f->cfg.balloon.amount_mib = b->amount_mib;
	api_reply_none(rep);
}

struct stats_ctx {
	const char *dev;
	struct json_object *o;
};

/* The device's counters into BalloonStats: its gauges, and "stat NAME"
 * under NAME (only those the guest reported, as Firecracker's Options). */
static void stats_emit(void *ctx, const char *owner, const char *what, uint64_t value)
{
	struct stats_ctx *s = ctx;
	if (strcmp(owner, s->dev))
		return;
	if (!strcmp(what, "target pages") || !strcmp(what, "actual pages")) {
		char key[16];
		snprintf(key, sizeof(key), "%.6s_pages", what);
		json_object_object_add(s->o, key, json_object_new_uint64(value));
		snprintf(key, sizeof(key), "%.6s_mib", what);
		json_object_object_add(s->o, key, json_object_new_uint64(value / 256));
	} else if (!strncmp(what, "stat ", 5)) {
		json_object_object_add(s->o, what + 5, json_object_new_uint64(value));
	}
}

static void get_stats(struct api_fc *f, struct api_reply *rep)
{
	if (!f->cfg.balloon.stats_polling_interval_s)
		return api_reply_fault(
		    rep, 400,
		    "Balloon config error: Statistics for the balloon device are not enabled");
	struct stats_ctx s = {vmm_dev_name(f->vmm, "balloon", 0), json_object_new_object()};
	if (s.dev && s.o)
		vmm_counters(f->vmm, stats_emit, &s);
	api_reply_json(rep, s.o);
}

void api_fc_balloon(struct api_fc *f, const struct api_req *r, struct api_reply *rep)
{
	if (r->op == OP_BALLOON_PUT)
		return put_balloon(f, &r->u.balloon, rep);
	if (r->op == OP_BALLOON_GET && f->cfg.has_balloon)
		return api_reply_json(rep, api_json_from(&fc_balloon_obj, &f->cfg.balloon));
	/* Firecracker refuses the rest before the start whatever is configured. */
	if (r->op != OP_BALLOON_GET && f->state == FC_NOT_STARTED)
		return api_reply_fault(rep, 400, PRE_BOOT);
	if (!f->cfg.has_balloon)
		return api_reply_fault(rep, 400, NO_DEV);
	if (r->op == OP_BALLOON_STATS_GET)
		return get_stats(f, rep);
	update(f, &r->u.balloon, r->op == OP_BALLOON_STATS_PATCH, rep);
}
