// SPDX-License-Identifier: Apache-2.0
/* Live migration, the target's side (docs/MIGRATION.md): one connection
 * at the receiver_url; RAM and the state from the stream (mig_recv.c);
 * READY once the state is checked; the VM built over the received RAM
 * only after the source's RELEASED (its disks' locks are free then); the
 * guest resumed; RUNNING back. A failure anywhere is an ERROR line to the
 * source (which then keeps the guest) and one here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/log.h"
#include "vmm/devmgr.h"
#include "vmm/mig_proto.h"
#include "vmm/mig_recv.h"
#include "vmm/vmm.h"

/* Between the checked state and the build: the source lets go of the
 * images now, and this process takes them in vmm_build. */
struct tgt {
	int fd;
	uint64_t ready_ns, released_ns; /* when READY went, RELEASED came */
};

static int tgt_handover(void *opaque, char *err, size_t errlen)
{
	struct tgt *t = opaque;
	t->ready_ns = monotonic_ns();
	if (mig_send(t->fd, MIG_READY, NULL, 0) < 0) {
		snprintf(err, errlen, "the migration's source is gone");
		return -1;
	}
	int r = mig_expect(t->fd, MIG_RELEASED, NULL, 0, NULL, err, errlen);
	t->released_ns = monotonic_ns();
	return r;
}

/* At CONFIG: the threads' filters compiled for the devices to come, so
 * that the build after RELEASED installs them instead (the largest part
 * of the downtime here was compiling them). */
static int tgt_config(void *opaque, const struct snap_image *img, char *err, size_t errlen)
{
	(void)opaque;
	struct devmgr_snap_list l;
	if (devmgr_snap_list(img, &l, err, errlen) < 0)
		return -1;
	int r = devmgr_sandbox_prepare(l.arg, l.nr, err, errlen);
	free(l.buf);
	return r;
}

/* At HELLO: the VM made over the RAM while the pages come. */
static int tgt_ram(void *opaque, uint8_t *ram, uint64_t size, char *err, size_t errlen)
{
	return vmm_premake(opaque, ram, size, err, errlen);
}

int vmm_migrate_receive(struct vmm *v, const struct vmm_config *base, const char *url,
			int accept_ms, uint64_t start_ns, int *status, char *err, size_t errlen)
{
	struct mig_rx rx = {0};
	err[0] = '\0';
	*status = 2;
	int fd = mig_listen_accept(url, accept_ms, err, errlen);
	if (fd < 0)
		return -1;
	uint64_t t0 = monotonic_ns();
	struct mig_rx_hook hook_ram = {.ram = tgt_ram, .config = tgt_config, .opaque = v};
	int r = mig_rx_run(&rx, fd, VM_MEM_MAX, &hook_ram, err, errlen);
	uint64_t t_state = monotonic_ns();
	struct tgt t = {fd, t_state, t_state};
	if (r == 0) {
		struct vmm_config c = *base;
		struct vmm_restore_hook hook = {tgt_handover, &t};
		c.mem_file = "(the migrated RAM)"; /* (its name in messages) */
		r = vmm_restore(v, &c, &rx.img, true, start_ns, &hook, status, err, errlen);
	}
	if (r < 0)
		vmm_premade_drop(v); /* made at HELLO, no build took it */
	uint64_t pages = rx.pages_in, ns = monotonic_ns() - t0;
	mig_rx_free(&rx);
	if (r == 0 && mig_send(fd, MIG_RUNNING, &ns, sizeof(ns)) < 0)
		log_warn("migration: the source did not hear RUNNING (the guest runs here)");
	if (r < 0) {
		char line[MIG_ERR_MAX];
		snprintf(line, sizeof(line), "target: %s", err);
		mig_send(fd, MIG_ERROR, line, (uint32_t)strlen(line));
	} else {
		/* The last three are the downtime's share here: checking the
		 * state, the source letting go of its disks, building the VM. */
		log_info(
		    "migration: received %llu pages in %llu ms (stream %llu ms, state to READY "
		    "%llu ms, RELEASED after %llu ms, build to running %llu ms); the guest "
		    "runs here",
		    (unsigned long long)pages, (unsigned long long)(ns / 1000000),
		    (unsigned long long)((t_state - t0) / 1000000),
		    (unsigned long long)((t.ready_ns - t_state) / 1000000),
		    (unsigned long long)((t.released_ns - t.ready_ns) / 1000000),
		    (unsigned long long)((t0 + ns - t.released_ns) / 1000000));
	}
	close(fd);
	return r;
}
