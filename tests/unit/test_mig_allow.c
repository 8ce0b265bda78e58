// SPDX-License-Identifier: Apache-2.0
/* skiff_allow (vmm/vmm_mig_allow.c): a migration's incoming devices
 * against the directories and taps the target's operator allowed. Each
 * case builds the devices as the state lists them (option, spec, the
 * typed key apart, the API's id) in a scratch tree:
 *
 *   T/vm1/disk.img   T/vm1/link -> T/other/x.img   T/vm1/dangle -> T/other/new.sock
 *   T/vm10/disk.img  T/other/x.img
 *
 * and asserts the verdict and, for a refusal, that the one line names
 * the device and the path. Opens nothing of the devices. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmm/vmm.h"
#include "vmm/vmm_mig_allow.h"

static char T[64];     /* the scratch tree */
static char P[8][512]; /* paths the cases use */
static char err[600];

static const char *tp(int i, const char *rel)
{
	snprintf(P[i], sizeof(P[i]), "%s/%s", T, rel);
	return P[i];
}

static void touch(const char *rel)
{
	FILE *f = fopen(tp(7, rel), "w");
	assert_non_null(f);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	char tmpl[] = "/tmp/skiff-allow-XXXXXX";
	assert_non_null(mkdtemp(tmpl));
	snprintf(T, sizeof(T), "%s", tmpl);
	const char *dirs[] = {"vm1", "vm10", "other"};
	for (int i = 0; i < 3; i++)
		assert_int_equal(mkdir(tp(7, dirs[i]), 0700), 0);
	touch("vm1/disk.img");
	touch("vm10/disk.img");
	touch("other/x.img");
	assert_int_equal(symlink(tp(6, "other/x.img"), tp(7, "vm1/link")), 0);
	assert_int_equal(symlink(tp(6, "other/new.sock"), tp(7, "vm1/dangle")), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	const char *files[] = {"vm1/disk.img", "vm1/link", "vm1/dangle", "vm10/disk.img",
			       "other/x.img",  "vm1",	   "vm10",	 "other"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		remove(tp(7, files[i]));
	return rmdir(T);
}

/* A config of n devices, and an allow-list of T/vm1 and tap0. */
static struct vmm_config cfg;
static struct vmm_allow allow;

static void reset(void)
{
	memset(&cfg, 0, sizeof(cfg));
	memset(&allow, 0, sizeof(allow));
	allow.paths[allow.nr_paths++] = tp(0, "vm1");
	allow.taps[allow.nr_taps++] = "tap0";
}

static void dev(const char *option, const char *spec, const char *key, const char *value,
		const char *id)
{
	cfg.devs[cfg.nr_devs++] = (struct vmm_dev_arg){option, spec, key, value, id};
}

static void refused(const char *name, const char *what)
{
	err[0] = '\0';
	assert_int_equal(vmm_allow_check(&allow, &cfg, err, sizeof(err)), -1);
	if (!strstr(err, name) || !strstr(err, what) || strchr(err, '\n'))
		fail_msg("want one line naming %s and %s, got: %s", name, what, err);
}

static void allowed(void)
{
	err[0] = '\0';
	if (vmm_allow_check(&allow, &cfg, err, sizeof(err)) != 0)
		fail_msg("refused: %s", err);
}

static void test_inside(void **state)
{
	(void)state;
	reset();
	dev("disk", "", "path", tp(1, "vm1/disk.img"), "rootfs");
	dev("disk", "ro", "path", tp(2, "vm1/./disk.img"), "data");
	dev("net", "", "tap", "tap0", "eth0");
	dev("vsock", "cid=3", "uds", tp(3, "vm1/v.sock"), NULL); /* bound later */
	allowed();
	/* No skiff_allow: the state is trusted, as before. */
	dev("disk", "", "path", "/etc/shadow", "x");
	assert_int_equal(vmm_allow_check(NULL, &cfg, err, sizeof(err)), 0);
}

static void test_outside(void **state)
{
	(void)state;
	reset();
	dev("disk", "", "path", tp(1, "vm1/disk.img"), "rootfs");
	dev("disk", "", "path", tp(2, "other/x.img"), "data");
	refused("virtio-blk1", P[2]);
	/* The path in the spec itself, no key apart: parsed as the build would. */
	reset();
	snprintf(P[3], sizeof(P[3]), "%s/other/x.img,ro", T);
	dev("disk", P[3], NULL, NULL, NULL);
	refused("virtio-blk0", "other/x.img");
}

static void test_dotdot_escape(void **state)
{
	(void)state;
	reset();
	dev("disk", "", "path", tp(1, "vm1/../other/x.img"), "data");
	refused("virtio-blk0", "resolved: ");
	assert_non_null(strstr(err, "/other/x.img"));
	/* A socket not yet there, its directory escaping. */
	reset();
	dev("vsock", "cid=3", "uds", tp(1, "vm1/../other/v.sock"), NULL);
	refused("virtio-vsock0", "outside");
}

static void test_symlink_escape(void **state)
{
	(void)state;
	reset();
	dev("disk", "", "path", tp(1, "vm1/link"), "data");
	refused("virtio-blk0", "vm1/link");
	assert_non_null(strstr(err, "other/x.img")); /* where it really goes */
	/* A dangling symlink is not a new name: bind or open would follow it. */
	reset();
	dev("vsock", "cid=3", "uds", tp(1, "vm1/dangle"), NULL);
	refused("virtio-vsock0", "vm1/dangle");
	assert_non_null(strstr(err, "a dangling symlink"));
	/* Nor is a name that is no name. */
	reset();
	dev("vsock", "cid=3", "uds", tp(1, "vm1/nodir/.."), NULL);
	refused("virtio-vsock0", "cannot be resolved");
}

static void test_prefix_boundary(void **state)
{
	(void)state;
	reset();
	dev("disk", "", "path", tp(1, "vm10/disk.img"), "data");
	refused("virtio-blk0", "vm10/disk.img");
	/* With a trailing '/', and as a string prefix without one. */
	allow.paths[0] = tp(0, "vm1/");
	refused("virtio-blk0", "vm10/disk.img");
	allow.paths[0] = tp(0, "vm");
	refused("virtio-blk0", "vm10/disk.img");
	/* The entry itself (a file) is allowed, and a socket's name before
	 * the socket is there. */
	allow.paths[0] = tp(0, "vm10/disk.img");
	allowed();
	allow.paths[allow.nr_paths++] = tp(3, "vm10/v.sock");
	dev("vsock", "cid=3", "uds", tp(4, "vm10/v.sock"), NULL);
	allowed();
	allow.paths[1] = tp(3, "vm10/v.soc");
	refused("virtio-vsock0", "vm10/v.sock");
}

static void test_tap_not_listed(void **state)
{
	(void)state;
	reset();
	dev("net", "", "tap", "tap0", "eth0");
	dev("net", "model=e1000", "tap", "tap1", "eth1");
	refused("e1000-0", "tap=tap1");
	/* In the spec, no key apart. */
	reset();
	dev("net", "tap=tap9,mac=02:00:00:00:00:09", NULL, NULL, NULL);
	refused("virtio-net0", "tap=tap9");
}

static void test_override_allows_tap(void **state)
{
	(void)state;
	struct vmm_net_override ov[] = {{"eth1", "tap7"}};
	reset();
	cfg.net_overrides = ov;
	cfg.nr_net_overrides = 1;
	dev("net", "", "tap", "tap0", "eth0");
	dev("net", "", "tap", "tap7", "eth1"); /* the override applied */
	allowed();
	/* The override is for eth1's card, not for another's. */
	dev("net", "", "tap", "tap7", "eth2");
	refused("virtio-net2", "tap=tap7");
}

static void test_bad_devices(void **state)
{
	(void)state;
	reset();
	dev("vfio-pci", "0000:01:00.0", NULL, NULL, NULL);
	refused("vfio0", "VFIO");
	reset();
	dev("floppy", "x", NULL, NULL, NULL);
	refused("device 0", "floppy");
	reset();
	dev("disk", "", "path", "", "d"); /* the kind's own parser refuses it */
	refused("virtio-blk0", "empty image path");
	reset();
	dev("disk", "", "path", "rel\n.img", "d"); /* shown on one line */
	refused("virtio-blk0", "rel?.img");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_inside),
	    cmocka_unit_test(test_outside),
	    cmocka_unit_test(test_dotdot_escape),
	    cmocka_unit_test(test_symlink_escape),
	    cmocka_unit_test(test_prefix_boundary),
	    cmocka_unit_test(test_tap_not_listed),
	    cmocka_unit_test(test_override_allows_tap),
	    cmocka_unit_test(test_bad_devices),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
