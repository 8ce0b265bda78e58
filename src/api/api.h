// SPDX-License-Identifier: Apache-2.0
/* skiff driven like Firecracker: `skiff run` with --api-sock (an HTTP API
 * on a unix socket), --config-file (Firecracker's JSON) or --kernel. The
 * main thread serves the controller while no VM runs and while one runs;
 * the API thread only parses and answers. */
#ifndef SKIFF_API_H
#define SKIFF_API_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "vmm/vmm.h"

struct api_run {
	const char *sock;	 /* --api-sock PATH, or NULL */
	const char *config_file; /* --config-file FILE, or NULL */
	struct vmm_config base;	 /* the command line's (a --kernel boots at once) */
	bool timing;
	uint64_t start_ns;
	volatile sig_atomic_t *quit;  /* set by a signal: stop waiting */
	void (*on_vm)(struct vm *vm); /* the VM exists (NULL: gone again) */
};

/* 0: a VM ran and has stopped (vmm_stop done; report, then vmm_destroy);
 * 1: skiff was stopped before any VM ran; -1: one line in err, the exit
 * status in *status. */
int api_run(const struct api_run *o, struct vmm *v, int *status, char *err, size_t errlen);

#endif
