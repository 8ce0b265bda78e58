// SPDX-License-Identifier: Apache-2.0
/* A device kind's own calls (devices/dev_sandbox.h): the roles' tables
 * hold none of them, a filter has them only once the kind's set is added
 * (the device manager adds it for the kinds a VM has), the controller
 * takes main's sets, and a new VM starts with none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <linux/vhost.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/sandbox.h"
#include "core/sandbox_rules.h"
#include "sandbox_child.h"
#include "vmm/devmgr.h"

/* Every ioctl a kind adds is in no role's table: without the kind, no
 * filter has it. */
static void test_tables_name_no_kind(void **state)
{
	(void)state;
	size_t sets = 0;
	for (size_t k = 0; k < dm_nr_kinds; k++) {
		const struct dev_sandbox *ks = dm_kinds[k]->sandbox;
		for (int r = 0; ks && r < SANDBOX_NR_ROLES; r++) {
			sets += ks->role[r].n > 0;
			for (size_t i = 0; i < ks->role[r].n; i++) {
				const struct sandbox_rule *kr = &ks->role[r].rule[i];
				if (kr->nr != SCMP_SYS(ioctl))
					continue;
				for (int t = 0; t < SANDBOX_NR_ROLES; t++)
					for (size_t g = 0; g < sandbox_tables[t].n; g++)
						for (size_t j = 0; j < sandbox_tables[t].group[g].n;
						     j++) {
							const struct sandbox_rule *tr =
							    &sandbox_tables[t].group[g].rule[j];
							if (tr->nr == kr->nr &&
							    tr->cmp[0].val == kr->cmp[0].val)
								fail_msg(
								    "role %s's table has %s's "
								    "ioctl %#llx",
								    sandbox_role_name(t),
								    dm_kinds[k]->prefix,
								    (unsigned long long)kr->cmp[0]
									.val);
						}
			}
		}
	}
	assert_true(sets >= 8); /* virtio-net (4 roles), virtio-blk (4), vfio, vsock */
}

static const struct dev_sandbox *kind_sandbox(const char *prefix)
{
	for (size_t k = 0; k < dm_nr_kinds; k++)
		if (!strcmp(dm_kinds[k]->prefix, prefix))
			return dm_kinds[k]->sandbox;
	return NULL;
}

struct probe {
	enum sandbox_role role;	    /* entered */
	const char *kind;	    /* whose set is added (NULL: none) */
	enum sandbox_role kind_for; /* for which role */
	bool clear;		    /* sandbox_clear_rules after adding */
	unsigned long req;	    /* an ioctl made after the filter */
	int prepare;		    /* sandbox_prepare: 0 never, 1 before adding, 2 after */
};

/* Exits 0 if the ioctl reached the kernel (ENOTTY on a pipe); dies by
 * SIGSYS if the filter refused it. */
static int probe_child(void *arg)
{
	const struct probe *p = arg;
	int fds[2];
	char buf[512] = {0};
	if (pipe(fds) < 0)
		return 100;
	sandbox_enable(true);
	if (p->prepare == 1 && sandbox_prepare() != 0)
		return 105;
	if (p->kind) {
		const struct dev_sandbox *s = kind_sandbox(p->kind);
		if (!s || sandbox_add_rules(p->kind_for, &s->role[p->kind_for]) < 0)
			return 101;
		/* twice is once */
		if (sandbox_add_rules(p->kind_for, &s->role[p->kind_for]) < 0)
			return 104;
	}
	if (p->clear)
		sandbox_clear_rules();
	if (p->prepare == 3 && sandbox_prepare() != 0)
		return 105;
	if (p->prepare == 3)
		sandbox_clear_rules();
	if (p->prepare == 2 && sandbox_prepare() != 0)
		return 105;
	if (sandbox_enter(p->role) != 0)
		return 102;
	return ioctl(fds[0], p->req, buf) < 0 && errno == ENOTTY ? 0 : 103;
}

static void expect_probe(const struct probe *p, bool allowed)
{
	struct child_result res;
	child_run(probe_child, (void *)p, &res);
	if (allowed ? !child_exited_ok(&res) : !child_died_by_sigsys(&res))
		fail_msg("%s thread, %s's set for %s%s, ioctl %#lx: status %#x, \"%s\"",
			 sandbox_role_name(p->role), p->kind ? p->kind : "no kind",
			 sandbox_role_name(p->kind_for), p->clear ? " cleared" : "", p->req,
			 res.status, res.err);
}

static void test_added_sets_only(void **state)
{
	(void)state;
	/* No virtio-net in the VM: a vCPU has no vhost ioctl. */
	expect_probe(&(struct probe){SANDBOX_VCPU, NULL, 0, false, VHOST_SET_FEATURES, 0}, false);
	expect_probe(
	    &(struct probe){SANDBOX_VCPU, "virtio-net", SANDBOX_VCPU, false, VHOST_SET_FEATURES, 0},
	    true);
	/* Added for another role only: still refused. */
	expect_probe(
	    &(struct probe){SANDBOX_IO, "virtio-net", SANDBOX_VCPU, false, VHOST_SET_FEATURES, 0},
	    false);
	/* A new VM forgets the last one's kinds. */
	expect_probe(
	    &(struct probe){SANDBOX_VCPU, "virtio-net", SANDBOX_VCPU, true, VHOST_SET_FEATURES, 0},
	    false);
	/* The controller is main with more: main's sets are its too. */
	expect_probe(&(struct probe){SANDBOX_CONTROLLER, "virtio-net", SANDBOX_MAIN, false,
				     VHOST_NET_SET_BACKEND, 0},
		     true);
	expect_probe(&(struct probe){SANDBOX_CONTROLLER, NULL, 0, false, VHOST_NET_SET_BACKEND, 0},
		     false);
	/* A migration turns vhost's dirty log on and off from the controller
	 * (virtio_net_vhost_log); a card the guest starts meanwhile sets the
	 * log base from a vCPU. Not without a vhost kind, nor with a vsock's
	 * backend=vhost, whose kernel logs nothing (its pre-copy stops the
	 * rings instead: virtio_vsock_vhost_snap.c). */
	static const unsigned long log_calls[] = {VHOST_SET_LOG_BASE, VHOST_SET_FEATURES,
						  VHOST_SET_VRING_ADDR};
	for (unsigned int i = 0; i < 3; i++)
		expect_probe(&(struct probe){SANDBOX_CONTROLLER, "virtio-net", SANDBOX_MAIN, false,
					     log_calls[i], 0},
			     true);
	expect_probe(&(struct probe){SANDBOX_CONTROLLER, NULL, 0, false, VHOST_SET_LOG_BASE, 0},
		     false);
	expect_probe(
	    &(struct probe){SANDBOX_VCPU, "virtio-net", SANDBOX_VCPU, false, VHOST_SET_LOG_BASE, 0},
	    true);
	expect_probe(&(struct probe){SANDBOX_VCPU, "virtio-vsock", SANDBOX_VCPU, false,
				     VHOST_SET_LOG_BASE, 0},
		     false);
	expect_probe(&(struct probe){SANDBOX_VCPU, NULL, 0, false, VHOST_SET_LOG_BASE, 0}, false);
	/* vsock backend=vhost: its vCPU set runs vhost-vsock, a VM without
	 * a vsock has no such ioctl (virtio-net's set has none either). */
	expect_probe(&(struct probe){SANDBOX_VCPU, "virtio-vsock", SANDBOX_VCPU, false,
				     VHOST_VSOCK_SET_RUNNING, 0},
		     true);
	expect_probe(&(struct probe){SANDBOX_VCPU, "virtio-vsock", SANDBOX_VCPU, false,
				     VHOST_SET_VRING_KICK, 0},
		     true);
	expect_probe(&(struct probe){SANDBOX_VCPU, "virtio-net", SANDBOX_VCPU, false,
				     VHOST_VSOCK_SET_RUNNING, 0},
		     false);
	expect_probe(&(struct probe){SANDBOX_VCPU, NULL, 0, false, VHOST_VSOCK_SET_RUNNING, 0},
		     false);
	/* Its CID is set before any filter: no thread the guest drives may
	 * change it (the controller's take-back after a failed migration
	 * switch sets the VM's own again: test_review_vsock_vhost.c). */
	expect_probe(&(struct probe){SANDBOX_VCPU, "virtio-vsock", SANDBOX_VCPU, false,
				     VHOST_VSOCK_SET_GUEST_CID, 0},
		     false);
	expect_probe(&(struct probe){SANDBOX_IO, "virtio-vsock", SANDBOX_IO, false,
				     VHOST_VSOCK_SET_GUEST_CID, 0},
		     false);
}

/* A filter compiled ahead (sandbox_prepare) is the one a thread compiling
 * its own would install, and is taken only while its role's sets are
 * those it was compiled from. */
static void test_prepared_filters(void **state)
{
	(void)state;
	/* Compiled with virtio-net's set: the vCPU has vhost and nothing
	 * more. */
	expect_probe(
	    &(struct probe){SANDBOX_VCPU, "virtio-net", SANDBOX_VCPU, false, VHOST_SET_FEATURES, 2},
	    true);
	expect_probe(&(struct probe){SANDBOX_VCPU, "virtio-net", SANDBOX_VCPU, false,
				     VHOST_VSOCK_SET_RUNNING, 2},
		     false);
	expect_probe(&(struct probe){SANDBOX_CONTROLLER, "virtio-net", SANDBOX_MAIN, false,
				     VHOST_NET_SET_BACKEND, 2},
		     true);
	/* Compiled before the set was added: compiled again with it. */
	expect_probe(
	    &(struct probe){SANDBOX_VCPU, "virtio-net", SANDBOX_VCPU, false, VHOST_SET_FEATURES, 1},
	    true);
	expect_probe(&(struct probe){SANDBOX_CONTROLLER, "virtio-net", SANDBOX_MAIN, false,
				     VHOST_NET_SET_BACKEND, 1},
		     true);
	/* Compiled with it, then a new VM without it: not the old program. */
	expect_probe(
	    &(struct probe){SANDBOX_VCPU, "virtio-net", SANDBOX_VCPU, false, VHOST_SET_FEATURES, 3},
	    false);
}

/* devmgr_sandbox_prepare (a migration target, at CONFIG): a spec that
 * does not parse is one line naming it; a good list's sets are compiled
 * and then taken back, so a VM built after it adds its own. */
static int prepare_list_child(void *arg)
{
	(void)arg;
	char err[300], buf[512] = {0};
	int fds[2];
	sandbox_enable(true);
	struct devmgr_arg bad = {.option = "nosuch", .spec = "x"};
	if (devmgr_sandbox_prepare(&bad, 1, err, sizeof(err)) != -1 || !strstr(err, "--nosuch") ||
	    strchr(err, '\n'))
		return 110;
	struct devmgr_arg net = {.option = "net", .spec = "tap=tap0,vhost=on"};
	if (devmgr_sandbox_prepare(&net, 1, err, sizeof(err)) != 0)
		return 111;
	if (pipe(fds) < 0 || sandbox_enter(SANDBOX_VCPU) != 0)
		return 112;
	ioctl(fds[0], VHOST_SET_FEATURES, buf); /* no set left: dies here */
	return 0;
}

static void test_prepare_from_list(void **state)
{
	(void)state;
	struct child_result res;
	child_run(prepare_list_child, NULL, &res);
	if (!child_died_by_sigsys(&res))
		fail_msg("status %#x, \"%s\"", res.status, res.err);
}

/* The device role alone (no vsock in the VM) makes no socket. */
static int device_socket(void *arg)
{
	bool add = *(bool *)arg;
	sandbox_enable(true);
	if (add &&
	    sandbox_add_rules(SANDBOX_DEVICE, &kind_sandbox("virtio-vsock")->role[SANDBOX_DEVICE]))
		return 101;
	if (sandbox_enter(SANDBOX_DEVICE) != 0)
		return 102;
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	return s >= 0 ? 0 : 103;
}

static void test_device_role(void **state)
{
	(void)state;
	struct child_result res;
	bool add = false;
	child_run(device_socket, &add, &res);
	assert_true(child_died_by_sigsys(&res));
	assert_non_null(strstr(res.err, "device thread made forbidden system call socket"));
	add = true;
	child_run(device_socket, &add, &res);
	assert_true(child_exited_ok(&res));
}

/* A call only one kind needs is in a thread's filter only when the VM
 * has that kind: a vCPU of a VM with every other kind has no pread64
 * (VFIO's regions) and no io_uring_enter (a disk's ring); a disk thread
 * without a disk reads nothing. */
struct call_probe {
	enum sandbox_role role;
	const char *kind; /* added, or (without) every kind but it */
	bool without;
	long nr; /* made with arguments that reach the kernel and fail there */
};

static int call_child(void *arg)
{
	const struct call_probe *p = arg;
	int fds[2];
	char b[8];
	if (pipe(fds) < 0)
		return 100;
	sandbox_enable(true);
	for (size_t k = 0; k < dm_nr_kinds; k++) {
		const struct dev_sandbox *s = dm_kinds[k]->sandbox;
		if (!s || !strcmp(dm_kinds[k]->prefix, p->kind) != !p->without)
			continue;
		if (s->role[p->role].n && sandbox_add_rules(p->role, &s->role[p->role]) < 0)
			return 101;
	}
	if (sandbox_enter(p->role) != 0)
		return 102;
	/* pread64 on a pipe: ESPIPE; io_uring_enter on a pipe: EOPNOTSUPP. */
	return syscall(p->nr, fds[0], b, 0, 0, 0, 0) < 0 ? 0 : 103;
}

static void expect_call(const struct call_probe *p, bool allowed)
{
	struct child_result res;
	child_run(call_child, (void *)p, &res);
	if (allowed ? !child_exited_ok(&res) : !child_died_by_sigsys(&res))
		fail_msg("%s thread, %s %s, call %ld: status %#x, \"%s\"",
			 sandbox_role_name(p->role), p->without ? "every kind but" : "only",
			 p->kind, p->nr, res.status, res.err);
}

static void test_calls_follow_kinds(void **state)
{
	(void)state;
	expect_call(&(struct call_probe){SANDBOX_VCPU, "vfio", true, SYS_pread64}, false);
	expect_call(&(struct call_probe){SANDBOX_VCPU, "vfio", true, SYS_pwrite64}, false);
	expect_call(&(struct call_probe){SANDBOX_VCPU, "vfio", false, SYS_pread64}, true);
	expect_call(&(struct call_probe){SANDBOX_VCPU, "vfio", false, SYS_pwrite64}, true);
	expect_call(&(struct call_probe){SANDBOX_VCPU, "virtio-blk", true, SYS_io_uring_enter},
		    false);
	expect_call(&(struct call_probe){SANDBOX_IO, "virtio-blk", true, SYS_io_uring_enter},
		    false);
	expect_call(&(struct call_probe){SANDBOX_MAIN, "virtio-blk", true, SYS_io_uring_enter},
		    false);
	expect_call(&(struct call_probe){SANDBOX_VCPU, "virtio-blk", false, SYS_io_uring_enter},
		    true);
	expect_call(&(struct call_probe){SANDBOX_BLK, "virtio-blk", true, SYS_pread64}, false);
	expect_call(&(struct call_probe){SANDBOX_BLK, "virtio-blk", false, SYS_pread64}, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tables_name_no_kind), cmocka_unit_test(test_added_sets_only),
	    cmocka_unit_test(test_device_role),		cmocka_unit_test(test_prepared_filters),
	    cmocka_unit_test(test_prepare_from_list),	cmocka_unit_test(test_calls_follow_kinds),
	};
	return cmocka_run_group_tests_name("sandbox_kinds", tests, NULL, NULL);
}
