// SPDX-License-Identifier: Apache-2.0
/* `skiff run`: options -> the API layer (it builds and runs the VM from
 * --kernel, --config-file or API requests, and stops it) -> report ->
 * vmm_destroy. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/opts.h"
#include "api/api.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/sandbox.h"
#include "core/vcpu.h"
#include "stats/exit_stats.h"
#include "vmm/vmm.h"

static struct vm *_Atomic signal_vm;
static volatile sig_atomic_t quit;

static void stop_signal_handler(int sig)
{
	struct vm *vm = signal_vm;
	quit = 1;
	if (vm)
		vm_request_exit(vm, VM_EXIT_QUIT, "stopped by signal %d", sig);
}

static void signals_vm(struct vm *vm)
{
	signal_vm = vm;
}

static void signals_init(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = stop_signal_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	vcpu_signals_init();
}

static int exit_status(struct vm *vm)
{
	switch (atomic_load(&vm->exit_kind)) {
	case VM_EXIT_POWEROFF:
	case VM_EXIT_QUIT:
		return 0;
	case VM_EXIT_REBOOT:
		/* skiff does not restart guests: a reboot ends the VM, like
		 * QEMU's -no-reboot, so scripts see the guest stop. */
		log_info("%s; exiting (reboot is treated as shutdown)", vm->exit_reason);
		return 0;
	default:
		log_err("%s", vm->exit_reason);
		return EXIT_RUNTIME;
	}
}

static void report(struct vmm *v, const struct run_opts *o, FILE *stats_json)
{
	struct exit_stats_src src = vmm_stats_src(v);
	if (o->stats)
		exit_stats_print(stderr, &src);
	if (stats_json)
		exit_stats_json(stats_json, &src);
}

int cmd_run(int argc, char **argv, uint64_t start_ns)
{
	struct run_opts o;
	char err[512];
	int r = run_opts_parse(argc, argv, &o, err, sizeof(err));
	if (r == 1) {
		run_opts_usage(stdout);
		return 0;
	}
	if (r < 0) {
		fprintf(stderr, "skiff: %s\n", err);
		return EXIT_USAGE;
	}
	log_set_level((enum log_level)(LOG_ERROR + o.log_level));
	static struct vmm v;
	int status;
	FILE *stats_json = NULL;
	err[0] = '\0';
	/* Files the running VMM writes are opened before the filter. */
	if (o.stats_json && !(stats_json = fopen(o.stats_json, "w"))) {
		log_err("cannot write --stats-json %s: %s", o.stats_json, strerror(errno));
		return EXIT_USAGE;
	}
	/* A buffer of our own: stdio would size its own with fstat at the
	 * first write, a path call the sandbox refuses. */
	static char stats_json_buf[BUFSIZ];
	if (stats_json)
		setvbuf(stats_json, stats_json_buf, _IOFBF, sizeof(stats_json_buf));
	signals_init();
	struct api_run a = {.sock = o.api_sock,
			    .config_file = o.config_file,
			    .base = o.vm,
			    .timing = o.timing,
			    .start_ns = start_ns,
			    .quit = &quit,
			    .on_vm = signals_vm};
	/* Before the API thread starts: it loads its filter first thing. */
	sandbox_enable(!o.vm.no_seccomp);
	r = api_run(&a, &v, &status, err, sizeof(err));
	signal_vm = NULL;
	if (r == 0) {
		status = exit_status(&v.vm);
		report(&v, &o, stats_json);
	} else if (r == 1) {
		status = 0;
	}
	if (status && err[0])
		log_err("%s", err);
	if (stats_json)
		fclose(stats_json);
	vmm_destroy(&v);
	return status;
}
