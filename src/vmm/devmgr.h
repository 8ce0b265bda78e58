// SPDX-License-Identifier: Apache-2.0
/* The device manager: creates the devices the command line asks for from
 * one table of device kinds (devmgr_kinds.c), names them ("virtio-blk0"),
 * settles what belongs to the VM rather than to a device (default and
 * duplicate MACs, which I/O thread serves a device, whether kicks are
 * eventfds), puts each on its transport (virtio-pci, or the PCI bus for a
 * PCI-native device), and drives every device through start, stop and
 * destroy in order. Devices never see it: a kind's folder only fills in
 * its row, a struct dm_kind. */
#ifndef SKIFF_DEVMGR_H
#define SKIFF_DEVMGR_H

#include <stdbool.h>
#include <stddef.h>

#include "core/counter.h"
#include "devices/dev_kind.h"
#include "devices/device.h"

struct pci_bus;
struct iothread;
struct snap_writer;
struct snap_image;

#define DEVMGR_MAX 64

/* Every kind, each row in its own folder (devmgr_kinds.c lists them). */
extern const struct dm_kind *const dm_kinds[];
extern const size_t dm_nr_kinds;

struct dm_entry {
	const struct dm_kind *kind;
	char name[24];
	struct device d;
	uint8_t mac[6]; /* is_net kinds */
	/* What asked for it (devmgr_arg, copied): a snapshot's device list,
	 * so a load builds the same device again. */
	char *arg_option, *arg_key, *arg_value, *arg_spec;
	char *arg_id; /* the API's id ("" if none): network_overrides find it */
};

struct devmgr {
	struct pci_bus *pci;
	const struct guest_mem *gm;
	struct iothread *io; /* nr_io of them; devices go round-robin */
	unsigned int nr_io;
	bool use_ioeventfd;
	const struct dev_host *host;	    /* what the VM does for devices */
	unsigned int nr_vcpus;		    /* passed on in dev_ctx */
	bool halt_in_guest;		    /* passed on in dev_ctx */
	const struct dm_kind *const *kinds; /* NULL: dm_kinds (tests bring their own) */
	size_t nr_kinds;
	struct dm_entry devs[DEVMGR_MAX];
	unsigned int nr, nr_net;
	bool stopped;
};

/* A device asked for: `--OPTION SPEC`, and (key not NULL) one option
 * given apart as a typed value (a disk's path, a card's tap), taken whole:
 * the API's path with a comma in it is that path, not two options. */
struct devmgr_arg {
	const char *option, *spec, *key, *value;
	const char *id; /* the API's id (iface_id, drive_id), or NULL */
};

/* devmgr_check and devmgr_add for a devmgr_arg. */
int devmgr_check_arg(const struct devmgr_arg *a, bool use_ioeventfd, char *err, size_t errlen);
int devmgr_add_arg(struct devmgr *dm, const struct devmgr_arg *a, char *err, size_t errlen);
/* devmgr_check_arg, then the kind's API check against the machine
 * (dev_api.check_vm, memory in MiB). Its reason is the kind's own words,
 * without the "--OPTION SPEC: " a bad spec gets. */
int devmgr_check_api(const struct devmgr_arg *a, bool use_ioeventfd, uint64_t mem_mib, char *err,
		     size_t errlen);
/* Every device of a VM checked, each alone (devmgr_check_arg) and then
 * each kind's together (dm_kind.check_set): 0, or -1 with the reason
 * about the first at fault, in devmgr_check_arg's form. */
int devmgr_check_args(const struct devmgr_arg *args, unsigned int n, bool use_ioeventfd, char *err,
		      size_t errlen);
/* Checks `--OPTION SPEC` without creating anything (before the VM
 * exists): 0, or -1 with the same one-line reason devmgr_add would give. */
int devmgr_check(const char *option, const char *spec, bool use_ioeventfd, char *err,
		 size_t errlen);
/* Adds the device that `--OPTION SPEC` asks for. 0, or -1 with a one-line
 * reason in err (bad spec, refused resource, no slot); nothing of the
 * failed device is left behind. */
int devmgr_add(struct devmgr *dm, const char *option, const char *spec, char *err, size_t errlen);
/* After every device is attached, before the threads run. */
int devmgr_start(struct devmgr *dm, char *err, size_t errlen);
/* After the vCPUs and I/O threads have stopped: stops every device (in
 * reverse order), waiting for its in-flight work. Idempotent. */
void devmgr_stop(struct devmgr *dm);
/* Frees every device; then the PCI bus may free the transports. */
void devmgr_destroy(struct devmgr *dm);
/* A new medium for the index-th device of --OPTION (the main thread,
 * while the guest runs): 0, or -1 with a reason. */
int devmgr_replace(struct devmgr *dm, const char *option, unsigned int index, const char *path,
		   char *err, size_t errlen);
/* New rate limits (dev_ops.limit) for the index-th device of --OPTION,
 * from the main thread while the guest runs: 0, or -1 with a reason. */
int devmgr_limit(struct devmgr *dm, const char *option, unsigned int index, unsigned int dir,
		 const struct ratelimit_cfg *cfg, unsigned int mask, char *err, size_t errlen);
/* A change (dev_ops.update) for the index-th device of --OPTION, from the
 * main thread while the guest runs: 0, or -1 with a reason. */
int devmgr_update(struct devmgr *dm, const char *option, unsigned int index, const char *spec,
		  char *err, size_t errlen);
/* The name ("virtio-blk1") of the index-th device of --OPTION, the one
 * devmgr_replace would reach and its counters' owner; NULL if none. */
const char *devmgr_name(const struct devmgr *dm, const char *option, unsigned int index);
/* Every device's and transport's counters. */
void devmgr_counters(const struct devmgr *dm, counter_emit_fn emit, void *ctx);
/* Snapshots (core/snap.h): every device's state, as section
 * (SNAP_ID_DEVICE, its place in the manager), on a paused VM. Refused, in
 * one line naming the first device, if any device cannot be saved (its
 * kind's or its own no_snapshot, or no save). devmgr_can_save says so
 * without writing anything: "cannot WHAT a VM with NAME: why". */
int devmgr_can_save(const struct devmgr *dm, const char *what, char *err, size_t errlen);
/* Whether every device's writes to guest memory are in the dirty logs
 * (dev_ops.dirty_blind), or, with logs (a migration; a Diff of a VM whose
 * devices' logs are on), can be (dev_ops.dirty_log), or, with stops (a
 * migration), can stop (dev_ops.dirty_stop): 0, or -1 with "cannot WHAT
 * a VM with NAME: why". */
int devmgr_can_track(const struct devmgr *dm, const char *what, bool logs, bool stops, char *err,
		     size_t errlen);
/* Every device's dirty_stop (a migration's pre-copy: stop; a failed one:
 * !stop). On a failure to stop, those stopped before go again: 0, or -1
 * with "NAME: why". */
int devmgr_dirty_stop(const struct devmgr *dm, bool stop, char *err, size_t errlen);
/* Every device's dirty_log on (log) or off (NULL). On a failure those
 * already on are turned off, and -1 with "NAME: why". */
int devmgr_dirty_log(const struct devmgr *dm, _Atomic uint64_t *log, char *err, size_t errlen);
int devmgr_save(const struct devmgr *dm, struct snap_writer *w, char *err, size_t errlen);
/* Each device's section back, on devices built from the same
 * configuration whose guest has not run: first that every section is
 * there, then each device in turn (each checks its own payload before it
 * changes anything). On -1 the VM is half-restored: its owner discards
 * it, as a failed /snapshot/load does. */
int devmgr_restore(struct devmgr *dm, const struct snap_image *img, char *err, size_t errlen);
/* A snapshot's device list (SNAP_ID_DEV_LIST), checked: what to ask
 * devmgr_add_arg for, in order, to build the saved VM's devices again.
 * Strings in buf (free it). 0, or -1 with one line in err. */
struct devmgr_snap_list {
	unsigned int nr;
	struct devmgr_arg arg[DEVMGR_MAX];
	const char *name[DEVMGR_MAX];
	const char *id[DEVMGR_MAX]; /* "" where none was saved */
	char *buf;
};
int devmgr_snap_list(const struct snap_image *img, struct devmgr_snap_list *l, char *err,
		     size_t errlen);

/* The threads' filters compiled now (core/sandbox.h: sandbox_prepare)
 * for a VM with these devices, to be built later (a migration target,
 * while the pages stream): the sets each device's kind adds, then
 * compiled; none left added. The specs are parsed only: no kind's host
 * check runs (the list is a hostile source's until skiff_allow has seen
 * the state's). 0, or -1 with one line naming a device whose spec does
 * not parse or that cannot migrate. */
int devmgr_sandbox_prepare(const struct devmgr_arg *args, unsigned int n, char *err, size_t errlen);
/* The device list alone (SNAP_ID_DEV_LIST, as devmgr_save writes it):
 * a migration's CONFIG. 0, or -1 (out of memory). */
int devmgr_save_list_only(const struct devmgr *dm, struct snap_writer *w);

/* dev_ops.handover for every device that has it (a live migration's
 * switch): release stops at the first failure; !release tries them all.
 * 0, or -1 with the (last) reason. */
int devmgr_handover(struct devmgr *dm, bool release, char *err, size_t errlen);
/* dev_ops.hold for every device that has it. */
void devmgr_hold(struct devmgr *dm, bool on);

/* The kind for --OPTION with SPEC's model=, or NULL with a reason. */
const struct dm_kind *devmgr_kind(const char *option, const char *spec, char *err, size_t errlen);

#endif
