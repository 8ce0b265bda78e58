// SPDX-License-Identifier: Apache-2.0
/* Review of Diff snapshots with vhost's dirty log (vmm/vmm_dirty.c,
 * vmm/vmm_snap.c; merge 76c8fc0) and of the devices' own threads during
 * a snapshot (the vsockvhost helper's finding). Each test is a finding's
 * proof: it failed before the fix named in its comment. No KVM: the VM's fd is an
 * eventfd whose ioctls this file answers with zeroes (no vCPUs, a clean
 * KVM log), and fsync(2) fails on demand for the state file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/dirty.h"
#include "core/snap.h"
#include "core/vm_dirty.h"
#include "vmm/devmgr.h"
#include "vmm/vmm.h"

#define PAGE 4096u

static int fake_kvm_fd = -1;
static const char *fsync_fails; /* a path whose fsync fails (EIO) */

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (fd >= 0 && fd == fake_kvm_fd)
		return 0; /* KVM_GET_PIT2, _IRQCHIP, _DIRTY_LOG: zeroes */
	return (int)syscall(SYS_ioctl, fd, req, arg);
}

int fsync(int fd)
{
	char link[64], path[256];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	if (n > 0 && fsync_fails) {
		path[n] = '\0';
		if (!strcmp(path, fsync_fails)) {
			errno = EIO;
			return -1;
		}
	}
	return (int)syscall(SYS_fsync, fd);
}

/* A paused VM of 4 pages whose KVM fd answers zeroes, no vCPU, no
 * device. */
static struct vmm *fake_vmm(uint8_t **ram)
{
	*ram = calloc(4, PAGE);
	struct vmm *v = calloc(1, sizeof(*v));
	assert_true(*ram && v);
	pthread_mutex_init(&v->ctl_lock, NULL);
	v->paused = true;
	v->vm.vm_fd = fake_kvm_fd = eventfd(0, EFD_CLOEXEC);
	v->vm.kvm_fd = -1;
	v->vm.mem = (struct guest_mem){*ram, 4 * PAGE, 4 * PAGE};
	assert_int_equal(dirty_log_init(&v->vm.dirty, *ram, 4 * PAGE, false), 0);
	return v;
}

static void fake_vmm_free(struct vmm *v, uint8_t *ram)
{
	close(v->vm.vm_fd);
	fake_kvm_fd = -1;
	vm_dirty_disable(&v->vm);
	pthread_mutex_destroy(&v->ctl_lock);
	free(v);
	free(ram);
}

static bool file_page_is(const char *path, unsigned int p, uint8_t b)
{
	uint8_t buf[PAGE];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = pread(fd, buf, sizeof(buf), (off_t)p * PAGE);
	close(fd);
	if (n != (ssize_t)sizeof(buf))
		return false;
	for (size_t i = 0; i < sizeof(buf); i++)
		if (buf[i] != b)
			return false;
	return true;
}

/* Finding 1 (vmm_snap.c vmm_snap_write): a snapshot wrote the memory
 * file first, which reads and clears the dirty logs (KVM's, skiff's and
 * vhost's), then the state file; when the state's write failed the
 * request failed, but the logs stayed cleared: the next Diff, the one the
 * user keeps, lacked every page written before the failed one (vhost's
 * received frames among them). Fixed: the state is written first, so a
 * failure after the logs are read is the memory file's own, which puts
 * them back. */
static void test_failed_state_keeps_logs(void **state)
{
	(void)state;
	char dir[] = "/tmp/skiff-rvsnapvhost-XXXXXX", sp[96], mp[96], err[400];
	assert_non_null(mkdtemp(dir));
	snprintf(sp, sizeof(sp), "%s/state", dir);
	snprintf(mp, sizeof(mp), "%s/mem", dir);
	uint8_t *ram;
	struct vmm *v = fake_vmm(&ram);
	/* skiff writes page 1; vhost writes page 2 and logs it. */
	memset(ram + PAGE, 0xcd, PAGE);
	dirty_log_mark(&v->vm.dirty, ram + PAGE, 1);
	_Atomic uint64_t *gpa = vm_dirty_gpa_log(&v->vm);
	assert_non_null(gpa);
	memset(ram + 2 * PAGE, 0xab, PAGE);
	atomic_fetch_or(&gpa[0], 1ull << 2);
	fsync_fails = sp;
	assert_int_equal(vmm_snapshot_create(v, sp, mp, true, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot write"));
	fsync_fails = NULL;
	/* The retry's Diff holds both pages. */
	assert_int_equal(vmm_snapshot_create(v, sp, mp, true, err, sizeof(err)), 0);
	assert_true(file_page_is(mp, 1, 0xcd));
	assert_true(file_page_is(mp, 2, 0xab));
	assert_true(file_page_is(mp, 0, 0) && file_page_is(mp, 3, 0));
	fake_vmm_free(v, ram);
	unlink(sp);
	unlink(mp);
	rmdir(dir);
}

/* The vsockvhost helper's finding (vmm/vmm_snap.c, vmm_mig_send.c): a
 * snapshot and a migration's switch parked the I/O threads only, while
 * the hybrid vsock's own thread went on moving host data into guest
 * memory between the state's build and the memory's write, so that the
 * saved rings and the saved memory disagreed. Fixed: vmm_devices_hold
 * holds every device with dev_ops.hold too, from before the state is
 * built until both files are written (virtio_vsock_hold: test_hold in
 * test_virtio_vsock.c). */
struct held_dev {
	int holds;	/* hold(on) less hold(off) */
	int saved_held; /* save() ran while held */
	int calls;
};

static void hd_hold(void *dev, bool on)
{
	struct held_dev *h = dev;
	h->holds += on ? 1 : -1;
	h->calls++;
}

static int hd_save(void *dev, struct snap_writer *w, uint32_t id, uint32_t inst, char *err,
		   size_t errlen)
{
	struct held_dev *h = dev;
	(void)err, (void)errlen;
	h->saved_held = h->holds == 1;
	return snap_put(w, id, inst, &h->holds, sizeof(h->holds));
}

static int hd_restore(void *dev, const void *data, size_t len, char *err, size_t errlen)
{
	(void)dev, (void)data, (void)len, (void)err, (void)errlen;
	return 0;
}

static void hd_nop(void *dev)
{
	(void)dev;
}

static void test_devices_held_while_saved(void **state)
{
	(void)state;
	static const struct dev_ops ops = {.stop = hd_nop,
					   .destroy = hd_nop,
					   .save = hd_save,
					   .restore = hd_restore,
					   .hold = hd_hold};
	static const struct dm_kind kind = {.option = "held", .prefix = "held"};
	char dir[] = "/tmp/skiff-rvsnaphold-XXXXXX", sp[96], mp[96], err[400];
	assert_non_null(mkdtemp(dir));
	snprintf(sp, sizeof(sp), "%s/state", dir);
	snprintf(mp, sizeof(mp), "%s/mem", dir);
	uint8_t *ram;
	struct vmm *v = fake_vmm(&ram);
	struct held_dev h = {0};
	struct dm_entry *e = &v->dm.devs[v->dm.nr++];
	e->kind = &kind;
	snprintf(e->name, sizeof(e->name), "held0");
	e->d = (struct device){.dev = &h, .ops = &ops};
	if (vmm_snapshot_create(v, sp, mp, false, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_int_equal(h.saved_held, 1);
	assert_int_equal(h.holds, 0); /* and let go after */
	assert_int_equal(h.calls, 2);
	fake_vmm_free(v, ram);
	unlink(sp);
	unlink(mp);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_failed_state_keeps_logs),
	    cmocka_unit_test(test_devices_held_while_saved),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
