// SPDX-License-Identifier: Apache-2.0
/* Taps for an unprivileged skiff (issue 36): a tap owned by the user is
 * attached without any capability; one it does not own is refused with a
 * line naming both ways out; in a jail, with no /sys, a tap still opens
 * (single- or multi-queue), its queue mode learnt from TUNSETIFF. Needs
 * root to make the taps (skipped otherwise); each case runs in a child. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net/tap.h"

#define NOBODY 65534

/* A persistent tap NAME owned by OWNER (-1: nobody's). 0, or -1. */
static int make_tap(const char *name, long owner, bool mq, bool persist)
{
	struct ifreq ifr;
	int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR | (mq ? IFF_MULTI_QUEUE : 0);
	int r = ioctl(fd, TUNSETIFF, &ifr);
	if (r == 0 && persist && owner >= 0)
		r = ioctl(fd, TUNSETOWNER, owner);
	if (r == 0)
		r = ioctl(fd, TUNSETPERSIST, persist ? 1L : 0L);
	close(fd);
	return r;
}

static int setup(void **state)
{
	(void)state;
	if (geteuid() != 0 || access("/dev/net/tun", R_OK | W_OK) < 0)
		return 0;
	make_tap("sktap-root", 0, false, true);
	make_tap("sktap-user", NOBODY, false, true);
	make_tap("sktap-mq", -1, true, true);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	make_tap("sktap-root", -1, false, false);
	make_tap("sktap-user", -1, false, false);
	make_tap("sktap-mq", -1, true, false);
	return 0;
}

static void need_taps(void)
{
	if (geteuid() != 0 || if_nametoindex("sktap-root") == 0 || if_nametoindex("sktap-mq") == 0)
		skip();
}

/* Runs FN in a child; the child's exit status 0 is a pass, else FN's
 * message is printed. */
static void in_child(int (*fn)(char *msg, size_t len))
{
	int p[2];
	char msg[512] = "";
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char m[512] = "";
		int r = fn(m, sizeof(m));
		if (write(p[1], m, strlen(m)) < 0)
			_exit(99);
		_exit(r);
	}
	close(p[1]);
	ssize_t n = read(p[0], msg, sizeof(msg) - 1);
	msg[n > 0 ? n : 0] = 0;
	close(p[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		fail_msg("child: status %d: %s", st, msg);
}

/* Drops to nobody with /dev/net/tun open to all (a container's may be
 * root's only): a node of the child's own bound over it, in a mount
 * namespace of its own. */
static int as_nobody(void)
{
	char node[] = "/tmp/skiff-tun-XXXXXX";
	int fd = mkstemp(node);
	if (fd < 0)
		return -1;
	close(fd);
	unlink(node);
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_PRIVATE | MS_REC, NULL) < 0 ||
	    mknod(node, S_IFCHR | 0666, makedev(10, 200)) < 0 || chmod(node, 0666) < 0 ||
	    mount(node, "/dev/net/tun", NULL, MS_BIND, NULL) < 0) {
		unlink(node);
		return -1;
	}
	unlink(node);
	return setresgid(NOBODY, NOBODY, NOBODY) == 0 && setresuid(NOBODY, NOBODY, NOBODY) == 0
		   ? 0
		   : -1;
}

static int child_not_owner(char *msg, size_t len)
{
	struct tap t;
	char err[256] = "";
	if (as_nobody() < 0)
		return snprintf(msg, len, "cannot drop to %d", NOBODY), 1;
	if (tap_open(&t, "sktap-root", err, sizeof(err)) == 0)
		return snprintf(msg, len, "a tap of root's attached as nobody"), 2;
	const char *want[] = {"TUNSETIFF on tap 'sktap-root': Operation not permitted",
			      "ip tuntap add sktap-root mode tap user 65534", "CAP_NET_ADMIN"};
	for (size_t i = 0; i < 3; i++)
		if (!strstr(err, want[i]))
			return snprintf(msg, len, "'%s' lacks '%s'", err, want[i]), 3;
	return 0;
}

static int child_owner(char *msg, size_t len)
{
	struct tap t;
	char err[256] = "";
	if (as_nobody() < 0)
		return snprintf(msg, len, "cannot drop to %d", NOBODY), 1;
	if (tap_open(&t, "sktap-user", err, sizeof(err)) < 0)
		return snprintf(msg, len, "%s", err), 2;
	tap_close(&t);
	return 0;
}

/* No /sys, as in a jail: an empty tmpfs over it in a mount namespace. */
static int child_no_sys(char *msg, size_t len)
{
	struct tap t[2];
	char err[256] = "";
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_PRIVATE | MS_REC, NULL) < 0 ||
	    mount("none", "/sys", "tmpfs", 0, NULL) < 0)
		return snprintf(msg, len, "cannot hide /sys"), 1;
	if (access("/sys/class/net", F_OK) == 0)
		return snprintf(msg, len, "/sys still there"), 1;
	if (tap_open(&t[0], "sktap-root", err, sizeof(err)) < 0)
		return snprintf(msg, len, "single queue: %s", err), 2;
	if (t[0].multi_queue)
		return snprintf(msg, len, "single-queue tap taken as multi-queue"), 3;
	tap_close(&t[0]);
	if (tap_open(&t[0], "sktap-mq", err, sizeof(err)) < 0)
		return snprintf(msg, len, "multi-queue tap, one queue: %s", err), 4;
	if (!t[0].multi_queue)
		return snprintf(msg, len, "multi-queue tap not known as one"), 5;
	tap_close(&t[0]);
	if (tap_open_queues(t, 2, "sktap-mq", err, sizeof(err)) < 0)
		return snprintf(msg, len, "multi-queue tap, two queues: %s", err), 6;
	tap_close(&t[0]);
	tap_close(&t[1]);
	if (tap_open_queues(t, 2, "sktap-root", err, sizeof(err)) == 0 ||
	    !strstr(err, "without multi_queue"))
		return snprintf(msg, len, "two queues of a single-queue tap: '%s'", err), 7;
	if (tap_open(&t[0], "sktap-none", err, sizeof(err)) == 0 ||
	    !strstr(err, "no network interface 'sktap-none'"))
		return snprintf(msg, len, "a missing tap: '%s'", err), 8;
	return 0;
}

static void test_not_owner(void **state)
{
	(void)state;
	need_taps();
	in_child(child_not_owner);
}

static void test_owner(void **state)
{
	(void)state;
	need_taps();
	in_child(child_owner);
}

static void test_no_sys(void **state)
{
	(void)state;
	need_taps();
	in_child(child_no_sys);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_not_owner),
	    cmocka_unit_test(test_owner),
	    cmocka_unit_test(test_no_sys),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
