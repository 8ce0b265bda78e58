// SPDX-License-Identifier: Apache-2.0
/* vhost's dirty log for a live migration (issue 34.3, docs/MIGRATION.md
 * "vhost=on"): the kernel's log, a bit per guest-physical page, merged
 * into the VM's dirty set by host offset (core/vm_dirty.c), the hole
 * below 4 GiB left out; virtio-net's vhost=on card turning the log on and
 * off while its rings run, and starting with it on (virtio_net_vhost.c,
 * virtio/vhost.c), in the kernel's order; the device manager letting a
 * migration through with such a card, and a Diff snapshot only once the
 * card logs (track_dirty_pages turns it on at the build), and undoing a
 * half-started log; a Diff's memory file holding the pages only the
 * device's log saw. No /dev/vhost-net: the card's vhost fd is an eventfd,
 * and an ioctl of the test's plays the kernel on it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <linux/kvm.h>
#include <linux/vhost.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/dirty.h"
#include "core/vm.h"
#include "core/vm_dirty.h"
#include "devices/virtio-net/virtio_net_priv.h"
#include "fake_mem.h"
#include "iothread/iothread.h"
#include "vmm/devmgr.h"
#include "vmm/mig_proto.h"
#include "vmm/vmm.h"
#include "vmm/vmm_dirty.h"

#define QSZ	  64
#define LOG_ALL	  (1ull << VHOST_F_LOG_ALL)
#define F_VERSION (1ull << VIRTIO_F_VERSION_1)

/* The fake KVM's fd: KVM_GET_DIRTY_LOG answers a clean slot. */
static int fake_kvm_fd = -1;

/* ---- merging the log ---- */

static bool bit(const uint64_t *b, uint64_t i)
{
	return b[i / 64] >> (i % 64) & 1;
}

/* Low RAM of 128 pages at GPA 0, 69 more at 4 GiB (host offsets 128 on):
 * a log bit of low RAM lands at its page, one of high RAM 128 further
 * down than its GPA's 4 GiB, and one in the hole between lands nowhere
 * (at 128 it would dirty high RAM's first page in the wrong round). */
static void test_gpa_take(void **state)
{
	(void)state;
	struct vm vm;
	memset(&vm, 0, sizeof(vm));
	vm.mem.low_size = 128 * DIRTY_PAGE_SIZE;
	vm.mem.size = vm.mem.low_size + 69 * DIRTY_PAGE_SIZE;
	uint64_t out[4] = {0};
	vm_dirty_gpa_take(&vm, out); /* no log made: nothing */
	assert_int_equal(out[0] | out[1] | out[2] | out[3], 0);
	_Atomic uint64_t *log = vm_dirty_gpa_log(&vm);
	assert_non_null(log);
	assert_ptr_equal(vm_dirty_gpa_log(&vm), log); /* made once */
	const uint64_t hi = GUEST_MEM_HIGH_BASE / DIRTY_PAGE_SIZE;
	const uint64_t set[] = {3, 127, 128, 4000, hi - 1, hi, hi + 5, hi + 68};
	for (unsigned int i = 0; i < sizeof(set) / sizeof(set[0]); i++)
		atomic_fetch_or(&log[set[i] / 64], 1ull << (set[i] % 64));
	vm_dirty_gpa_take(&vm, out);
	for (uint64_t p = 0; p < 4 * 64; p++)
		if (bit(out, p) != (p == 3 || p == 127 || p == 128 || p == 133 || p == 196))
			fail_msg("host page %llu: %d", (unsigned long long)p, bit(out, p));
	/* Taken: cleared, the next collect sees only new marks. */
	for (uint64_t w = 0; w < 2; w++)
		assert_int_equal(atomic_load(&log[w]), 0);
	for (uint64_t w = hi / 64; w < hi / 64 + 2; w++)
		assert_int_equal(atomic_load(&log[w]), 0);
	memset(out, 0, sizeof(out));
	vm_dirty_gpa_take(&vm, out);
	assert_int_equal(out[0] | out[1] | out[2] | out[3], 0);
	/* A round's collect takes it with KVM's log (here: clean) and
	 * skiff's. */
	vm.vm_fd = fake_kvm_fd = eventfd(0, EFD_CLOEXEC);
	assert_int_equal(dirty_log_init(&vm.dirty, NULL, vm.mem.size, false), 0);
	atomic_fetch_or(&log[0], 1ull << 9);
	atomic_fetch_or(&log[hi / 64], 1ull << 1);
	assert_int_equal(vm_dirty_collect(&vm, out), 0);
	assert_int_equal(out[0], 1ull << 9);
	assert_int_equal(out[2], 1ull << 1);
	assert_int_equal(out[1] | out[3], 0);
	close(vm.vm_fd);
	fake_kvm_fd = -1;
	vm_dirty_disable(&vm); /* frees both */
	assert_null(vm.gpa_log);
}

/* A range that ends inside a word: its bits only, at their place. */
static void test_bits_take_partial(void **state)
{
	(void)state;
	_Atomic uint64_t log[3] = {~0ull, 1ull | 1ull << 5 | 1ull << 63, 1ull << 2 | 1ull << 8};
	uint64_t dst[3] = {0};
	dirty_bits_take(log, 64, 70, dst, 3);	       /* bits 64..133 to 3..72 */
	assert_int_equal(atomic_load(&log[0]), ~0ull); /* not in the range */
	assert_int_equal(atomic_load(&log[1]), 0);
	assert_int_equal(atomic_load(&log[2]), 0); /* its word taken whole */
	assert_true(bit(dst, 3) && bit(dst, 8) && bit(dst, 66) && bit(dst, 69));
	assert_int_equal(dirty_bits_count(dst, 192), 4); /* bit 136, beyond: not ORed */
}

/* ---- an ioctl that plays /dev/vhost-net on fake_fd ---- */

struct vcall {
	unsigned long req;
	unsigned int index;
	uint64_t val; /* features, log base */
	uint32_t flags;
	uint64_t log_addr;
};
static struct vcall calls[64];
static unsigned int ncalls;
static int fake_fd = -1;
static uint64_t fake_features = F_VERSION | LOG_ALL;

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (fd >= 0 && fd == fake_kvm_fd && req == KVM_GET_DIRTY_LOG)
		return 0;
	if (fd < 0 || fd != fake_fd)
		return (int)syscall(SYS_ioctl, fd, req, arg);
	struct vcall c = {.req = req};
	if (req == VHOST_SET_FEATURES || req == VHOST_SET_LOG_BASE) {
		c.val = *(uint64_t *)arg;
	} else if (req == VHOST_SET_VRING_ADDR) {
		const struct vhost_vring_addr *a = arg;
		c.index = a->index;
		c.flags = a->flags;
		c.log_addr = a->log_guest_addr;
	} else if (req == VHOST_GET_FEATURES) {
		*(uint64_t *)arg = fake_features;
	}
	if (ncalls < sizeof(calls) / sizeof(calls[0]))
		calls[ncalls++] = c;
	return 0;
}

/* The position of the first call req (for ring index, ~0u: any), or -1. */
static int call_at(unsigned long req, unsigned int index)
{
	for (unsigned int i = 0; i < ncalls; i++)
		if (calls[i].req == req && (index == ~0u || calls[i].index == index))
			return (int)i;
	return -1;
}

static unsigned int count(unsigned long req)
{
	unsigned int n = 0;
	for (unsigned int i = 0; i < ncalls; i++)
		n += calls[i].req == req;
	return n;
}

/* ---- a vhost=on card over the fake ---- */

static int fake_handoff(struct virtio_dev *vdev, unsigned int q, int *kick, int *call)
{
	(void)vdev;
	(void)q;
	*kick = *call = -1;
	return 0;
}

static void fake_takeback(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev;
	(void)q;
}

static void fake_notify_queue(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev;
	(void)q;
}

static void fake_notify_config(struct virtio_dev *vdev)
{
	(void)vdev;
}

static const struct virtio_transport_ops vhost_transport = {
    .notify_queue = fake_notify_queue,
    .notify_config = fake_notify_config,
    .queue_handoff = fake_handoff,
    .queue_takeback = fake_takeback,
};

struct fx {
	struct fake_mem fm;
	struct iothread io;
	struct virtio_net *n;
	int wire;
	_Atomic uint64_t log[4];
};

static uint64_t used_gpa(unsigned int q)
{
	return 0x10000 + 0x10000 * (uint64_t)q + 0x2000;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char err[200];
	int sv[2];
	struct tap tap;
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x43};
	assert_int_equal(fake_mem_init(&f->fm, 1 << 20), 0);
	assert_int_equal(iothread_init(&f->io, "io0"), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	tap_from_fd(&tap, sv[0]);
	f->wire = sv[1];
	f->n = virtio_net_create("virtio-net0", &tap, 1, mac, err, sizeof(err));
	assert_non_null(f->n);
	struct virtio_dev *v = &f->n->vdev;
	v->gm = &f->fm.gm;
	v->transport = &vhost_transport;
	v->driver_features = F_VERSION;
	pthread_mutex_init(&v->lock, NULL);
	f->n->io = &f->io;
	assert_int_equal(iothread_add_fd(&f->io, f->n->pairs[0].tap.fd, EPOLLIN,
					 virtio_net_tap_event, &f->n->pairs[0]),
			 0);
	for (unsigned int q = 0; q < 2; q++) {
		struct virtq *vq = &v->vqs[q];
		uint64_t desc = 0x10000 + 0x10000 * (uint64_t)q;
		assert_int_equal(virtq_init(vq, q ? "net tx" : "net rx", QSZ, NULL, NULL), 0);
		assert_int_equal(virtq_set_size(vq, QSZ), 0);
		assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_DESC, desc), 0);
		assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_AVAIL, desc + 0x1000), 0);
		assert_int_equal(virtq_set_addr(vq, VIRTQ_RING_USED, used_gpa(q)), 0);
		assert_int_equal(virtq_set_features(vq, F_VERSION), 0);
		assert_int_equal(virtq_activate(vq, &f->fm.gm), 0);
	}
	/* vhost=on, its fd the fake's. */
	fake_fd = eventfd(0, EFD_CLOEXEC);
	f->n->pairs[0].vhost.fd = fake_fd;
	f->n->pairs[0].vhost.features = fake_features;
	f->n->vhost_on = true;
	ncalls = 0;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	f->n->vdev.ops->reset(&f->n->vdev);
	f->n->vhost_on = false;
	vhost_close(&f->n->pairs[0].vhost);
	fake_fd = -1;
	virtio_net_destroy(f->n);
	iothread_destroy(&f->io);
	close(f->wire);
	fake_mem_free(&f->fm);
	free(f);
	fake_features = F_VERSION | LOG_ALL;
	return 0;
}

static void activate(struct fx *f)
{
	ncalls = 0;
	assert_int_equal(f->n->vdev.ops->activate(&f->n->vdev), 0);
	assert_true(f->n->vhost_running);
}

/* Both rings' addresses again, with (on) or without the log flag. */
static void assert_rings_logged(bool on)
{
	for (unsigned int q = 0; q < 2; q++) {
		int a = call_at(VHOST_SET_VRING_ADDR, q);
		assert_true(a >= 0);
		assert_int_equal(calls[a].flags, on ? 1u << VHOST_VRING_F_LOG : 0);
		assert_int_equal(calls[a].log_addr, on ? used_gpa(q) : 0);
	}
}

/* Running rings: the log base, LOG_ALL with the guest's features, then
 * each ring's used ring logged at its GPA (QEMU's order); off again:
 * the features without LOG_ALL, the rings without the flag. */
static void test_log_on_off_running(void **state)
{
	struct fx *f = *state;
	char err[200];
	activate(f);
	assert_int_equal(call_at(VHOST_SET_LOG_BASE, ~0u), -1); /* not logging */
	assert_int_equal(calls[call_at(VHOST_SET_FEATURES, ~0u)].val, F_VERSION);
	ncalls = 0;
	assert_int_equal(virtio_net_vhost_log(f->n, f->log, err, sizeof(err)), 0);
	assert_int_equal(ncalls, 4);
	assert_int_equal(calls[0].req, VHOST_SET_LOG_BASE);
	assert_int_equal(calls[0].val, (uint64_t)(uintptr_t)f->log);
	assert_int_equal(calls[1].req, VHOST_SET_FEATURES);
	assert_int_equal(calls[1].val, F_VERSION | LOG_ALL);
	assert_rings_logged(true);
	ncalls = 0;
	assert_int_equal(virtio_net_vhost_log(f->n, NULL, err, sizeof(err)), 0);
	assert_int_equal(ncalls, 3);
	assert_int_equal(calls[0].req, VHOST_SET_FEATURES);
	assert_int_equal(calls[0].val, F_VERSION);
	assert_rings_logged(false);
	assert_null(f->n->pairs[0].vhost.log);
}

/* The guest resets and restarts the card during the pre-copy: the new
 * start logs too, and sets the memory table before asking for LOG_ALL
 * (the kernel refuses LOG_ALL with EFAULT until the log covers a table). */
static void test_start_while_logging(void **state)
{
	struct fx *f = *state;
	char err[200];
	assert_int_equal(virtio_net_vhost_log(f->n, f->log, err, sizeof(err)), 0);
	assert_int_equal(ncalls, 0); /* nothing runs yet: kept for the start */
	activate(f);
	int mem = call_at(VHOST_SET_MEM_TABLE, ~0u), base = call_at(VHOST_SET_LOG_BASE, ~0u),
	    feat = call_at(VHOST_SET_FEATURES, ~0u), addr = call_at(VHOST_SET_VRING_ADDR, 0);
	assert_true(mem >= 0 && mem < base && base < feat && feat < addr);
	assert_int_equal(calls[feat].val, F_VERSION | LOG_ALL);
	assert_rings_logged(true);
	/* Reset, and started again after the migration failed: no log. */
	f->n->vdev.ops->reset(&f->n->vdev);
	assert_int_equal(virtio_net_vhost_log(f->n, NULL, err, sizeof(err)), 0);
	activate(f);
	assert_int_equal(count(VHOST_SET_LOG_BASE), 0);
	assert_int_equal(calls[call_at(VHOST_SET_FEATURES, ~0u)].val, F_VERSION);
	assert_rings_logged(false);
}

/* A vhost without LOG_ALL cannot log: one line, nothing asked of it,
 * the card as it was. */
static void test_no_log_all(void **state)
{
	struct fx *f = *state;
	char err[200] = "";
	activate(f);
	f->n->pairs[0].vhost.features &= ~LOG_ALL;
	ncalls = 0;
	assert_int_equal(virtio_net_vhost_log(f->n, f->log, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "dirty log"));
	assert_null(strchr(err, '\n'));
	assert_int_equal(count(VHOST_SET_LOG_BASE) + count(VHOST_SET_VRING_ADDR), 0);
	assert_null(f->n->pairs[0].vhost.log);
}

/* ---- the device manager ---- */

static unsigned int log_on[2], log_off[2];
static int log_fail = -1;	       /* this device's dirty_log(on) fails */
static _Atomic uint64_t *log_given[2]; /* the last log turned on */

static const char *blind(const void *dev)
{
	(void)dev;
	return "writes outside the log";
}

static int dev_log(void *dev, _Atomic uint64_t *log, char *err, size_t errlen)
{
	int i = (int)(intptr_t)dev;
	if (log && i == log_fail) {
		snprintf(err, errlen, "no log here");
		return -1;
	}
	(log ? log_on : log_off)[i]++;
	if (log)
		log_given[i] = log;
	return 0;
}

static void dummy_stop(void *dev)
{
	(void)dev;
}

static int dummy_save(void *dev, struct snap_writer *w, uint32_t id, uint32_t instance, char *err,
		      size_t errlen)
{
	(void)dev, (void)w, (void)id, (void)instance, (void)err, (void)errlen;
	return 0;
}

static int dummy_restore(void *dev, const void *data, size_t len, char *err, size_t errlen)
{
	(void)dev, (void)data, (void)len, (void)err, (void)errlen;
	return 0;
}

static const struct dev_ops blind_ops = {
    .stop = dummy_stop, .destroy = dummy_stop, .dirty_blind = blind};
static const struct dev_ops logged_ops = {.stop = dummy_stop,
					  .destroy = dummy_stop,
					  .save = dummy_save,
					  .restore = dummy_restore,
					  .dirty_blind = blind,
					  .dirty_log = dev_log};

/* A migration passes a device that can log, a Diff snapshot only with
 * the logs on (logs: vmm_snapshot_create's check, below); one that
 * cannot log stops both.
 * A log that fails on the second device is turned off on the first. */
static void test_devmgr_logs(void **state)
{
	(void)state;
	struct devmgr *dm = calloc(1, sizeof(*dm));
	char err[200];
	_Atomic uint64_t log[1];
	dm->nr = 2;
	for (unsigned int i = 0; i < 2; i++) {
		snprintf(dm->devs[i].name, sizeof(dm->devs[i].name), "dev%u", i);
		dm->devs[i].d = (struct device){.dev = (void *)(intptr_t)i, .ops = &logged_ops};
	}
	assert_int_equal(devmgr_can_track(dm, "migrate", true, true, err, sizeof(err)), 0);
	assert_int_equal(
	    devmgr_can_track(dm, "take a Diff snapshot of", false, false, err, sizeof(err)), -1);
	assert_string_equal(
	    err, "cannot take a Diff snapshot of a VM with dev0: writes outside the log");
	dm->devs[1].d.ops = &blind_ops;
	assert_int_equal(devmgr_can_track(dm, "migrate", true, true, err, sizeof(err)), -1);
	assert_string_equal(err, "cannot migrate a VM with dev1: writes outside the log");
	dm->devs[1].d.ops = &logged_ops;
	assert_int_equal(devmgr_dirty_log(dm, log, err, sizeof(err)), 0);
	assert_true(log_on[0] == 1 && log_on[1] == 1);
	log_fail = 1;
	assert_int_equal(devmgr_dirty_log(dm, log, err, sizeof(err)), -1);
	assert_string_equal(err, "dev1: no log here");
	assert_int_equal(log_on[0], 2);
	assert_int_equal(log_off[0], 1); /* undone */
	assert_int_equal(log_off[1], 0);
	log_fail = -1;
	free(dm);
}

/* A device whose writer cannot log (vhost-vsock) but can stop: a
 * migration passes it (it stops for the pre-copy), a Diff snapshot does
 * not, logs on or not (tracking lasts the VM's life); a failure to stop
 * lets those stopped before go again. */
static unsigned int stops[2], goes[2];
static int stop_fail = -1;

static int dev_stop(void *dev, bool stop, char *err, size_t errlen)
{
	unsigned int i = (unsigned int)(intptr_t)dev;
	if (stop && (int)i == stop_fail) {
		snprintf(err, errlen, "cannot stop");
		return -1;
	}
	(stop ? stops : goes)[i]++;
	return 0;
}

static const struct dev_ops stopping_ops = {.stop = dummy_stop,
					    .destroy = dummy_stop,
					    .save = dummy_save,
					    .restore = dummy_restore,
					    .dirty_blind = blind,
					    .dirty_stop = dev_stop};

static void test_devmgr_stops(void **state)
{
	(void)state;
	struct devmgr *dm = calloc(1, sizeof(*dm));
	char err[200];
	dm->nr = 2;
	for (unsigned int i = 0; i < 2; i++) {
		snprintf(dm->devs[i].name, sizeof(dm->devs[i].name), "dev%u", i);
		dm->devs[i].d = (struct device){.dev = (void *)(intptr_t)i, .ops = &stopping_ops};
	}
	assert_int_equal(devmgr_can_track(dm, "migrate", true, true, err, sizeof(err)), 0);
	assert_int_equal(
	    devmgr_can_track(dm, "take a Diff snapshot of", true, false, err, sizeof(err)), -1);
	assert_string_equal(
	    err, "cannot take a Diff snapshot of a VM with dev0: writes outside the log");
	assert_int_equal(devmgr_dirty_stop(dm, true, err, sizeof(err)), 0);
	assert_true(stops[0] == 1 && stops[1] == 1);
	assert_int_equal(devmgr_dirty_stop(dm, false, err, sizeof(err)), 0);
	assert_true(goes[0] == 1 && goes[1] == 1);
	stop_fail = 1;
	assert_int_equal(devmgr_dirty_stop(dm, true, err, sizeof(err)), -1);
	assert_string_equal(err, "dev1: cannot stop");
	assert_int_equal(goes[0], 2); /* undone */
	assert_int_equal(goes[1], 1);
	stop_fail = -1;
	free(dm);
}

/* A send turns the device's log on, with the VM's log by guest-physical
 * page, and stops a device that cannot log, before the first round; the
 * round fails (no KVM: its collect fails) and the guest stays: the log
 * goes off again, the stopped device goes on. */
static void test_send_logs_then_stops(void **state)
{
	(void)state;
	char dir[] = "/tmp/skiff-vhost-log-XXXXXX", url[128], err[600];
	assert_non_null(mkdtemp(dir));
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/mig.sock", dir);
	snprintf(url, sizeof(url), "unix:%s", a.sun_path);
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(l, 1), 0);
	static const struct dm_kind kind = {.option = "net", .prefix = "dev"};
	struct vmm *v = calloc(1, sizeof(*v));
	uint8_t *ram = calloc(1, 4 * MIG_PAGE);
	assert_true(v && ram);
	v->vm.vm_fd = -1; /* no KVM: the first collect fails */
	v->vm.mem = (struct guest_mem){ram, 4 * MIG_PAGE, 4 * MIG_PAGE};
	assert_int_equal(dirty_log_init(&v->vm.dirty, ram, 4 * MIG_PAGE, false), 0);
	/* dev0 logs (vhost-net), dev1 stops instead (vhost-vsock). */
	v->dm.nr = 2;
	for (unsigned int i = 0; i < 2; i++) {
		v->dm.devs[i].kind = &kind;
		snprintf(v->dm.devs[i].name, sizeof(v->dm.devs[i].name), "dev%u", i);
		v->dm.devs[i].d = (struct device){.dev = (void *)(intptr_t)i,
						  .ops = i ? &stopping_ops : &logged_ops};
	}
	memset(log_on, 0, sizeof(log_on));
	memset(log_off, 0, sizeof(log_off));
	memset(stops, 0, sizeof(stops));
	memset(goes, 0, sizeof(goes));
	struct vmm_mig_stats st;
	assert_int_equal(vmm_migrate_send(v, url, &st, err, sizeof(err)), -1);
	assert_int_equal(log_on[0], 1);
	assert_non_null(v->vm.gpa_log);
	assert_ptr_equal(log_given[0], v->vm.gpa_log);
	assert_int_equal(log_off[0], 1);
	assert_int_equal(stops[1], 1); /* before the rounds */
	assert_int_equal(goes[1], 1);  /* the guest stays: it goes on */
	vm_dirty_disable(&v->vm);
	free(ram);
	free(v);
	close(l);
	unlink(a.sun_path);
	rmdir(dir);
}

/* A VM of 4 pages over the fake KVM (a clean log), tracking, with one
 * device that writes unseen and can log (the vhost=on card's ops). */
static struct vmm *tracked_vmm(uint8_t *ram)
{
	static const struct dm_kind kind = {.option = "net", .prefix = "dev"};
	struct vmm *v = calloc(1, sizeof(*v));
	assert_non_null(v);
	v->vm.vm_fd = fake_kvm_fd = eventfd(0, EFD_CLOEXEC);
	v->vm.mem = (struct guest_mem){ram, 4 * MIG_PAGE, 4 * MIG_PAGE};
	assert_int_equal(dirty_log_init(&v->vm.dirty, ram, 4 * MIG_PAGE, false), 0);
	pthread_mutex_init(&v->ctl_lock, NULL);
	v->dm.nr = 1;
	v->dm.devs[0].kind = &kind;
	snprintf(v->dm.devs[0].name, sizeof(v->dm.devs[0].name), "dev0");
	v->dm.devs[0].d = (struct device){.dev = (void *)(intptr_t)0, .ops = &logged_ops};
	memset(log_on, 0, sizeof(log_on));
	memset(log_off, 0, sizeof(log_off));
	return v;
}

static void tracked_free(struct vmm *v)
{
	close(v->vm.vm_fd);
	fake_kvm_fd = -1;
	vm_dirty_disable(&v->vm);
	pthread_mutex_destroy(&v->ctl_lock);
	free(v);
}

/* Page p of the memory file fd: all bytes b? */
static bool file_page_is(int fd, unsigned int p, uint8_t b)
{
	uint8_t buf[MIG_PAGE];
	if (pread(fd, buf, sizeof(buf), (off_t)p * MIG_PAGE) != (ssize_t)sizeof(buf))
		return false;
	for (size_t i = 0; i < sizeof(buf); i++)
		if (buf[i] != b)
			return false;
	return true;
}

/* With track_dirty_pages the build turns the card's log on (the VM's
 * log by guest-physical page), so a Diff is no longer refused, and its
 * memory file holds a page only the card's log names (vhost's received
 * frame: neither KVM's log nor skiff's saw it), with skiff's own marks;
 * the Diff after it, taken at once, holds neither (the logs were read
 * and cleared). A build whose card could not log refuses the Diff with
 * its line. */
static void test_diff_takes_vhost_log(void **state)
{
	(void)state;
	char err[300], path[] = "/tmp/skiff-vhost-diff-XXXXXX";
	uint8_t *ram = calloc(1, 4 * MIG_PAGE);
	assert_non_null(ram);
	struct vmm *v = tracked_vmm(ram);
	v->paused = true;
	/* Before the logs are on, a Diff of such a VM is refused. */
	assert_int_equal(
	    vmm_snapshot_create(v, "/nonexistent/s", "/nonexistent/m", true, err, sizeof(err)), -1);
	assert_string_equal(
	    err, "cannot take a Diff snapshot of a VM with dev0: writes outside the log");
	assert_int_equal(vmm_dev_logs_start(v, "take a Diff snapshot of", err, sizeof(err)), 1);
	assert_true(v->dev_logs);
	assert_int_equal(log_on[0], 1);
	assert_non_null(v->vm.gpa_log);
	assert_ptr_equal(log_given[0], v->vm.gpa_log);
	assert_int_equal(vmm_dev_logs_start(v, "migrate", err, sizeof(err)), 0); /* on already */
	assert_int_equal(log_on[0], 1);
	/* Now refused only for its files (the state needs a real KVM). */
	assert_int_equal(
	    vmm_snapshot_create(v, "/nonexistent/s", "/nonexistent/m", true, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot open /nonexistent/"));
	/* The card writes page 2 and logs it; skiff writes page 0. */
	memset(ram + 2 * MIG_PAGE, 0xab, MIG_PAGE);
	atomic_fetch_or(&log_given[0][0], 1ull << 2);
	memset(ram, 0xcd, MIG_PAGE);
	dirty_log_mark(&v->vm.dirty, ram, 1);
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(vmm_snap_mem(v, fd, path, true, err, sizeof(err)), 0);
	assert_int_equal(lseek(fd, 0, SEEK_END), 4 * MIG_PAGE);
	assert_true(file_page_is(fd, 2, 0xab));
	assert_true(file_page_is(fd, 0, 0xcd));
	assert_true(file_page_is(fd, 1, 0) && file_page_is(fd, 3, 0)); /* holes */
	assert_int_equal(vmm_snap_mem(v, fd, path, true, err, sizeof(err)), 0);
	for (unsigned int p = 0; p < 4; p++)
		assert_true(file_page_is(fd, p, 0));
	close(fd);
	unlink(path);
	tracked_free(v);
	/* A card that could not log at the build: its line, and no Diff. */
	v = tracked_vmm(ram);
	v->paused = true;
	log_fail = 0;
	assert_int_equal(vmm_dev_logs_start(v, "take a Diff snapshot of", v->dev_logs_err,
					    sizeof(v->dev_logs_err)),
			 -1);
	log_fail = -1;
	assert_false(v->dev_logs);
	assert_string_equal(v->dev_logs_err,
			    "cannot take a Diff snapshot of a VM with dev0: no log here");
	assert_int_equal(
	    vmm_snapshot_create(v, "/nonexistent/s", "/nonexistent/m", true, err, sizeof(err)), -1);
	assert_string_equal(err, v->dev_logs_err);
	tracked_free(v);
	free(ram);
}

/* A VM that tracks dirty pages has its card's log on from the build: a
 * failed migration leaves it on (the next Diff needs it), and turns it
 * on no second time. */
static void test_send_keeps_tracking_log(void **state)
{
	(void)state;
	char dir[] = "/tmp/skiff-vhost-log-XXXXXX", url[128], err[600];
	assert_non_null(mkdtemp(dir));
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof(a.sun_path), "%s/mig.sock", dir);
	snprintf(url, sizeof(url), "unix:%s", a.sun_path);
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(l, 1), 0);
	uint8_t *ram = calloc(1, 4 * MIG_PAGE);
	assert_non_null(ram);
	struct vmm *v = tracked_vmm(ram);
	assert_int_equal(vmm_dev_logs_start(v, "take a Diff snapshot of", err, sizeof(err)), 1);
	close(v->vm.vm_fd);
	v->vm.vm_fd = -1; /* no KVM: the first collect fails */
	struct vmm_mig_stats st;
	assert_int_equal(vmm_migrate_send(v, url, &st, err, sizeof(err)), -1);
	assert_int_equal(log_on[0], 1);
	assert_int_equal(log_off[0], 0);
	assert_true(v->dev_logs);
	v->vm.vm_fd = eventfd(0, EFD_CLOEXEC); /* for tracked_free's close */
	tracked_free(v);
	free(ram);
	close(l);
	unlink(a.sun_path);
	rmdir(dir);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN); /* a send to a socket that never accepts */
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gpa_take),
	    cmocka_unit_test(test_bits_take_partial),
	    cmocka_unit_test_setup_teardown(test_log_on_off_running, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_start_while_logging, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_no_log_all, setup, teardown),
	    cmocka_unit_test(test_devmgr_logs),
	    cmocka_unit_test(test_devmgr_stops),
	    cmocka_unit_test(test_send_logs_then_stops),
	    cmocka_unit_test(test_diff_takes_vhost_log),
	    cmocka_unit_test(test_send_keeps_tracking_log),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
