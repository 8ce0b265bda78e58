// SPDX-License-Identifier: Apache-2.0
/* InstanceStart: Firecracker's objects become a struct vmm_config (device
 * specs in the --disk/--net syntax, so one parser checks both), then the
 * VM is built and started on the main thread. */
#include <stdio.h>
#include <string.h>

#include "api/api_fc.h"
#include "core/vcpu.h"

void api_fc_init(struct api_fc *f, struct vmm *v, const struct vmm_config *base)
{
	memset(f, 0, sizeof(*f));
	fc_vmcfg_init(&f->cfg);
	f->vmm = v;
	f->base = *base;
	f->metrics_fd = f->log_fd = -1;
}

void api_fc_fini(struct api_fc *f)
{
	if (f->metrics_fd >= 0)
		close(f->metrics_fd);
	if (f->log_fd >= 0)
		close(f->log_fd);
	f->metrics_fd = f->log_fd = -1;
}

/* boot_args without pci=off: skiff's devices are PCI (Firecracker's are
 * MMIO, and its guides pass pci=off), then Firecracker's root= for the
 * root drive. */
static void fc_cmdline(struct api_fc *f, const struct fc_drive *root)
{
	const char *args =
	    f->cfg.boot.boot_args[0] ? f->cfg.boot.boot_args : "console=ttyS0 reboot=k panic=1";
	char copy[FC_ARGS_MAX];
	snprintf(copy, sizeof(copy), "%s", args);
	size_t n = 0;
	f->cmdline[0] = '\0';
	for (char *save, *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		if (!strcmp(t, "pci=off"))
			continue;
		n += (size_t)snprintf(f->cmdline + n, sizeof(f->cmdline) - n, "%s%s", n ? " " : "",
				      t);
		if (n >= sizeof(f->cmdline))
			return;
	}
	if (!root)
		return;
	if (root->partuuid[0])
		snprintf(f->cmdline + n, sizeof(f->cmdline) - n, " root=PARTUUID=%s %s",
			 root->partuuid, root->is_read_only ? "ro" : "rw");
	else
		snprintf(f->cmdline + n, sizeof(f->cmdline) - n, " root=/dev/vda %s",
			 root->is_read_only ? "ro" : "rw");
}

/* io_engine: Firecracker's Async is io_uring, as skiff's aio=io_uring;
 * absent keeps skiff's default. skiff_options last: they may override.
 * The path is not in the spec: it goes apart, typed (fc_drive_arg). */
void fc_drive_spec(const struct fc_drive *d, char *out, size_t len)
{
	char rl[FC_RL_SPEC_MAX];
	const char *aio = !strcmp(d->io_engine, "Async")  ? ",aio=io_uring"
			  : !strcmp(d->io_engine, "Sync") ? ",aio=threads"
							  : "";
	fc_rate_limiter_spec(&d->rate_limiter, "", rl, sizeof(rl));
	snprintf(out, len, "%s%s%s%s%s", d->is_read_only ? ",ro" : "", aio, rl,
		 d->skiff_options[0] ? "," : "", d->skiff_options);
	if (out[0] == ',')
		memmove(out, out + 1, strlen(out));
}

/* The tap's name goes apart, typed (fc_net_arg). */
void fc_net_spec(const struct fc_net *n, char *out, size_t len)
{
	char rx[FC_RL_SPEC_MAX], tx[FC_RL_SPEC_MAX];
	fc_rate_limiter_spec(&n->rx_rate_limiter, "rx-", rx, sizeof(rx));
	fc_rate_limiter_spec(&n->tx_rate_limiter, "tx-", tx, sizeof(tx));
	snprintf(out, len, "%s%s%s%s%s%s", n->guest_mac[0] ? ",fc_mac=" : "", n->guest_mac, rx, tx,
		 n->skiff_options[0] ? "," : "", n->skiff_options);
	if (out[0] == ',')
		memmove(out, out + 1, strlen(out));
}

static void add_dev(struct vmm_config *c, const char *option, const char *spec, const char *key,
		    const char *value, const char *id)
{
	if (c->nr_devs < VMM_MAX_DEVICES)
		c->devs[c->nr_devs++] = (struct vmm_dev_arg){option, spec, key, value, id};
}

/* The root drive first, so that it is /dev/vda, as in Firecracker. */
static void fc_devices(struct api_fc *f, struct vmm_config *c, const struct fc_drive **root)
{
	*root = NULL;
	unsigned int n = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < f->cfg.nr_drives; i++) {
			const struct fc_drive *d = &f->cfg.drives[i];
			if (d->is_root_device != (pass == 0))
				continue;
			if (d->is_root_device)
				*root = d;
			char spec[sizeof(f->disk_spec[i])];
			fc_drive_spec(d, spec, sizeof(spec));
			memcpy(f->disk_spec[i], spec, sizeof(spec));
			add_dev(c, "disk", f->disk_spec[i], "path", d->path_on_host, d->drive_id);
			f->disk_index[i] = n++;
		}
	}
	for (int i = 0; i < f->cfg.nr_nets; i++) {
		const struct fc_net *n = &f->cfg.nets[i];
		char spec[sizeof(f->net_spec[i])];
		fc_net_spec(n, spec, sizeof(spec));
		memcpy(f->net_spec[i], spec, sizeof(spec));
		add_dev(c, "net", f->net_spec[i], "tap", n->host_dev_name, n->iface_id);
	}
	for (int i = 0; i < f->cfg.nr_vfio; i++)
		add_dev(c, "vfio-pci", f->cfg.vfio[i].skiff_options, NULL, NULL,
			f->cfg.vfio[i].vfio_id);
	/* The kinds' resources, in row order; each was checked at PUT. */
	for (size_t i = 0, s = 0; i < dm_nr_kinds && s < FC_RES_MAX; i++) {
		struct fc_res_cfg *r = fc_vmcfg_res(&f->cfg, &dm_kinds[i]);
		struct devmgr_arg a;
		char why[400];
		if (!r)
			continue;
		if (r->has && fc_res_arg(&dm_kinds[i], &r->r, f->res_spec[s],
					 sizeof(f->res_spec[s]), &a, why, sizeof(why)) == 0)
			add_dev(c, a.option, a.spec, a.key, a.value, NULL);
		s++;
	}
}

int api_fc_start(struct api_fc *f, const struct vmm_config *given, char *err, size_t errlen)
{
	struct vmm_config c = f->base;
	if (given) {
		c = *given;
	} else if (!f->cfg.has_boot) {
		snprintf(err, errlen, "Cannot start microvm without kernel configuration.");
		f->start_status = 2;
		return -1;
	} else {
		const struct fc_drive *root;
		c.nr_devs = 0;
		fc_devices(f, &c, &root);
		fc_cmdline(f, root);
		c.kernel = f->cfg.boot.kernel_image_path;
		c.initrd = f->cfg.boot.initrd_path[0] ? f->cfg.boot.initrd_path : NULL;
		c.cmdline = f->cmdline;
		c.mem = (uint64_t)f->cfg.machine.mem_size_mib << 20;
		c.cpus = (int)f->cfg.machine.vcpu_count;
		c.iothreads = (int)f->cfg.machine.skiff_iothreads;
		c.track_dirty_pages = f->cfg.machine.track_dirty_pages;
		if (f->cfg.machine.seen & FC_MACHINE_SEEN_CPU_PM)
			c.cpu_pm = f->cfg.machine.skiff_cpu_pm;
		if (f->cfg.machine.seen & FC_MACHINE_SEEN_HALT_POLL) {
			c.halt_poll_set = true;
			c.halt_poll_ns = (uint64_t)f->cfg.machine.skiff_halt_poll_us * 1000;
		}
	}
	c.disk_replace = f->serving;
	char why[512] = "";
	int status;
	if (vmm_build(f->vmm, &c, f->start_ns, &status, why, sizeof(why)) < 0)
		goto fail;
	/* A VM from the command line: its devices of the kinds with a
	 * resource (a --balloon, a --vsock) become the API's, so GET and
	 * PATCH /balloon find them as after a PUT. */
	if (given)
		fc_vmcfg_from_devices(&f->cfg, &f->vmm->dm);
	if (f->on_vm)
		f->on_vm(&f->vmm->vm);
	status = 1;
	if (vmm_start(f->vmm, f->timing, why, sizeof(why)) < 0)
		goto fail;
	f->state = FC_RUNNING;
	api_fc_log(f, "Info", "Successfully started microvm that was configured from %s.",
		   f->cfg.boot.kernel_image_path);
	return 0;
fail:
	/* The threads that started stop; the VM is freed; the API stays. */
	if (f->on_vm)
		f->on_vm(NULL);
	vmm_destroy(f->vmm);
	f->start_status = status;
	snprintf(err, errlen, "%s", why);
	api_fc_log(f, "Error", "Start microvm error: %s", err);
	return -1;
}
