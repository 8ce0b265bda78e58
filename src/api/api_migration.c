// SPDX-License-Identifier: Apache-2.0
/* PUT /migration/receive and PUT /migration/send: live migration named
 * as Cloud Hypervisor names it (receiver_url, destination_url; its error
 * words), with Firecracker's rules around it: receive on a fresh process
 * before anything boot-specific is configured, as /snapshot/load; send
 * on a started one. A sent guest ends this process with status 0. */
#include <stdio.h>
#include <string.h>

#include "api/api_fc.h"
#include "vmm/vmm_mig_allow.h"

/* Listening this long for the source at most: a target nobody migrates
 * to answers, instead of holding its API forever. */
#define MIG_ACCEPT_MS (10 * 60 * 1000)

_Static_assert(FC_ALLOW_MAX <= VMM_ALLOW_MAX, "skiff_allow's lists fit the VMM's");

/* skiff_allow into what the VMM checks, its paths absolute: 0, or -1 with
 * the reply made. Without it, NULL: the state is trusted. */
static int mig_allow(const struct fc_mig_receive *m, struct vmm_allow *a,
		     const struct vmm_allow **out, struct api_reply *rep)
{
	const struct fc_skiff_allow *s = &m->skiff_allow;
	*out = NULL;
	if (!(m->seen & FC_MIG_SEEN_ALLOW))
		return 0;
	*a = (struct vmm_allow){.nr_paths = s->nr_paths, .nr_taps = s->nr_taps};
	for (uint32_t i = 0; i < s->nr_paths; i++) {
		if (s->paths[i][0] != '/') {
			api_reply_fault(rep, 400,
					"Error receiving migration: skiff_allow's paths take "
					"absolute paths, not `%.64s`.",
					s->paths[i]);
			return -1;
		}
		a->paths[i] = s->paths[i];
	}
	for (uint32_t i = 0; i < s->nr_taps; i++)
		a->taps[i] = s->taps[i];
	*out = a;
	return 0;
}

static void mig_receive(struct api_fc *f, const struct fc_mig_receive *m, struct api_reply *rep)
{
	char why[600];
	if (f->state != FC_NOT_STARTED)
		return api_reply_fault(rep, 400,
				       "The requested operation is not supported after starting "
				       "the microVM.");
	if (f->configured)
		return api_reply_fault(rep, 400,
				       "Receiving a migration is not allowed after configuring "
				       "boot-specific resources.");
	struct vmm_config base;
	struct vmm_net_override ov[FC_MAX_NETS];
	struct vmm_allow allow;
	const struct vmm_allow *a;
	if (mig_allow(m, &allow, &a, rep) < 0)
		return;
	api_fc_restore_base(f, m->network_overrides, m->nr_network_overrides, ov, &base);
	base.allow = a;
	int status;
	api_fc_log(f, "Info", "Waiting for a migration on %s.", m->receiver_url);
	if (vmm_migrate_receive(f->vmm, &base, m->receiver_url, MIG_ACCEPT_MS, f->start_ns, &status,
				why, sizeof(why)) < 0) {
		api_fc_log(f, "Error", "Error receiving migration: %s", why);
		return api_reply_fault(rep, 400, "Error receiving migration: %s", why);
	}
	api_fc_restored(f, FC_RUNNING);
	api_fc_log(f, "Info", "The migrated microVM runs here.");
	api_reply_none(rep);
}

static void mig_send(struct api_fc *f, const struct fc_mig_send *m, struct api_reply *rep)
{
	char why[600];
	struct vmm_mig_stats st;
	if (f->state == FC_NOT_STARTED)
		return api_reply_fault(rep, 400,
				       "The requested operation is not supported before starting "
				       "the microVM.");
	if (vmm_migrate_send(f->vmm, m->destination_url, &st, why, sizeof(why)) < 0) {
		api_fc_log(f, "Error", "Error sending migration: %s", why);
		return api_reply_fault(rep, 400, "Error sending migration: %s", why);
	}
	api_fc_log(f, "Info", "Migrated to %s: downtime %llu ms, total %llu ms.",
		   m->destination_url, (unsigned long long)st.downtime_ms,
		   (unsigned long long)st.total_ms);
	struct json_object *o = json_object_new_object();
	if (o) {
		json_object_object_add(o, "downtime_ms",
				       json_object_new_int64((int64_t)st.downtime_ms));
		json_object_object_add(o, "downtime_sent_ms",
				       json_object_new_int64((int64_t)st.downtime_sent_ms));
		json_object_object_add(o, "total_ms", json_object_new_int64((int64_t)st.total_ms));
		json_object_object_add(o, "pages", json_object_new_int64((int64_t)st.pages));
	}
	api_reply_json(rep, o);
	/* The guest is the target's: this process ends, status 0, once the
	 * reply is out (vmm_stop answers the API thread first). */
	vm_request_exit(&f->vmm->vm, VM_EXIT_QUIT, "the guest migrated to %s", m->destination_url);
}

void api_fc_migration(struct api_fc *f, const struct api_req *r, struct api_reply *rep)
{
	if (r->op == OP_MIG_RECEIVE)
		mig_receive(f, &r->u.mig_receive, rep);
	else
		mig_send(f, &r->u.mig_send, rep);
}
