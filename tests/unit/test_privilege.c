// SPDX-License-Identifier: Apache-2.0
/* Issue 36.2: skiff run without a privilege it needs says which, in one
 * line. KVM's node and a vhost node are opened by path (vm_open_kvm,
 * vhost_open); here the path is a temporary file of mode 0600 owned by
 * root, opened by a child that has dropped to nobody (65534), so the
 * kernel answers EACCES as it would for /dev/kvm without the kvm group.
 * Not as root (CI's container may not be), a file of mode 0000 does the
 * same. The VFIO hints are in test_vfio_container.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/vm.h"
#include "sandbox_child.h"
#include "virtio/vhost.h"

static char node[64];
static char err[1024]; /* as child_result.err */

static int setup(void **state)
{
	(void)state;
	snprintf(node, sizeof(node), "/tmp/skiff-priv-XXXXXX");
	int fd = mkstemp(node);
	if (fd < 0)
		return -1;
	close(fd);
	return chmod(node, geteuid() == 0 ? 0600 : 0000);
}

static int teardown(void **state)
{
	(void)state;
	unlink(node);
	return 0;
}

/* Runs open_fn(node) in a child without the access (sandbox_child.h's
 * child_run: the child writes err on its stderr); err is what it said. */
static int open_as_nobody(void *arg)
{
	int (*open_fn)(void) = (int (*)(void))arg;
	if (geteuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
		return 3;
	if (open_fn() >= 0)
		return 4; /* opened: the access was there after all */
	fputs(err, stderr);
	return 0;
}

static void open_unprivileged(int (*open_fn)(void))
{
	struct child_result res;
	child_run(open_as_nobody, (void *)open_fn, &res);
	assert_true(child_exited_ok(&res));
	snprintf(err, sizeof(err), "%s", res.err);
	assert_null(strchr(err, '\n'));
}

static int open_kvm(void)
{
	return vm_open_kvm(node, err, sizeof(err));
}

static struct vhost vh;

static int open_vhost(void)
{
	return vhost_open(&vh, node, "vhost_net", err, sizeof(err));
}

static void test_kvm_hint(void **state)
{
	(void)state;
	open_unprivileged(open_kvm);
	char want[200];
	snprintf(want, sizeof(want),
		 "cannot open %s: Permission denied (read and write access to it", node);
	if (!strstr(err, want) || !strstr(err, "kvm group"))
		fail_msg("want '%s ... kvm group' in: %s", want, err);
}

static void test_vhost_hint(void **state)
{
	(void)state;
	open_unprivileged(open_vhost);
	char want[200];
	snprintf(want, sizeof(want),
		 "cannot open %s: Permission denied (read and write access to %s)", node, node);
	if (!strstr(err, want))
		fail_msg("want '%s' in: %s", want, err);
}

/* A node that is not there is a missing module, not a missing right. */
static void test_vhost_missing(void **state)
{
	(void)state;
	unlink(node);
	assert_int_equal(open_vhost(), -1);
	assert_non_null(strstr(err, "No such file or directory (load the vhost_net module)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_kvm_hint, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_vhost_hint, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_vhost_missing, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
