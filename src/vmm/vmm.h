// SPDX-License-Identifier: Apache-2.0
/* A running VM and everything around it, with an explicit lifecycle:
 *
 *   vmm_build   VM, RAM, irqchip, PCI bus, I/O threads (not running),
 *               devices on their transports, platform devices, kernel
 *               loaded, vCPUs created;
 *   vmm_start   seccomp, then the threads: I/O threads, console, vCPUs;
 *   vmm_wait    returns when the guest stops (vmm_run: start, then wait);
 *   vmm_stop    vCPUs halted and joined, then the console, every I/O thread, and every device (its
 * workers, in-flight requests and vhost) in that order: afterwards no thread but the caller's
 * touches the VM; vmm_destroy transports and devices freed, vCPUs closed, guest RAM unmapped.
 *
 * Each step may be called after a failed earlier one; vmm_destroy always
 * stops first, and a second vmm_destroy does nothing (vmm_build starts
 * afresh). */
#ifndef SKIFF_VMM_H
#define SKIFF_VMM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/counter.h"
#include "core/vm.h"
#include "devices/legacy/i8042.h"
#include "devices/legacy/uart8250.h"
#include "iothread/iothread.h"
#include "stats/exit_sites.h"
#include "stats/exit_stats.h"
#include "vmm/devmgr.h"
#include "vmm/vmm_mem_file.h"

#define VMM_MAX_DEVICES DEVMGR_MAX

struct vmm_dev_arg {
	const char *option;	 /* "disk", "net" */
	const char *spec;	 /* the option's value */
	const char *key, *value; /* one option apart, typed (devmgr_arg), or NULL */
	const char *id;		 /* the API's id (iface_id, drive_id), or NULL */
};

/* /snapshot/load's network_overrides: the card saved as iface_id opens
 * the tap host_dev_name instead of the one it had. */
struct vmm_net_override {
	const char *iface_id, *host_dev_name;
};
struct vmm_allow;

/* What `skiff run` asks for (its option table fills it). */
struct vmm_config {
	const char *kernel, *initrd, *cmdline;
	uint64_t mem;
	int cpus;
	int iothreads; /* 1..IOTHREAD_MAX */
	/* Host CPUs the vCPU and I/O threads run on, one each in order (pin=
	 * of --cpus and --iothreads); none given: the scheduler's choice. */
	int vcpu_pin[VM_MAX_CPUS], nr_vcpu_pin;
	int io_pin[IOTHREAD_MAX], nr_io_pin;
	/* --cpu-pm on: the guest's idle instructions stay in the guest, where
	 * KVM allows (vm_idle_setup). */
	bool cpu_pm;
	/* --halt-poll: KVM's halt-polling window for the VM, if given. */
	bool halt_poll_set;
	uint64_t halt_poll_ns;
	bool no_ioeventfd;
	bool no_seccomp;
	/* An API may change disks' images while the guest runs: the main
	 * thread's filter lets it open existing files (SANDBOX_CONTROLLER). */
	bool disk_replace;
	/* A snapshot's restore (vmm_snapshot_load): guest RAM is this file,
	 * mapped privately, and no kernel is loaded. */
	const char *mem_file;
	/* machine-config's track_dirty_pages (or /snapshot/load's): KVM's
	 * dirty log and the VMM's (core/vm_dirty.h), for Diff snapshots. */
	bool track_dirty_pages;
	/* A restore's network_overrides (vmm_snapshot_load). */
	const struct vmm_net_override *net_overrides;
	unsigned int nr_net_overrides;
	/* A migration's skiff_allow (vmm_mig_allow.h): what the incoming
	 * state may open, checked before the build; NULL: all it names. */
	const struct vmm_allow *allow;
	int unpack;	    /* 0 host, 1 guest */
	int console_filter; /* enum console_filter_mode; 0: by stdout */
	struct vmm_dev_arg devs[VMM_MAX_DEVICES];
	int nr_devs;
};

struct vmm {
	struct vm vm;
	struct pci_bus *pci;
	struct devmgr dm;
	struct dev_host host; /* what the VM does for devices */
	struct iothread io[IOTHREAD_MAX];
	unsigned int nr_io, nr_io_inited;
	struct uart8250 uart;
	struct i8042 kbd;
	struct exit_sites sites;
	uint64_t start_ns;
	bool vm_created, stopped, console_on, destroyed;
	bool disk_replace;  /* vmm_config's */
	int console_filter; /* vmm_config's */
	unsigned int nr_io_started;
	int nr_vcpus_started;
	/* vmm_pause / vmm_resume, one controller at a time */
	pthread_mutex_t ctl_lock;
	bool paused;
	uint64_t paused_clock;	     /* kvmclock at the pause */
	int kvm_vfio;		     /* KVM's VFIO device, -1 until passthrough */
	struct vfio_container *vfio; /* shared by the passthrough devices */
	/* The memory file a restore mapped privately as guest RAM, held
	 * (vmm_mem_file.h): a snapshot written over it would change (or, cut
	 * short, unmap) the RAM it is read from. */
	struct vmm_mem_file mem_file;
	uint64_t vm_made_ns; /* when the VM and its RAM were made */
	bool vm_premade;     /* by vmm_premake, for the next vmm_build */
	/* The devices' own dirty logs (vhost's) are on (vmm_dirty.h): from
	 * the build with track_dirty_pages, or for a migration's pre-copy.
	 * If the build's could not start, the line a Diff is refused with. */
	bool dev_logs;
	char dev_logs_err[240];
};

/* 0, or -1 with one line in err and the exit status (2: bad input, 1:
 * failure at run time) in *status. */
/* A migration's target, at HELLO: the VM made over ram (size bytes,
 * anonymous, zero; taken whatever this returns) while the pages stream
 * in, so that the build after the switch finds it made (KVM's VM, its
 * irqchip, PIT and memory slots: a good part of the downtime). The next
 * vmm_build takes it; vmm_premade_drop frees it if none will. 0, or -1
 * with one line in err. */
int vmm_premake(struct vmm *v, uint8_t *ram, uint64_t size, char *err, size_t errlen);
void vmm_premade_drop(struct vmm *v);
int vmm_build(struct vmm *v, const struct vmm_config *c, uint64_t start_ns, int *status, char *err,
	      size_t errlen);
/* 0 once the guest stopped (see vm.exit_kind), or -1 with one line in err
 * if a thread could not start. */
int vmm_run(struct vmm *v, bool timing, char *err, size_t errlen);
/* vmm_run in two steps, for a caller that serves something else while the
 * guest runs: vmm_wait calls serve(opaque) whenever fd is readable (fd -1:
 * nothing to serve) and returns once the guest stopped. */
int vmm_start(struct vmm *v, bool timing, char *err, size_t errlen);
void vmm_wait(struct vmm *v, int fd, void (*serve)(void *opaque), void *opaque);
void vmm_stop(struct vmm *v);
void vmm_destroy(struct vmm *v);

/* Controls, callable from any thread between vmm_run starting the vCPUs
 * and vmm_destroy (vmm_stop may run meanwhile: they then fail or are
 * undone by it).
 *
 * vmm_pause returns once every vCPU thread left KVM_RUN and parked, with
 * the guest's kvmclock saved; vmm_resume restores that clock (the guest
 * does not see the pause's length) and lets them run. Devices and I/O
 * threads keep running; interrupts they raise meanwhile wait in the
 * in-kernel irqchip. Pausing a paused VM or resuming a running one is a
 * no-op returning 0. -1 if the VM is not running (stopped, or stopping);
 * vmm_resume's 0 says the vCPUs run, its -1 that they did not (a clock
 * that cannot be set is logged, and the guest resumes with it jumped).
 *
 * vmm_ctrl_alt_del presses and releases Ctrl+Alt+Del on the i8042
 * keyboard: 0, or -1 if the VM is not running or the keyboard's queue has
 * no room (the guest is not reading it). Linux then reboots, which ends
 * skiff. */
int vmm_pause(struct vmm *v);
int vmm_resume(struct vmm *v);
int vmm_ctrl_alt_del(struct vmm *v);
/* Snapshots (docs/SNAPSHOT.md), from the thread that runs vmm_wait's
 * serve. vmm_snapshot_create, on a paused VM: the state into state_path,
 * guest RAM into mem_path (diff: only the pages dirtied since the last
 * snapshot or the boot, at their offsets; refused without
 * track_dirty_pages). 0, or -1 with one line in err (a device that
 * cannot be saved is named before any file is written).
 *
 * vmm_snapshot_load, on a vmm never built: reads and checks the whole
 * state file, builds the VM it describes (base: skiff's own settings)
 * over mem_path mapped privately, restores every piece and starts it
 * paused; resume lets the guest run. 0, or -1 with one line in err and the
 * exit status in *status, the VM destroyed (never half-restored and run). */
int vmm_snapshot_create(struct vmm *v, const char *state_path, const char *mem_path, bool diff,
			char *err, size_t errlen);
int vmm_snapshot_load(struct vmm *v, const struct vmm_config *base, const char *state_path,
		      const char *mem_path, bool resume, uint64_t start_ns, int *status, char *err,
		      size_t errlen);

/* The state file's sections of a paused VM whose I/O threads are held
 * (vmm_snapshot_create's, a migration's STATE) into w. 0, or -1 with err. */
struct snap_writer;
int vmm_state_image(struct vmm *v, struct snap_writer *w, char *err, size_t errlen);

/* vmm_snapshot_load's restore from a checked image (a migration's STATE):
 * base->mem_file or mem_fd is guest RAM. hook->before_build runs once the
 * image is checked and before anything is built or opened (a migration's
 * hand-over of the disk images' locks); its -1 ends the restore. */
struct snap_image;
struct vmm_restore_hook {
	int (*before_build)(void *opaque, char *err, size_t errlen);
	void *opaque;
};
int vmm_restore(struct vmm *v, const struct vmm_config *base, const struct snap_image *img,
		bool resume, uint64_t start_ns, const struct vmm_restore_hook *hook, int *status,
		char *err, size_t errlen);

/* Live migration (docs/MIGRATION.md), from the thread that runs vmm_wait's
 * serve. vmm_migrate_send: this VM to the target at url; 0 once the target
 * runs it (the caller then ends this process), with its numbers in st; or
 * -1 with one line in err and the guest running here as before (paused,
 * if the target may run it: mig_src_resumes).
 * vmm_migrate_receive: on a vmm never built, takes one migration at url
 * (listening up to accept_ms) and runs the guest (base: skiff's own
 * settings); 0, or -1 with one line in err, the exit status in *status,
 * the VM destroyed. */
struct vmm_mig_stats {
	/* downtime_ms: the pause to the target's RUNNING; downtime_sent_ms:
	 * the pause to the last byte sent, as QEMU counts its downtime (its
	 * target's load and start are not in it) */
	uint64_t downtime_ms, downtime_sent_ms, total_ms, pages;
};
int vmm_migrate_send(struct vmm *v, const char *url, struct vmm_mig_stats *st, char *err,
		     size_t errlen);
/* After a failed switch: whether the source resumes the guest (RELEASED
 * sent; the target answered neither RUNNING nor ERROR; the disk locks
 * taken back). */
bool mig_src_resumes(bool released, bool unanswered, bool locked);
int vmm_migrate_receive(struct vmm *v, const struct vmm_config *base, const char *url,
			int accept_ms, uint64_t start_ns, int *status, char *err, size_t errlen);

/* The index-th device of --OPTION gets the medium at path (dev_ops.replace:
 * a disk's new image): from the thread that runs vmm_wait's serve. 0, or
 * -1 with a reason. */
int vmm_dev_replace(struct vmm *v, const char *option, unsigned int index, const char *path,
		    char *err, size_t errlen);

/* New rate limits for the index-th device of --OPTION (devmgr_limit),
 * from the thread that runs vmm_wait's serve. 0, or -1 with a reason. */
int vmm_dev_limit(struct vmm *v, const char *option, unsigned int index, unsigned int dir,
		  const struct ratelimit_cfg *cfg, unsigned int mask, char *err, size_t errlen);

/* A change for the index-th device of --OPTION while the guest runs
 * (devmgr_update), from the thread that runs vmm_wait's serve. 0, or -1
 * with a reason. */
int vmm_dev_update(struct vmm *v, const char *option, unsigned int index, const char *spec,
		   char *err, size_t errlen);

/* The name of the index-th device of --OPTION (devmgr_name): the owner
 * of its counters; NULL if there is none (or no VM). */
const char *vmm_dev_name(const struct vmm *v, const char *option, unsigned int index);
/* Every counter of the VM: I/O threads, devices, transports, queues. */
void vmm_counters(void *vmm, counter_emit_fn emit, void *ctx);
/* What the exit accounting reads of this VM, as of now. */
struct exit_stats_src vmm_stats_src(struct vmm *v);

#endif
