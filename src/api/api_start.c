// SPDX-License-Identifier: Apache-2.0
/* InstanceStart: Firecracker's objects become a struct vmm_config (device
 * specs in the --disk/--net syntax, so one parser checks both), then the
 * VM is built and started on the main thread. */
#include <stdio.h>
#include <string.h>

#include "api/api_fc.h"
#include "core/mem_zero.h"
#include "core/vcpu.h"

void api_fc_init(struct api_fc *f, struct vmm *v, const struct vmm_config *base)
{
	mem_zero(f, sizeof(*f)); /* static: its pages stay unwritten until used */
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
 * MMIO, and its guides pass pci=off), then the boot entry's words
 * (Firecracker's root= for the root drive). */
static void fc_cmdline(struct api_fc *f, const char *boot)
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
	if (boot[0])
		snprintf(f->cmdline + n, sizeof(f->cmdline) - n, " %s", boot);
}

static void add_dev(struct vmm_config *c, const char *option, const char *spec, const char *key,
		    const char *value, const char *id)
{
	if (c->nr_devs < VMM_MAX_DEVICES)
		c->devs[c->nr_devs++] = (struct vmm_dev_arg){option, spec, key, value, id};
}

/* Whether an entry is its collection's boot entry (DEV_API_BOOT). */
static bool boots(const struct dev_api *a, const struct dev_api_res *r)
{
	for (size_t i = 0; i < fc_api_nr_fields(a); i++)
		if (a->fields[i].flags & DEV_API_BOOT && r->v[i].b)
			return true;
	return false;
}

/* A collection's devices, the boot entry first (Firecracker's root drive
 * is /dev/vda), and the command line's words for it. */
static void coll_devices(struct api_fc *f, const struct dm_kind *k, struct vmm_config *c,
			 char *boot, size_t len)
{
	struct fc_coll *s = fc_vmcfg_coll(&f->cfg, k);
	int slot = fc_coll_slot(k);
	unsigned int n = 0;
	for (int pass = 0; s && pass < 2; pass++) {
		for (unsigned int i = 0; i < s->n; i++) {
			const struct dev_api_res *r = &s->item[i];
			struct devmgr_arg a;
			char why[400];
			if (boots(k->api, r) != (pass == 0))
				continue;
			if (pass == 0 && k->api->boot_args)
				k->api->boot_args(r, boot, len);
			if (fc_res_arg(k, r, f->coll_spec[slot][i], sizeof(f->coll_spec[slot][i]),
				       &a, why, sizeof(why)) == 0)
				add_dev(c, a.option, a.spec, a.key, a.value, fc_coll_id(r));
			f->coll_index[slot][i] = n++;
		}
	}
}

/* The collections (drives, interfaces, skiff's VFIO) in row order, then
 * the kinds' one-device resources. */
static void fc_devices(struct api_fc *f, struct vmm_config *c, char *boot, size_t len)
{
	boot[0] = '\0';
	for (size_t i = 0; i < dm_nr_kinds; i++)
		coll_devices(f, dm_kinds[i], c, boot, len);
	/* The kinds' resources, in row order; each was checked at PUT. */
	for (size_t i = 0, s = 0; i < dm_nr_kinds && s < FC_RES_MAX; i++) {
		struct fc_res_cfg *r = fc_vmcfg_res(&f->cfg, dm_kinds[i]);
		struct devmgr_arg a;
		char why[400];
		if (!r)
			continue;
		if (r->has && fc_res_arg(dm_kinds[i], &r->r, f->res_spec[s], sizeof(f->res_spec[s]),
					 &a, why, sizeof(why)) == 0)
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
		char boot[FC_ARGS_MAX];
		c.nr_devs = 0;
		fc_devices(f, &c, boot, sizeof(boot));
		fc_cmdline(f, boot);
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
