// SPDX-License-Identifier: Apache-2.0
/* Snapshots of a whole VM (docs/SNAPSHOT.md): the state file (core/snap.h)
 * from its parts' own save functions, guest RAM in a file of its own; and
 * back, into a VM built afresh from what the state file describes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/arch.h"
#include "core/sandbox.h"
#include "core/snap.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/vcpu.h"
#include "core/vm_dirty.h"
#include "vmm/vmm.h"
#include "vmm/vmm_dirty.h"
#include "vmm/vmm_mig_allow.h"

/* The VM's shape, enough to build it again. */
struct snap_vm_config {
	uint64_t mem;
	uint32_t cpus;
	uint32_t nr_devs;
};

/* Under the controller's seccomp filter the files must exist already
 * (it creates none: SECURITY.md); without it they are created. Opened
 * O_NONBLOCK, as a FIFO's open would wait for a reader with the API's
 * controller inside it, and refused unless regular files: guest RAM
 * "saved" to /dev/null, a pipe or a device is no snapshot. */
static int snap_file_open(const char *path, int *fd, char *err, size_t errlen)
{
	int flags = O_WRONLY | O_CLOEXEC | O_NONBLOCK | (sandbox_active() ? 0 : O_CREAT);
	struct stat st;
	*fd = open(path, flags, 0600);
	if (*fd < 0) {
		/* ENXIO: a FIFO nobody reads, or a socket */
		snprintf(err, errlen, "cannot open %s: %s%s", path,
			 errno == ENXIO ? "it is not a regular file" : strerror(errno),
			 errno == ENOENT && sandbox_active()
			     ? " (under seccomp skiff writes only files that exist)"
			     : "");
		return -1;
	}
	if (fstat(*fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s is not a regular file", path);
		close(*fd);
		*fd = -1;
		return -1;
	}
	return 0;
}

/* Both files, distinct: one path for both (or two names of one file)
 * would leave the state written over the memory, and a 204. */
static int snap_files_open(const struct vmm *v, const char *state_path, const char *mem_path,
			   int fd[2], char *err, size_t errlen)
{
	struct stat st[2];
	const char *path[2] = {mem_path, state_path};
	if (snap_file_open(mem_path, &fd[0], err, errlen) < 0 ||
	    snap_file_open(state_path, &fd[1], err, errlen) < 0)
		return -1;
	if (fstat(fd[0], &st[0]) < 0 || fstat(fd[1], &st[1]) < 0 || vmm_same_file(&st[0], &st[1])) {
		snprintf(err, errlen, "%s and %s are the same file", state_path, mem_path);
		return -1;
	}
	/* No running VM's RAM may be read from either (vmm_mem_file.h):
	 * writing one would change that RAM, cutting it short unmap it. */
	for (int i = 0; i < 2; i++)
		if (vmm_mem_file_guard(&v->mem_file, fd[i], path[i], err, errlen) < 0)
			return -1;
	return 0;
}

/* The file ends up exactly len bytes long. */
static int snap_file_write(int fd, const char *path, const void *buf, size_t len, char *err,
			   size_t errlen)
{
	const uint8_t *b = buf;
	for (size_t off = 0; off < len;) {
		ssize_t n = write(fd, b + off, len - off > (1u << 30) ? 1u << 30 : len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "cannot write %s: %s", path,
				 n < 0 ? strerror(errno) : "short write");
			return -1;
		}
		off += (size_t)n;
	}
	if (ftruncate(fd, (off_t)len) < 0 || fsync(fd) < 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int vmm_state_image(struct vmm *v, struct snap_writer *w, char *err, size_t errlen)
{
	struct snap_vm_config sc = {v->vm.mem.size, (uint32_t)v->vm.nr_cpus, v->dm.nr};
	if (snap_put(w, SNAP_ID_VM_CONFIG, 0, &sc, sizeof(sc)) < 0 ||
	    snap_put(w, SNAP_ID_VM_CLOCK, 0, &v->paused_clock, sizeof(v->paused_clock)) < 0 ||
	    arch_vm_save(v->vm.vm_fd, w, err, errlen) < 0)
		return -1;
	for (int i = 0; i < v->vm.nr_cpus; i++)
		if (arch_vcpu_save(v->vm.kvm_fd, v->vm.vm_fd, v->vm.vcpus[i]->fd, (uint32_t)i, w,
				   err, errlen) < 0)
			return -1;
	if (uart_save(&v->uart, w, SNAP_ID_UART, 0, err, errlen) < 0 ||
	    i8042_save(&v->kbd, w, SNAP_ID_I8042, 0, err, errlen) < 0)
		return -1;
	return devmgr_save(&v->dm, w, err, errlen);
}

static int vmm_snap_write(struct vmm *v, struct snap_writer *w, const int fd[2],
			  const char *state_path, const char *mem_path, bool diff, char *err,
			  size_t errlen)
{
	size_t len;
	const uint8_t *img;
	if (vmm_state_image(v, w, err, errlen) < 0 || !(img = snap_writer_image(w, &len))) {
		if (!err[0])
			snprintf(err, errlen, "out of memory building the snapshot");
		return -1;
	}
	/* The state first: the memory's write reads and clears the dirty
	 * logs, and puts them back only on its own failure, so nothing may
	 * fail after it (a failed state write lost them: the next Diff lacked
	 * those pages, vhost's frames among them). */
	if (snap_file_write(fd[1], state_path, img, len, err, errlen) < 0 ||
	    vmm_snap_mem(v, fd[0], mem_path, diff, err, errlen) < 0)
		return -1;
	return 0;
}

/* A Diff needs every write to guest RAM since the last snapshot in a log:
 * KVM's, skiff's, and a device's own where it writes unseen (vhost=on),
 * which the build turned on with the tracking (vmm_dev_logs_start); if it
 * could not, why. */
static int diff_check(const struct vmm *v, char *err, size_t errlen)
{
	if (v->dev_logs_err[0]) {
		snprintf(err, errlen, "%s", v->dev_logs_err);
		return -1;
	}
	return devmgr_can_track(&v->dm, "take a Diff snapshot of", v->dev_logs, false, err, errlen);
}

int vmm_snapshot_create(struct vmm *v, const char *state_path, const char *mem_path, bool diff,
			char *err, size_t errlen)
{
	err[0] = '\0';
	pthread_mutex_lock(&v->ctl_lock);
	int r = -1, fd[2] = {-1, -1};
	struct snap_writer w;
	snap_writer_init(&w);
	if (!v->paused) {
		snprintf(err, errlen, "the microVM is not paused");
		goto out;
	}
	if (diff && !vm_dirty_on(&v->vm)) {
		snprintf(
		    err, errlen,
		    "Diff snapshots are not allowed on uVMs with dirty page tracking disabled.");
		goto out;
	}
	/* Refused before anything is written. */
	if (devmgr_can_save(&v->dm, "snapshot", err, errlen) < 0 ||
	    (diff && diff_check(v, err, errlen) < 0) ||
	    snap_files_open(v, state_path, mem_path, fd, err, errlen) < 0)
		goto out;
	/* Batched MMIO writes belong to the devices' state, and the devices'
	 * threads stop touching guest memory and rings until both files are
	 * written: the state and the memory agree. */
	vmm_devices_hold(v, true);
	r = vmm_snap_write(v, &w, fd, state_path, mem_path, diff, err, errlen);
	vmm_devices_hold(v, false);
out:
	for (int i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	snap_writer_free(&w);
	pthread_mutex_unlock(&v->ctl_lock);
	return r;
}

/* Everything checked before the VM exists: the file whole, the shape
 * sane, every vCPU's and the VM's sections there and sized right. */
static int vmm_snap_check(const struct snap_image *img, struct snap_vm_config *sc,
			  struct devmgr_snap_list *l, char *err, size_t errlen)
{
	if (snap_get(img, SNAP_ID_VM_CONFIG, 0, sc, sizeof(*sc), err, errlen) < 0)
		return -1;
	/* No more RAM than --mem or the API could ask for, as a migration's
	 * HELLO (review10). */
	if (sc->cpus < 1 || sc->cpus > VM_MAX_CPUS || !sc->mem || sc->mem > VM_MEM_MAX ||
	    sc->mem % 4096 || sc->nr_devs > VMM_MAX_DEVICES) {
		snprintf(err, errlen, "snapshot describes an impossible VM (%u vCPUs, %llu bytes)",
			 sc->cpus, (unsigned long long)sc->mem);
		return -1;
	}
	uint64_t ns;
	if (snap_get(img, SNAP_ID_VM_CLOCK, 0, &ns, sizeof(ns), err, errlen) < 0 ||
	    arch_vm_check(img, err, errlen) < 0)
		return -1;
	for (uint32_t i = 0; i < sc->cpus; i++)
		if (arch_vcpu_check(img, i, err, errlen) < 0)
			return -1;
	static const uint32_t platform[] = {SNAP_ID_UART, SNAP_ID_I8042};
	for (size_t i = 0; i < sizeof(platform) / sizeof(platform[0]); i++)
		if (!snap_find(img, platform[i], 0)) {
			snprintf(err, errlen, "snapshot has no %s state",
				 snap_id_name(platform[i]));
			return -1;
		}
	if (devmgr_snap_list(img, l, err, errlen) < 0)
		return -1;
	if (l->nr != sc->nr_devs) {
		snprintf(err, errlen, "snapshot lists %u devices, its VM had %u", l->nr,
			 sc->nr_devs);
		free(l->buf);
		return -1;
	}
	return 0;
}

/* The saved VM's devices, asked for again as they were, but for the taps
 * network_overrides name: each must name a card the snapshot has
 * (Firecracker's words, and the id). */
static int vmm_snap_devs(struct vmm_config *c, const struct devmgr_snap_list *l, char *err,
			 size_t errlen)
{
	c->nr_devs = (int)l->nr;
	for (unsigned int i = 0; i < l->nr; i++)
		c->devs[i] = (struct vmm_dev_arg){l->arg[i].option, l->arg[i].spec, l->arg[i].key,
						  l->arg[i].value, l->id[i]};
	for (unsigned int k = 0; k < c->nr_net_overrides; k++) {
		const struct vmm_net_override *o = &c->net_overrides[k];
		unsigned int i = 0;
		while (i < l->nr && !(l->id[i][0] && !strcmp(l->id[i], o->iface_id) &&
				      l->arg[i].key && !strcmp(l->arg[i].key, "tap")))
			i++;
		if (i == l->nr) {
			snprintf(err, errlen,
				 "Unknown Network Device. (network_overrides: no iface_id `%.64s` "
				 "in the snapshot)",
				 o->iface_id);
			return -1;
		}
		c->devs[i].value = o->host_dev_name;
	}
	return 0;
}

/* On a VM built from the snapshot, not yet run: the chips first (a
 * device's restored line then meets the chip's restored state), the
 * vCPUs, the devices. */
static int vmm_snap_apply(struct vmm *v, const struct snap_image *img, char *err, size_t errlen)
{
	if (arch_vm_restore(v->vm.vm_fd, img, err, errlen) < 0 ||
	    snap_get(img, SNAP_ID_VM_CLOCK, 0, &v->paused_clock, sizeof(v->paused_clock), err,
		     errlen) < 0 ||
	    vm_clock_set(&v->vm, v->paused_clock) < 0)
		return err[0] ? -1 : (snprintf(err, errlen, "KVM_SET_CLOCK failed"), -1);
	for (int i = 0; i < v->vm.nr_cpus; i++)
		if (arch_vcpu_restore(v->vm.kvm_fd, v->vm.vm_fd, v->vm.vcpus[i]->fd, (uint32_t)i,
				      img, err, errlen) < 0)
			return -1;
	const struct snap_section *u = snap_find(img, SNAP_ID_UART, 0);
	const struct snap_section *k = snap_find(img, SNAP_ID_I8042, 0);
	if (uart_restore(&v->uart, u->data, u->len, err, errlen) < 0 ||
	    i8042_restore(&v->kbd, k->data, k->len, err, errlen) < 0)
		return -1;
	return devmgr_restore(&v->dm, img, err, errlen);
}

int vmm_restore(struct vmm *v, const struct vmm_config *base, const struct snap_image *img,
		bool resume, uint64_t start_ns, const struct vmm_restore_hook *hook, int *status,
		char *err, size_t errlen)
{
	struct snap_vm_config sc;
	struct devmgr_snap_list l;
	err[0] = '\0';
	*status = 2;
	if (vmm_snap_check(img, &sc, &l, err, errlen) < 0)
		return -1;
	struct vmm_config c = *base;
	c.mem = sc.mem;
	c.cpus = (int)sc.cpus;
	/* skiff_allow before anything is built, opened or handed over. */
	if (vmm_snap_devs(&c, &l, err, errlen) < 0 ||
	    vmm_allow_check(c.allow, &c, err, errlen) < 0 ||
	    (hook && hook->before_build(hook->opaque, err, errlen) < 0)) {
		free(l.buf);
		return -1;
	}
	c.nr_vcpu_pin = 0;
	c.kernel = c.initrd = NULL;
	if (c.iothreads < 1)
		c.iothreads = 1;
	uint64_t t[5] = {monotonic_ns()};
	int r = vmm_build(v, &c, start_ns, status, err, errlen);
	t[1] = monotonic_ns();
	free(l.buf);
	if (r == 0) {
		*status = 1;
		r = vmm_snap_apply(v, img, err, errlen);
	}
	if (r < 0)
		goto fail;
	t[2] = monotonic_ns();
	/* Started paused: the vCPU threads park before their first KVM_RUN,
	 * and a resume sets the snapshot's clock again (vmm_resume). */
	v->paused = true;
	vcpu_gate_close(&v->vm.gate, NULL, NULL);
	r = vmm_start(v, false, err, errlen);
	t[3] = monotonic_ns();
	if (r < 0 || (resume && vmm_resume(v) < 0)) {
		if (!err[0])
			snprintf(err, errlen, "cannot resume the restored VM");
		goto fail;
	}
	t[4] = monotonic_ns();
	/* Where a restore's time goes (a migration's downtime ends here; its
	 * VM was made at HELLO, before this). */
	uint64_t made = v->vm_made_ns > t[0] ? v->vm_made_ns : t[0];
	log_info("restore: VM %llu ms, devices %llu ms, state %llu ms, threads %llu ms, "
		 "resume %llu ms",
		 (unsigned long long)((made - t[0]) / 1000000),
		 (unsigned long long)((t[1] - made) / 1000000),
		 (unsigned long long)((t[2] - t[1]) / 1000000),
		 (unsigned long long)((t[3] - t[2]) / 1000000),
		 (unsigned long long)((t[4] - t[3]) / 1000000));
	return 0;
fail:
	vmm_destroy(v);
	return -1;
}

int vmm_snapshot_load(struct vmm *v, const struct vmm_config *base, const char *state_path,
		      const char *mem_path, bool resume, uint64_t start_ns, int *status, char *err,
		      size_t errlen)
{
	struct snap_image img;
	err[0] = '\0';
	*status = 2;
	if (snap_read_file(&img, state_path, err, errlen) < 0)
		return -1;
	struct vmm_config c = *base;
	c.mem_file = mem_path;
	int r = vmm_restore(v, &c, &img, resume, start_ns, NULL, status, err, errlen);
	snap_image_free(&img);
	return r;
}
