// SPDX-License-Identifier: Apache-2.0
#include "api/api.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api_fc.h"
#include "api/api_server.h"

#define CONFIG_FILE_MAX (1 << 20)

static struct api_fc fc;
static struct api_ctl ctl;
static struct api_server srv;

static void serve(void *opaque)
{
	(void)opaque;
	api_ctl_serve(&ctl, api_fc_handle, &fc);
}

/* --config-file: the objects, then the files they name (log, metrics). */
static int config_file(const char *path, char *err, size_t errlen)
{
	static char text[CONFIG_FILE_MAX + 1];
	char why[600];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open --config-file %s: %s", path, strerror(errno));
		return -1;
	}
	ssize_t n, len = 0;
	while ((n = read(fd, text + len, CONFIG_FILE_MAX + 1 - (size_t)len)) > 0)
		len += n;
	close(fd);
	if (n < 0 || len > CONFIG_FILE_MAX) {
		snprintf(err, errlen, "cannot read --config-file %s: %s", path,
			 n < 0 ? strerror(errno) : "larger than 1 MiB");
		return -1;
	}
	if (fc_vmcfg_parse_file(&fc.cfg, text, (size_t)len, why, sizeof(why)) < 0 ||
	    (fc.cfg.has_metrics &&
	     api_fc_metrics_open(&fc, &fc.cfg.metrics, why, sizeof(why)) < 0) ||
	    (fc.cfg.has_logger && api_fc_logger_open(&fc, &fc.cfg.logger, why, sizeof(why)) < 0)) {
		snprintf(err, errlen, "invalid --config-file %s: %s", path, why);
		return -1;
	}
	return 0;
}

/* A VM from the command line shows in GET /vm/config and /machine-config
 * (its devices keep their command-line form). */
static void config_from_argv(const struct vmm_config *c)
{
	struct fc_vmcfg *v = &fc.cfg;
	v->has_boot = true;
	snprintf(v->boot.kernel_image_path, sizeof(v->boot.kernel_image_path), "%s", c->kernel);
	snprintf(v->boot.initrd_path, sizeof(v->boot.initrd_path), "%s",
		 c->initrd ? c->initrd : "");
	snprintf(v->boot.boot_args, sizeof(v->boot.boot_args), "%s", c->cmdline ? c->cmdline : "");
	v->machine.vcpu_count = c->cpus;
	v->machine.mem_size_mib = (int64_t)(c->mem >> 20);
	v->machine.skiff_iothreads = c->iothreads;
	v->machine.skiff_cpu_pm = c->cpu_pm;
	v->machine.skiff_halt_poll_us = (int64_t)(c->halt_poll_ns / 1000);
	v->machine.seen |= (c->cpu_pm ? FC_MACHINE_SEEN_CPU_PM : 0) |
			   (c->halt_poll_set ? FC_MACHINE_SEEN_HALT_POLL : 0);
}

/* Waits for InstanceStart, serving the API, until a signal says stop. */
static void wait_unconfigured(const struct api_run *o)
{
	while (fc.state == FC_NOT_STARTED && !*o->quit) {
		struct pollfd p = {.fd = ctl.efd, .events = POLLIN};
		if (poll(&p, 1, 1000) > 0)
			serve(NULL);
	}
}

int api_run(const struct api_run *o, struct vmm *v, int *status, char *err, size_t errlen)
{
	api_fc_init(&fc, v, &o->base);
	fc.timing = o->timing;
	fc.serving = o->sock != NULL;
	fc.start_ns = o->start_ns;
	fc.on_vm = o->on_vm;
	ctl.efd = srv.stop_efd = srv.sock.fd = -1;
	*status = 2;
	int r = -1;
	if (o->config_file && config_file(o->config_file, err, errlen) < 0)
		goto out;
	if (o->sock) {
		if (api_ctl_init(&ctl) < 0) {
			snprintf(err, errlen, "eventfd: %s", strerror(errno));
			goto out;
		}
		if (api_server_open(&srv, o->sock, &ctl, err, errlen) < 0)
			goto out;
		if (api_server_start(&srv) < 0) {
			*status = 1;
			snprintf(err, errlen, "cannot start the API thread");
			goto out;
		}
	}
	if (o->base.kernel)
		config_from_argv(&o->base);
	if (o->config_file || o->base.kernel) {
		if (api_fc_start(&fc, o->config_file ? NULL : &o->base, err, errlen) < 0) {
			*status = fc.start_status;
			goto out;
		}
	} else {
		wait_unconfigured(o);
	}
	r = 1;
	if (fc.state != FC_NOT_STARTED) {
		vmm_wait(v, o->sock ? ctl.efd : -1, serve, NULL);
		api_fc_flush_metrics(&fc);
		r = 0;
	}
out:
	/* The API thread gets its last answer, then ends; only then does the
	 * VM stop, so no reply ever reads a stopped or freed VM. */
	if (ctl.efd >= 0)
		api_ctl_close(&ctl);
	if (srv.stop_efd >= 0 || srv.sock.fd >= 0)
		api_server_close(&srv);
	api_ctl_destroy(&ctl);
	if (r == 0)
		vmm_stop(v);
	api_fc_fini(&fc);
	return r;
}
