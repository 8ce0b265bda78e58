// SPDX-License-Identifier: Apache-2.0
#include "vmm/vmm.h"

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/arch.h"
#include "core/clock.h"
#include "core/coalesced_mmio.h"
#include "core/console.h"
#include "core/log.h"
#include "core/sandbox.h"
#include "core/vcpu.h"
#include "core/vm_dirty.h"
#include "pci/pci.h"
#include "devices/vfio/vfio.h"
#include "vmm/platform.h"
#include "vmm/vmm_dirty.h"

/* A command line's or the API's device as devmgr takes it. */
#define DEV_ARG(d) ((struct devmgr_arg){(d)->option, (d)->spec, (d)->key, (d)->value, (d)->id})

#define EXIT_USAGE   2
#define EXIT_RUNTIME 1

/* During setup: no sandbox role may create an epoll set or eventfd. */
static int vmm_iothreads_init(struct vmm *v, unsigned int n)
{
	for (; v->nr_io_inited < n; v->nr_io_inited++) {
		char name[16];
		snprintf(name, sizeof(name), "io%u", v->nr_io_inited);
		if (iothread_init(&v->io[v->nr_io_inited], name) < 0)
			return -1;
	}
	v->nr_io = n;
	return 0;
}

/* --cpus and --iothreads' pin= lists (one CPU per thread, checked by the
 * parser; an API's counts may differ from the command line's). */
static int vmm_pins_check(const struct vmm_config *c, char *err, size_t errlen)
{
	if (c->nr_vcpu_pin && c->nr_vcpu_pin != c->cpus)
		snprintf(err, errlen, "%d vCPUs but %d host CPUs in --cpus pin= (one each)",
			 c->cpus, c->nr_vcpu_pin);
	else if (c->nr_io_pin && c->nr_io_pin != c->iothreads)
		snprintf(err, errlen,
			 "%d I/O threads but %d host CPUs in --iothreads pin= (one each)",
			 c->iothreads, c->nr_io_pin);
	else
		return 0;
	return -1;
}

static void vmm_pins_apply(struct vmm *v, const struct vmm_config *c)
{
	for (int i = 0; i < c->nr_vcpu_pin; i++)
		v->vm.vcpus[i]->pin_cpu = c->vcpu_pin[i];
	for (int i = 0; i < c->nr_io_pin; i++)
		v->io[i].pin_cpu = c->io_pin[i];
}

/* --cpu-pm and --halt-poll, before the vCPUs exist. What the host refused
 * is said; the VM runs with the rest. */
static void vmm_idle_setup(struct vmm *v, const struct vmm_config *c)
{
	char note[256];
	struct vm_caps k = vm_caps_of(&v->vm);
	v->vm.idle_exits_off =
	    vm_idle_setup(&k, c->cpu_pm, c->halt_poll_set, c->halt_poll_ns, note, sizeof(note));
	if (note[0])
		log_warn("%s", note);
}

static int host_memslot_add(void *vm, uint64_t gpa, uint64_t size, void *hva)
{
	return vm_memslot_add(vm, gpa, size, hva);
}

static int host_memslot_del(void *vm, int slot)
{
	return vm_memslot_del(vm, slot);
}

static int host_batch_add(void *vm, uint64_t addr, uint32_t len)
{
	return cmmio_zone_add(vm, addr, len);
}

static int host_batch_del(void *vm, uint64_t addr, uint32_t len)
{
	return cmmio_zone_del(vm, addr, len);
}

static void host_batch_flush(void *vm)
{
	cmmio_flush(vm);
}

static int host_kvm_vfio_add(void *vm, int group_fd)
{
	struct vmm *v = (struct vmm *)((char *)vm - offsetof(struct vmm, vm));
	return vfio_kvm_group_add(v->vm.vm_fd, &v->kvm_vfio, group_fd);
}

static int vmm_devices(struct vmm *v, const struct vmm_config *c, char *err, size_t errlen)
{
	/* Empty until a passthrough device opens it: one per VM. */
	v->vfio = vfio_container_new();
	if (!v->vfio) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	v->host = (struct dev_host){.opaque = &v->vm,
				    .memslot_add = host_memslot_add,
				    .memslot_del = host_memslot_del,
				    .mmio_batch_add = host_batch_add,
				    .mmio_batch_del = host_batch_del,
				    .mmio_batch_flush = host_batch_flush,
				    .kvm_vfio_add = host_kvm_vfio_add,
				    .vfio = v->vfio};
	v->dm = (struct devmgr){.pci = v->pci,
				.host = &v->host,
				.gm = &v->vm.mem,
				.io = v->io,
				.nr_io = v->nr_io,
				.use_ioeventfd = !c->no_ioeventfd,
				.nr_vcpus = (unsigned int)c->cpus,
				.halt_in_guest = arch_idle_halts_in_guest(v->vm.idle_exits_off)};
	for (int i = 0; i < c->nr_devs; i++)
		if (devmgr_add_arg(&v->dm, &DEV_ARG(&c->devs[i]), err, errlen) < 0)
			return -1;
	return 0;
}

int vmm_premake(struct vmm *v, uint8_t *ram, uint64_t size, char *err, size_t errlen)
{
	memset(v, 0, sizeof(*v));
	if (vm_create_mem(&v->vm, size, -1, ram, 0, err, errlen) < 0) {
		vm_destroy(&v->vm); /* (and ram with it) */
		return -1;
	}
	v->vm_made_ns = monotonic_ns();
	v->vm_premade = true;
	return 0;
}

void vmm_premade_drop(struct vmm *v)
{
	if (v->vm_premade)
		vm_destroy(&v->vm);
	v->vm_premade = false;
}

int vmm_build(struct vmm *v, const struct vmm_config *c, uint64_t start_ns, int *status, char *err,
	      size_t errlen)
{
	struct boot_image img = {.initrd_fd = -1};
	/* A VM vmm_premake made is kept (and destroyed with the rest from
	 * here, whatever fails); everything else starts zero. */
	_Static_assert(offsetof(struct vmm, vm) == 0, "struct vmm begins with its vm");
	bool premade = v->vm_premade;
	uint64_t made_ns = v->vm_made_ns;
	if (premade)
		memset((uint8_t *)v + sizeof(v->vm), 0, sizeof(*v) - sizeof(v->vm));
	else
		memset(v, 0, sizeof(*v));
	v->vm_created = premade;
	v->kvm_vfio = -1;
	pthread_mutex_init(&v->ctl_lock, NULL);
	v->start_ns = start_ns;
	*status = EXIT_USAGE;
	/* Bad input is told before /dev/kvm is touched: devices, then the
	 * kernel. */
	struct devmgr_arg args[VMM_MAX_DEVICES];
	for (int i = 0; i < c->nr_devs; i++)
		args[i] = DEV_ARG(&c->devs[i]);
	if (devmgr_check_args(args, (unsigned int)c->nr_devs, !c->no_ioeventfd, err, errlen) < 0)
		return -1;
	if (vmm_pins_check(c, err, errlen) < 0)
		return -1;
	int r = 0;
	bool restore = c->mem_file != NULL;
	if (!premade &&
	    (restore ? vmm_mem_file_open(&v->mem_file, c->mem_file, c->mem, err, errlen) < 0
		     : platform_open_kernel(&img, c, err, errlen) < 0))
		return -1;
	if (premade) {
		v->vm.nr_cpus = c->cpus;
		v->vm_made_ns = made_ns;
	} else {
		/* The file stays open, its lock held, until vmm_destroy. */
		int mem_fd = v->mem_file.held ? v->mem_file.fd : -1;
		r = vm_create_mem(&v->vm, c->mem, mem_fd, NULL, c->cpus, err, errlen);
		v->vm_made_ns = monotonic_ns();
	}
	v->vm_created = true;
	if (r < 0) {
		/* Not being able to use /dev/kvm is a setup problem, like bad input. */
		*status = v->vm.vm_fd < 0 ? EXIT_USAGE : EXIT_RUNTIME;
		goto fail;
	}
	/* A fresh boot's pages, and a migrated VM's, are all dirty (no file
	 * holds any yet); a restore's memory file holds them all. */
	if (c->track_dirty_pages && vm_dirty_enable(&v->vm, !restore || premade, err, errlen) < 0) {
		*status = EXIT_RUNTIME;
		goto fail;
	}
	sandbox_enable(!c->no_seccomp);
	sandbox_clear_rules(); /* the kinds of this VM's devices add theirs */
	vmm_idle_setup(v, c);
	v->disk_replace = c->disk_replace;
	v->console_filter = c->console_filter;
	exit_sites_init(&v->sites);
	v->vm.bus.account = exit_sites_bus_account;
	v->vm.bus.account_opaque = &v->sites;
	*status = EXIT_RUNTIME;
	if (vmm_iothreads_init(v, (unsigned int)c->iothreads) < 0 ||
	    !(v->pci = pci_bus_create(&v->vm))) {
		snprintf(err, errlen, "cannot set up the I/O threads or PCI bus");
		goto fail;
	}
	*status = EXIT_USAGE;
	if (vmm_devices(v, c, err, errlen) < 0)
		goto fail;
	/* Tracking: a card whose vhost writes guest RAM unseen logs it from
	 * here on (a Diff needs it as a migration's pre-copy does), at the
	 * cost of the kernel's logging every frame it receives. If it cannot,
	 * only the Diffs are refused, with this line. */
	if (c->track_dirty_pages &&
	    vmm_dev_logs_start(v, "take a Diff snapshot of", v->dev_logs_err,
			       sizeof(v->dev_logs_err)) < 0)
		log_warn("dirty page tracking: %s", v->dev_logs_err);
	*status = EXIT_RUNTIME;
	if (platform_build(v, restore ? NULL : &img, err, errlen) < 0 ||
	    devmgr_start(&v->dm, err, errlen) < 0)
		goto fail;
	vmm_pins_apply(v, c);
	boot_image_close(&img);
	return 0;
fail:
	boot_image_close(&img);
	return -1;
}

void vmm_wait(struct vmm *v, int fd, void (*serve)(void *opaque), void *opaque)
{
	while (atomic_load(&v->vm.exit_kind) == VM_EXIT_NONE) {
		struct pollfd p[2] = {{.fd = v->vm.exit_pipe[0], .events = POLLIN},
				      {.fd = fd, .events = POLLIN}};
		if (poll(p, fd >= 0 ? 2 : 1, 1000) > 0 && fd >= 0 && (p[1].revents & POLLIN))
			serve(opaque);
	}
}

static pthread_t console_thread;

static size_t vmm_console_receive(void *opaque, const uint8_t *buf, size_t len)
{
	return uart_receive(opaque, buf, len);
}

int vmm_start(struct vmm *v, bool timing, char *err, size_t errlen)
{
	/* Every thread installs its own role's filter when it starts; this
	 * one installs the main thread's after it has created them all (a
	 * thread inherits its creator's filter: core/sandbox.h). */
	for (; v->nr_io_started < v->nr_io; v->nr_io_started++) {
		if (iothread_start(&v->io[v->nr_io_started]) < 0) {
			snprintf(err, errlen, "cannot start I/O thread %s",
				 v->io[v->nr_io_started].name);
			return -1;
		}
	}
	if (console_start(&v->vm, v->console_filter, vmm_console_receive, &v->uart,
			  &console_thread) < 0) {
		snprintf(err, errlen, "cannot start the console");
		return -1;
	}
	v->console_on = true;
	for (; v->nr_vcpus_started < v->vm.nr_cpus;
	     __atomic_add_fetch(&v->nr_vcpus_started, 1, __ATOMIC_RELEASE)) {
		if (vcpu_start(v->vm.vcpus[v->nr_vcpus_started]) < 0) {
			vm_request_exit(&v->vm, VM_EXIT_ERROR, "cannot start vCPU thread %d",
					v->nr_vcpus_started);
			break;
		}
	}
	if (sandbox_enter(v->disk_replace ? SANDBOX_CONTROLLER : SANDBOX_MAIN) < 0) {
		snprintf(err, errlen, "cannot install the seccomp filter");
		return -1;
	}
	if (timing) {
		/* vCPU 0 stamps its first KVM_RUN right before entering it. */
		struct vcpu *c0 = v->vm.vcpus[0];
		while (!__atomic_load_n(&c0->first_run_ns, __ATOMIC_ACQUIRE) &&
		       atomic_load(&v->vm.exit_kind) == VM_EXIT_NONE)
			usleep(100);
		/* What --timing asks for, not a log line: printed whatever
		 * --log-level says (the testbed reads it). */
		fprintf(stderr, "skiff: first KVM_RUN after %llu us\n",
			(unsigned long long)((c0->first_run_ns - v->start_ns) / 1000));
	}
	return 0;
}

int vmm_run(struct vmm *v, bool timing, char *err, size_t errlen)
{
	if (vmm_start(v, timing, err, errlen) < 0)
		return -1;
	vmm_wait(v, -1, NULL, NULL);
	return 0;
}

void vmm_stop(struct vmm *v)
{
	if (v->stopped || !v->vm_created)
		return;
	v->stopped = true;
	/* The console and vCPU threads watch exit_kind and the exit pipe. */
	if (atomic_load(&v->vm.exit_kind) == VM_EXIT_NONE)
		vm_request_exit(&v->vm, VM_EXIT_QUIT, "stopped");
	/* Paused vCPUs wake up and see the exit; a pause in progress fails. */
	vcpu_gate_stop(&v->vm.gate);
	for (int i = 0; i < v->nr_vcpus_started; i++)
		vcpu_kick(v->vm.vcpus[i]);
	for (int i = 0; i < v->nr_vcpus_started; i++)
		vcpu_join(v->vm.vcpus[i]);
	if (v->console_on)
		pthread_join(console_thread, NULL);
	console_restore();
	for (unsigned int i = 0; i < v->nr_io_started; i++)
		iothread_stop(&v->io[i]);
	devmgr_stop(&v->dm);
}

void vmm_destroy(struct vmm *v)
{
	/* A failed InstanceStart destroyed it already; `skiff run` destroys
	 * whatever it has on the way out. */
	if (v->destroyed)
		return;
	vmm_stop(v);
	/* Transports first (they never touch their device on the way out),
	 * then the devices, then what they ran on. */
	if (v->pci)
		pci_bus_destroy(v->pci);
	devmgr_destroy(&v->dm);
	for (unsigned int i = 0; i < v->nr_io_inited; i++)
		iothread_destroy(&v->io[i]);
	for (int i = 0; i < v->vm.nr_cpus; i++)
		vcpu_destroy(v->vm.vcpus[i]);
	if (v->kvm_vfio >= 0)
		close(v->kvm_vfio);
	vfio_container_free(v->vfio); /* after the devices that shared it */
	if (v->vm_created)
		vm_destroy(&v->vm);
	vmm_mem_file_close(&v->mem_file); /* its RAM unmapped: others may write it */
	pthread_mutex_destroy(&v->ctl_lock);
	v->destroyed = true;
}

struct exit_stats_src vmm_stats_src(struct vmm *v)
{
	return (struct exit_stats_src){.vm = &v->vm,
				       .sites = &v->sites,
				       .io = v->io,
				       .nr_io = v->nr_io,
				       .counters = vmm_counters,
				       .counters_opaque = v,
				       .wall_s = (monotonic_ns() - v->start_ns) / 1e9};
}

const char *vmm_dev_name(const struct vmm *v, const char *option, unsigned int index)
{
	return devmgr_name(&v->dm, option, index);
}

void vmm_counters(void *vmm, counter_emit_fn emit, void *ctx)
{
	const struct vmm *v = vmm;
	for (unsigned int i = 0; i < v->nr_io; i++) {
		emit(ctx, v->io[i].name, "wakeups", counter_get(&v->io[i].wakeups));
		emit(ctx, v->io[i].name, "events", counter_get(&v->io[i].events));
	}
	devmgr_counters(&v->dm, emit, ctx);
}

static bool vmm_running(struct vmm *v)
{
	return v->vm_created && atomic_load(&v->vm.exit_kind) == VM_EXIT_NONE;
}

static void vmm_kick_vcpus(void *opaque)
{
	struct vmm *v = opaque;
	int n = __atomic_load_n(&v->nr_vcpus_started, __ATOMIC_ACQUIRE);
	for (int i = 0; i < n; i++)
		vcpu_kick(v->vm.vcpus[i]);
}

static int vmm_pause_locked(struct vmm *v)
{
	if (!vmm_running(v))
		return -1;
	if (v->paused)
		return 0;
	if (vcpu_gate_close(&v->vm.gate, vmm_kick_vcpus, v) < 0)
		return -1;
	if (vm_clock_get(&v->vm, &v->paused_clock) < 0) {
		vcpu_gate_open(&v->vm.gate);
		return -1;
	}
	v->paused = true;
	return 0;
}

int vmm_pause(struct vmm *v)
{
	pthread_mutex_lock(&v->ctl_lock);
	int r = vmm_pause_locked(v);
	pthread_mutex_unlock(&v->ctl_lock);
	return r;
}

/* The guest's watchdogs told of the pause (vm_clock_paused); a failure
 * costs at most a spurious soft-lockup warning in the guest, so it is
 * said, not fatal. */
static void vmm_clock_paused(struct vmm *v)
{
	int told = vm_clock_paused(&v->vm);
	if (told < 0)
		log_warn("vm: KVM_KVMCLOCK_CTRL failed: %s", strerror(-told));
	else
		log_debug("vm: %d of %d vCPUs told of the pause (KVM_KVMCLOCK_CTRL)", told,
			  v->vm.nr_cpus);
}

int vmm_resume(struct vmm *v)
{
	int r = 0;
	pthread_mutex_lock(&v->ctl_lock);
	if (!vmm_running(v)) {
		r = -1;
	} else if (v->paused) {
		/* Before any vCPU runs: the guest resumes at the paused time.
		 * A failure leaves the clock jumped, not the guest stuck, and
		 * is said here, not returned: -1 would say the guest did not
		 * run (a migration's target then says ERROR and the source
		 * resumes it too: docs/MIGRATION.md). */
		int c = vm_clock_set(&v->vm, v->paused_clock);
		if (c < 0)
			log_warn("vm: KVM_SET_CLOCK failed: %s; the guest resumes with its "
				 "clock jumped",
				 strerror(-c));
		vmm_clock_paused(v);
		v->paused = false;
		vcpu_gate_open(&v->vm.gate);
	}
	pthread_mutex_unlock(&v->ctl_lock);
	return r;
}

int vmm_ctrl_alt_del(struct vmm *v)
{
	if (!vmm_running(v))
		return -1;
	return i8042_ctrl_alt_del(&v->kbd);
}

int vmm_dev_replace(struct vmm *v, const char *option, unsigned int index, const char *path,
		    char *err, size_t errlen)
{
	if (!vmm_running(v)) {
		snprintf(err, errlen, "the VM is not running");
		return -1;
	}
	return devmgr_replace(&v->dm, option, index, path, err, errlen);
}

int vmm_dev_limit(struct vmm *v, const char *option, unsigned int index, unsigned int dir,
		  const struct ratelimit_cfg *cfg, unsigned int mask, char *err, size_t errlen)
{
	if (!vmm_running(v)) {
		snprintf(err, errlen, "the VM is not running");
		return -1;
	}
	return devmgr_limit(&v->dm, option, index, dir, cfg, mask, err, errlen);
}

int vmm_dev_update(struct vmm *v, const char *option, unsigned int index, const char *spec,
		   char *err, size_t errlen)
{
	if (!vmm_running(v)) {
		snprintf(err, errlen, "the VM is not running");
		return -1;
	}
	return devmgr_update(&v->dm, option, index, spec, err, errlen);
}
