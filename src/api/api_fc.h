// SPDX-License-Identifier: Apache-2.0
/* The controller: Firecracker's semantics for each API request, run on
 * the main thread (api_ctl hands requests over). It holds the
 * configuration until InstanceStart, then builds and starts the VM. */
#ifndef SKIFF_API_FC_H
#define SKIFF_API_FC_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/api_model.h"
#include "api/api_req.h"
#include "vmm/vmm.h"

#define FC_APP_NAME "skiff"
#define FC_VERSION  "1.16.1" /* the Firecracker API version skiff follows */

enum fc_state { FC_NOT_STARTED, FC_RUNNING, FC_PAUSED };

struct api_fc {
	struct fc_vmcfg cfg;
	enum fc_state state;
	struct vmm *vmm;
	struct vmm_config base; /* the command line's settings (seccomp, unpack, ...) */
	bool timing;
	bool serving; /* an API socket: requests may come after the start */
	uint64_t start_ns;
	void (*on_vm)(struct vm *vm); /* the VM exists: signals may stop it */
	int metrics_fd, log_fd;
	int start_status; /* of a failed start from --config-file */
	/* Something boot-specific was configured: /snapshot/load refused. */
	bool configured;
	/* What vmm_config points into. */
	char cmdline[FC_ARGS_MAX + 256];
	char res_spec[FC_RES_MAX][FC_RES_SPEC_MAX]; /* the kinds' resources */
	char coll_spec[FC_COLLS][FC_COLL_MAX][FC_RES_SPEC_MAX];
	/* A collection's entry i is the coll_index[.][i]-th device of its
	 * kind's option (the boot entry first). */
	unsigned int coll_index[FC_COLLS][FC_COLL_MAX];
};

void api_fc_init(struct api_fc *f, struct vmm *v, const struct vmm_config *base);
void api_fc_fini(struct api_fc *f);
/* api_handler: one request. */
void api_fc_handle(void *opaque, const struct api_req *req, struct api_reply *rep);
/* InstanceStart: builds the VM from cfg (or from given, the command
 * line's) and starts it. 0, or -1 with one line in err and the exit status
 * in start_status (the VM is then gone again). */
int api_fc_start(struct api_fc *f, const struct vmm_config *given, char *err, size_t errlen);
/* A device kind's GET, PATCH and statistics endpoints (api_kind_run.c). */
void api_fc_kind(struct api_fc *f, const struct api_req *r, struct api_reply *rep);
/* A collection's PUT and PATCH of an entry (api_kind_coll.c). */
void api_fc_coll_put(struct api_fc *f, const struct api_req *r, struct api_reply *rep);
void api_fc_coll_patch(struct api_fc *f, const struct api_req *r, struct api_reply *rep);
/* The API's id of the index-th device of --OPTION, if a collection
 * configured it; else NULL. */
const char *api_fc_dev_id(const struct api_fc *f, const char *option, unsigned int index);
/* Opens the metrics file or FIFO / the log; 0 or -1 with err. */
int api_fc_metrics_open(struct api_fc *f, const struct fc_metrics *m, char *err, size_t errlen);
int api_fc_logger_open(struct api_fc *f, const struct fc_logger *l, char *err, size_t errlen);
/* Firecracker's line formats: one JSON object per metrics flush, and
 * "TIMESTAMP [ID:THREAD:LEVEL] message" log lines. */
void api_fc_flush_metrics(struct api_fc *f);
void api_fc_log(struct api_fc *f, const char *level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* PUT /snapshot/create and /snapshot/load (api_snapshot.c). */
void api_fc_snapshot(struct api_fc *f, const struct api_req *r, struct api_reply *rep);
/* PUT /migration/receive and /migration/send (api_migration.c). */
void api_fc_migration(struct api_fc *f, const struct api_req *r, struct api_reply *rep);
/* A VM built from saved state (a snapshot load, a received migration):
 * the command line's base, disks replaceable when the API serves, each
 * of the n network overrides o onto ov (FC_MAX_NETS). */
void api_fc_restore_base(const struct api_fc *f, const struct fc_net_override *o, uint32_t n,
			 struct vmm_net_override *ov, struct vmm_config *base);
/* After it ran: the kinds' resources from the restored devices, the VM's
 * hook, the new state. */
void api_fc_restored(struct api_fc *f, enum fc_state state);
/* GET /stats: the "name<TAB>value" lines `skiff stat` reads. */
char *api_fc_stats_text(struct api_fc *f, size_t *len);

#endif
