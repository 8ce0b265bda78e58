// SPDX-License-Identifier: Apache-2.0
/* Review of --vsock backend=vhost (devices/virtio-vsock/
 * virtio_vsock_vhost.c, virtio/vhost.c, its sandbox rules and the device
 * manager that adds them) as a hostile guest, API client or a thread
 * taken over would attack it. Each test is a finding's proof: it failed
 * before the fix named in its comment; what was tried and held is tested
 * too. No KVM and no /dev/vhost-vsock: the device on the real virtio-pci
 * transport, driven through its registers as a guest would, opens
 * /dev/null and an ioctl of the test's plays the kernel's vhost; for the
 * filters, the device manager adds a device made by a stand-in, then a
 * child enters a thread's filter and makes the call. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <linux/if_tun.h>
#include <linux/vhost.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/sandbox.h"
#include "iothread/iothread.h"
#include "pci/pci_msix.h"
#include "virtio/virtio_pci_impl.h"
#include "devices/virtio-vsock/virtio_vsock.h"
#include "devices/virtio-vsock/virtio_vsock_priv.h"
#include "fake_mem.h"
#include "fake_pci_host.h"
#include "sandbox_child.h"
#include "vmm/devmgr.h"

/* ---- the kernel's vhost-vsock, played (only while fake_on) ---- */

struct vcall {
	unsigned long req;
	unsigned int index;
	uint64_t val, desc, avail, used; /* num/fd/features; a ring's addresses */
};
static struct vcall calls[256];
static unsigned int ncalls;
static bool fake_on;

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (!fake_on || _IOC_TYPE(req) != VHOST_VIRTIO)
		return (int)syscall(SYS_ioctl, fd, req, arg);
	struct vcall c = {.req = req};
	if (req == VHOST_SET_VRING_NUM || req == VHOST_SET_VRING_BASE) {
		c.index = ((struct vhost_vring_state *)arg)->index;
		c.val = ((struct vhost_vring_state *)arg)->num;
	} else if (req == VHOST_SET_VRING_ADDR) {
		const struct vhost_vring_addr *a = arg;
		c = (struct vcall){
		    req, a->index, 0, a->desc_user_addr, a->avail_user_addr, a->used_user_addr};
	} else if (req == VHOST_VSOCK_SET_RUNNING) {
		c.val = (uint64_t) * (int *)arg;
	} else if (req == VHOST_GET_FEATURES) {
		*(uint64_t *)arg = (1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTQ_F_EVENT_IDX) |
				   (1ull << VIRTQ_F_INDIRECT_DESC);
	} else if (req == VHOST_GET_VRING_BASE) {
		c.index = ((struct vhost_vring_state *)arg)->index;
		((struct vhost_vring_state *)arg)->num = 0;
	}
	if (ncalls < sizeof(calls) / sizeof(calls[0]))
		calls[ncalls++] = c;
	return 0;
}

static unsigned int count_of(unsigned long req, int val)
{
	unsigned int n = 0;
	for (unsigned int i = 0; i < ncalls; i++)
		n += calls[i].req == req && (val < 0 || calls[i].val == (uint64_t)val);
	return n;
}

/* ---- the device on the real transport, a guest at its registers ---- */

#define RAM (1u << 20)

struct vfx {
	struct bus trap;
	struct fake_host host;
	struct pci_bus *pci;
	struct fake_mem mem;
	struct iothread io;
	struct virtio_dev *vdev;
	const struct dev_ops *ops;
	uint64_t bar, tab;
	uint32_t msix_cap;
};

static int vfx_setup(void **state)
{
	struct vfx *f = calloc(1, sizeof(*f));
	struct vsock_spec s = {.cid = 3, .backend = VSOCK_BACKEND_VHOST};
	char err[256];
	fake_on = true;
	ncalls = 0;
	bus_init(&f->trap);
	f->pci = pci_bus_create_with(&f->trap, &fake_host_ops, &f->host);
	assert_int_equal(fake_mem_init(&f->mem, RAM), 0);
	assert_int_equal(iothread_init(&f->io, "io0"), 0);
	f->vdev =
	    virtio_vsock_vhost_create("virtio-vsock0", &s, "/dev/null", &f->ops, err, sizeof(err));
	assert_non_null(f->vdev);
	struct virtio_pci_env env = {
	    .pci = f->pci, .io = &f->io, .gm = &f->mem.gm, .use_ioeventfd = true};
	assert_int_equal(virtio_pci_attach(&env, f->vdev, err, sizeof(err)), 0);
	cfg_wr(&f->trap, 1, PCI_COMMAND, 2, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
	f->bar = cfg_bar64(&f->trap, 1, VP_BAR);
	f->tab = cfg_bar64(&f->trap, 1, VP_MSIX_BAR);
	f->msix_cap = cfg_find_cap(&f->trap, 1, PCI_CAP_ID_MSIX, 0);
	*state = f;
	return 0;
}

static int vfx_teardown(void **state)
{
	struct vfx *f = *state;
	pci_bus_destroy(f->pci);
	f->ops->stop(f->vdev);
	f->ops->destroy(f->vdev);
	iothread_destroy(&f->io);
	bus_destroy(&f->trap);
	fake_mem_free(&f->mem);
	free(f);
	fake_on = false;
	return 0;
}

static uint64_t cr(struct vfx *f, uint32_t off, uint32_t len)
{
	return mmio_rd(&f->trap, f->bar + VP_COMMON_OFF + off, len);
}

static void cw(struct vfx *f, uint32_t off, uint32_t len, uint64_t v)
{
	mmio_wr(&f->trap, f->bar + VP_COMMON_OFF + off, len, v);
}

static uint8_t status(struct vfx *f)
{
	return (uint8_t)cr(f, VP_STATUS, 1);
}

/* MSI-X on: the config's vector (0) and the one the queues share (1),
 * the device's whole table (VSOCK_MSIX_VECTORS). */
static void msix_on(struct vfx *f)
{
	cfg_wr(&f->trap, 1, f->msix_cap + PCI_MSIX_FLAGS, 2, PCI_MSIX_FLAGS_ENABLE);
	for (unsigned int v = 0; v < VSOCK_MSIX_VECTORS; v++) {
		mmio_wr(&f->trap, f->tab + 16 * v, 4, 0xfee00000);
		mmio_wr(&f->trap, f->tab + 16 * v + 8, 4, 0x40 + v);
		mmio_wr(&f->trap, f->tab + 16 * v + 12, 4, 0);
	}
}

static void negotiate(struct vfx *f)
{
	cw(f, VP_STATUS, 1, VIRTIO_STATUS_ACKNOWLEDGE);
	cw(f, VP_STATUS, 1, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
	cw(f, VP_GFSELECT, 4, 1);
	cw(f, VP_GF, 4, 1); /* VERSION_1 */
	cw(f, VP_STATUS, 1, status(f) | VIRTIO_STATUS_FEATURES_OK);
	cw(f, VP_MSIX_CONFIG, 2, 0);
}

/* Queue q of size at desc (avail and used after it), on vector 1. */
static void queue(struct vfx *f, unsigned int q, uint16_t size, uint64_t desc)
{
	cw(f, VP_Q_SELECT, 2, q);
	cw(f, VP_Q_SIZE, 2, size);
	cw(f, VP_Q_MSIX, 2, 1);
	cw(f, VP_Q_DESC, 8, desc);
	cw(f, VP_Q_DRIVER, 8, desc + 0x1000);
	cw(f, VP_Q_DEVICE, 8, desc + 0x2000);
	cw(f, VP_Q_ENABLE, 2, 1);
}

static void driver_ok(struct vfx *f)
{
	cw(f, VP_STATUS, 1, status(f) | VIRTIO_STATUS_DRIVER_OK);
}

static bool in_ram(struct vfx *f, uint64_t hva, uint64_t len)
{
	uint64_t lo = (uint64_t)(uintptr_t)f->mem.gm.host;
	return hva >= lo && hva + len <= lo + RAM;
}

/* Held: DRIVER_OK again without a reset starts nothing twice; a reset
 * while running stops the kernel first, then reads each ring's base,
 * then gives the kicks back; a second cycle (odd sizes, 1 and 2) hands
 * over ring addresses that all lie in guest RAM. */
static void test_status_cycles(void **state)
{
	struct vfx *f = *state;
	struct virtio_pci *vp = f->vdev->transport_data;
	msix_on(f);
	const uint16_t sizes[2][2] = {{256, 64}, {1, 2}};
	for (int round = 0; round < 2; round++) {
		ncalls = 0;
		negotiate(f);
		queue(f, VSOCK_RXQ, sizes[round][0], 0x10000);
		queue(f, VSOCK_TXQ, sizes[round][1], 0x20000);
		queue(f, VSOCK_EVQ, 4, 0x30000);
		driver_ok(f);
		driver_ok(f);
		assert_int_equal(status(f), 0x0f);
		assert_int_equal(count_of(VHOST_VSOCK_SET_RUNNING, 1), 1);
		for (unsigned int i = 0, q = 0; i < ncalls; i++) {
			if (calls[i].req == VHOST_SET_VRING_NUM)
				assert_int_equal(calls[i].val, sizes[round][calls[i].index]);
			if (calls[i].req != VHOST_SET_VRING_ADDR)
				continue;
			q = calls[i].index;
			assert_true(q < 2);
			assert_true(in_ram(f, calls[i].desc, 16ull * sizes[round][q]));
			assert_true(in_ram(f, calls[i].avail, 6 + 2ull * sizes[round][q]));
			assert_true(in_ram(f, calls[i].used, 6 + 8ull * sizes[round][q]));
		}
		assert_true(vp->q[VSOCK_RXQ].handed_off && vp->q[VSOCK_TXQ].handed_off);
		assert_false(vp->q[VSOCK_EVQ].handed_off);
		ncalls = 0;
		cw(f, VP_STATUS, 1, 0);
		assert_int_equal(status(f), 0);
		assert_int_equal(calls[0].req, VHOST_VSOCK_SET_RUNNING);
		assert_int_equal(calls[0].val, 0);
		assert_int_equal(count_of(VHOST_GET_VRING_BASE, -1), 2);
		assert_false(vp->q[VSOCK_RXQ].handed_off || vp->q[VSOCK_TXQ].handed_off);
	}
}

/* Held: what the kernel must never get. A transmit queue not enabled, a
 * ring past the end of RAM, a misaligned one (both refused by the virtq
 * before the device is asked; a size not a power of 2 by the register),
 * no MSI-X (no vector to signal): each leaves the device NEEDS_RESET
 * with no ring given and nothing running. */
static void test_hostile_setups(void **state)
{
	struct vfx *f = *state;
	for (int c = 0; c < 4; c++) {
		ncalls = 0;
		if (c != 3)
			msix_on(f);
		negotiate(f);
		queue(f, VSOCK_RXQ, 64, 0x10000);
		if (c == 0) { /* a vector, but never enabled: no addresses */
			cw(f, VP_Q_SELECT, 2, VSOCK_TXQ);
			cw(f, VP_Q_MSIX, 2, 1);
		}
		if (c == 1)
			queue(f, VSOCK_TXQ, 64, RAM - 0x2000); /* used ring past the end */
		if (c == 2) {
			queue(f, VSOCK_TXQ, 64, 0x20000);
			cw(f, VP_Q_SIZE, 2, 3); /* refused: it stays 64 */
			assert_int_equal(cr(f, VP_Q_SIZE, 2), 64);
			cw(f, VP_Q_DESC, 8, 0x20008); /* descriptors not 16-aligned */
		}
		if (c == 3)
			queue(f, VSOCK_TXQ, 64, 0x20000);
		driver_ok(f);
		assert_true(status(f) & VIRTIO_STATUS_NEEDS_RESET);
		assert_int_equal(count_of(VHOST_SET_VRING_ADDR, -1), 0);
		assert_int_equal(count_of(VHOST_VSOCK_SET_RUNNING, 1), 0);
		cw(f, VP_STATUS, 1, 0);
		if (c == 3)
			continue;
		cfg_wr(&f->trap, 1, f->msix_cap + PCI_MSIX_FLAGS, 2, 0);
	}
}

/* ---- a vsock of either backend, as the device manager adds it ---- */

static void stand_in_notify(struct virtio_dev *vdev, unsigned int q)
{
	(void)vdev, (void)q;
}

static void stand_in_stop(void *dev)
{
	(void)dev;
}

static void stand_in_destroy(void *dev)
{
	free(dev);
}

static const struct virtio_dev_ops stand_in_vops = {.queue_notify = stand_in_notify};
static const struct dev_ops stand_in_ops = {.stop = stand_in_stop, .destroy = stand_in_destroy};

/* The device the real row would make, without its thread, socket, tap
 * or device node: what is tested is what the manager adds to the
 * filters. */
static int stand_in_create(const struct dev_ctx *ctx, const void *spec, struct device *out,
			   char *err, size_t errlen)
{
	(void)spec, (void)err, (void)errlen;
	struct virtio_dev *v = calloc(1, sizeof(*v));
	v->name = ctx->name;
	v->device_id = strcmp(ctx->name, "virtio-net0") ? VIRTIO_ID_VSOCK : VIRTIO_ID_NET;
	v->num_queues = VSOCK_NR_QUEUES;
	v->queue_max_size = 64;
	v->ops = &stand_in_vops;
	pthread_mutex_init(&v->lock, NULL);
	*out = (struct device){.dev = v, .ops = &stand_in_ops, .vdev = v};
	return 0;
}

struct probe {
	const char *option, *spec; /* --OPTION SPEC */
	enum sandbox_role role;	   /* the thread's filter entered */
	unsigned long req;	   /* an ioctl made after; 0: unlink */
};

/* In a child: the device added (its kind's real row, its create stood
 * in for), the role's filter entered, the call made. Exits 0 if it
 * reached the kernel; dies by SIGSYS if the filter refused it. */
static int probe_child(void *arg)
{
	const struct probe *p = arg;
	static struct dm_kind kind;
	static const struct dm_kind *const kinds[] = {&kind};
	static struct bus trap;
	static struct fake_host host;
	static struct fake_mem fm;
	static struct devmgr dm;
	char err[300];
	for (size_t i = 0; i < dm_nr_kinds; i++)
		if (!strcmp(dm_kinds[i]->option, p->option) && !kind.option)
			kind = *dm_kinds[i];
	kind.create = stand_in_create;
	bus_init(&trap);
	if (fake_mem_init(&fm, 1 << 20) < 0)
		return 100;
	dm = (struct devmgr){.pci = pci_bus_create_with(&trap, &fake_host_ops, &host),
			     .gm = &fm.gm,
			     .use_ioeventfd = true,
			     .kinds = kinds,
			     .nr_kinds = 1};
	sandbox_enable(true);
	sandbox_clear_rules();
	if (devmgr_add(&dm, p->option, p->spec, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 101;
	}
	int fds[2];
	if (pipe(fds) < 0 || sandbox_enter(p->role) != 0)
		return 102;
	if (p->req) {
		uint64_t arg = 0;
		return ioctl(fds[0], p->req, &arg) < 0 && errno == ENOTTY ? 0 : 103;
	}
	return unlink("/nonexistent/skiff-review-probe") < 0 && errno == ENOENT ? 0 : 104;
}

static void expect_probe(const struct probe *p, bool allowed)
{
	struct child_result res;
	child_run(probe_child, (void *)p, &res);
	if (allowed ? !child_exited_ok(&res) : !child_died_by_sigsys(&res))
		fail_msg("--%s %s, %s thread, %s %#lx: wanted %s, status %#x, \"%s\"", p->option,
			 p->spec, sandbox_role_name(p->role), p->req ? "ioctl" : "unlink", p->req,
			 allowed ? "allowed" : "SIGSYS", res.status, res.err);
}

#define HYBRID "cid=3,uds=/tmp/skiff-review-vhost.sock"
#define VHOST  "cid=3,backend=vhost"

/* Finding (low, hardening): a kind's rules went into the filters whatever
 * its spec. A VM with --vsock backend=vhost has no vsock thread and no
 * hand-over, yet its controller (the API's thread) could unlink any file
 * the process may, bind and listen; a VM with the hybrid vsock, or with
 * a --net card with vhost=off, gave every vCPU (and the main thread) the
 * vhost ioctls: dev_sandbox.h said a VM without vhost has none in any
 * filter. Fixed: dm_kind.sandbox_of, the part of its rules a spec's
 * device needs (vsock_sandbox_of, virtio_net_sandbox_of). */
static void test_rules_follow_spec(void **state)
{
	(void)state;
	expect_probe(&(struct probe){"vsock", VHOST, SANDBOX_CONTROLLER, 0}, false);
	expect_probe(&(struct probe){"vsock", HYBRID, SANDBOX_VCPU, VHOST_VSOCK_SET_RUNNING},
		     false);
	expect_probe(&(struct probe){"vsock", HYBRID, SANDBOX_VCPU, VHOST_SET_MEM_TABLE}, false);
	expect_probe(&(struct probe){"net", "tap=tap0", SANDBOX_VCPU, VHOST_SET_MEM_TABLE}, false);
	expect_probe(&(struct probe){"net", "tap=tap0", SANDBOX_MAIN, VHOST_GET_VRING_BASE}, false);
	/* Snapshots and migration (virtio_vsock_vhost_snap.c): the I/O
	 * thread restarts the rings a save stopped, a failed switch's
	 * take-back sets the CID again from the controller; not the
	 * hybrid's. */
	expect_probe(&(struct probe){"vsock", VHOST, SANDBOX_IO, VHOST_SET_VRING_BASE}, true);
	expect_probe(&(struct probe){"vsock", VHOST, SANDBOX_CONTROLLER, VHOST_VSOCK_SET_GUEST_CID},
		     true);
	expect_probe(&(struct probe){"vsock", VHOST, SANDBOX_MAIN, VHOST_GET_VRING_BASE}, true);
	expect_probe(&(struct probe){"vsock", HYBRID, SANDBOX_IO, VHOST_SET_VRING_BASE}, false);
	expect_probe(
	    &(struct probe){"vsock", HYBRID, SANDBOX_CONTROLLER, VHOST_VSOCK_SET_GUEST_CID}, false);
	/* What each one runs still is allowed. */
	expect_probe(&(struct probe){"vsock", HYBRID, SANDBOX_CONTROLLER, 0}, true);
	expect_probe(&(struct probe){"vsock", VHOST, SANDBOX_VCPU, VHOST_VSOCK_SET_RUNNING}, true);
	expect_probe(&(struct probe){"vsock", VHOST, SANDBOX_VCPU, VHOST_SET_MEM_TABLE}, true);
	expect_probe(&(struct probe){"net", "tap=tap0", SANDBOX_VCPU, TUNSETOFFLOAD}, true);
	expect_probe(&(struct probe){"net", "tap=tap0,vhost=on", SANDBOX_VCPU, VHOST_SET_MEM_TABLE},
		     true);
	expect_probe(
	    &(struct probe){"net", "tap=tap0,vhost=on", SANDBOX_MAIN, VHOST_GET_VRING_BASE}, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_status_cycles, vfx_setup, vfx_teardown),
	    cmocka_unit_test_setup_teardown(test_hostile_setups, vfx_setup, vfx_teardown),
	    cmocka_unit_test(test_rules_follow_spec),
	};
	return cmocka_run_group_tests_name("review_vsock_vhost", tests, NULL, NULL);
}
