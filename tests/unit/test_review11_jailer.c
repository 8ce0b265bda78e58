// SPDX-License-Identifier: Apache-2.0
/* A hostile review of skiff-jailer (review 11), as root with temporary
 * directories: who else may write in the jail while the root jailer makes
 * its device nodes, and what the root then does through what they put
 * there. mknodat is wrapped (-Wl,--wrap=mknodat) so that a test acts at
 * the moment a node is made, with no race to win. Each test failed on the
 * code before its fix ("review11: ..." commits). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail_fx.h"
#include "jailer/jail_exec.h"

int __real_mknodat(int dirfd, const char *path, mode_t mode, dev_t dev);

/* What the wrapper does when the jailer makes a node: NULL, nothing. */
static void (*on_mknod)(int dirfd, const char *leaf);

int __wrap_mknodat(int dirfd, const char *path, mode_t mode, dev_t dev)
{
	int r = __real_mknodat(dirfd, path, mode, dev);
	if (r == 0 && on_mknod)
		on_mknod(dirfd, path);
	return r;
}

/* F's jail made, HOOK called at each node it makes. */
static int create_hooked(struct fixture *f, struct jail_dir *d, void (*hook)(int, const char *))
{
	on_mknod = hook;
	int r = jail_dir_create(&f->a, f->exec_fd, d, err, sizeof(err));
	on_mknod = NULL;
	return r;
}

/* The jail's root, while the jailer made its nodes: could a process of
 * the jail's UID (another VM's, or anything running as it) write in it?
 * It could: the root was chowned to the UID before the exec file was
 * copied and the nodes made, so the UID could plant a /dev of its own
 * (subdir() takes an existing one) and swap nodes in it (below). */
static char root_seen[PATH_MAX + 16];
static int uid_wrote = -1;

static void try_as_uid(int dirfd, const char *leaf)
{
	(void)dirfd;
	(void)leaf;
	if (uid_wrote >= 0)
		return;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char path[PATH_MAX + 32];
		snprintf(path, sizeof(path), "%s/planted", root_seen);
		if (setresgid(1000, 1000, 1000) < 0 || setresuid(1000, 1000, 1000) < 0)
			_exit(2);
		_exit(mkdir(path, 0700) == 0 ? 1 : 0);
	}
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) != 2);
	uid_wrote = WEXITSTATUS(st);
}

static void test_root_given_last(void **state)
{
	(void)state;
	struct fixture f;
	struct jail_dir d;
	struct stat st;
	root_fixture_make(&f);
	snprintf(root_seen, sizeof(root_seen), "%s/skiff/vm1/root", f.base);
	uid_wrote = -1;
	int r = create_hooked(&f, &d, try_as_uid);
	assert_int_equal(r, 0);
	/* The root is the UID's in the end (its API socket goes there). */
	assert_int_equal(fstat(d.root_fd, &st), 0);
	assert_true(st.st_uid == 1000 && st.st_gid == 1000);
	jail_dir_remove(&d, &f.a);
	fixture_drop(&f);
	assert_int_not_equal(uid_wrote, -1); /* the wrapper ran */
	if (uid_wrote == 1)
		fail_msg("uid 1000 wrote in the jail's root while the jailer made its nodes");
}

/* Whoever may write the jail's /dev swaps /dev/kvm for a symlink to a
 * host file between the jailer's mknodat and its mode change: fchmodat
 * followed it and made the host file 0600 (chown did not: NOFOLLOW). */
static char victim[PATH_MAX + 16];

static void swap_for_link(int dirfd, const char *leaf)
{
	if (strcmp(leaf, "kvm"))
		return;
	assert_int_equal(unlinkat(dirfd, leaf, 0), 0);
	assert_int_equal(symlinkat(victim, dirfd, leaf), 0);
}

static void test_node_mode_not_through_link(void **state)
{
	(void)state;
	struct fixture f;
	struct jail_dir d;
	struct stat st;
	root_fixture_make(&f);
	snprintf(victim, sizeof(victim), "%s/host-file", f.top);
	put(victim, "host", 0644);
	int r = create_hooked(&f, &d, swap_for_link);
	if (r == 0)
		jail_dir_remove(&d, &f.a);
	assert_int_equal(stat(victim, &st), 0);
	fixture_drop(&f);
	if ((st.st_mode & 07777) != 0644 || st.st_uid != 0)
		fail_msg("the host file behind the link became uid %u mode %04o",
			 (unsigned int)st.st_uid, (unsigned int)(st.st_mode & 07777));
}

/* <base>/<exec name> there already, owned by another user (the base is
 * writable, /srv/jailer made by hand, ...): its owner can swap the <id>
 * directory the jailer makes in it, and so the root and /dev it fills.
 * It was taken; now it is refused (status 2, nothing made in it), as is
 * a root-owned one others may write; a sticky one is taken. */
static void test_name_dir_of_another_user(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	static const struct {
		uid_t uid;
		mode_t mode;
		int want;
	} cases[] = {
	    {2000, 0755, 2}, {0, 0777, 2}, {0, 0775, 2}, {0, 01777, 0}, {0, 0755, 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fixture f;
		struct jail_dir d;
		char name[PATH_MAX + 16], id[PATH_MAX + 32];
		fixture_make(&f);
		snprintf(name, sizeof(name), "%s/skiff", f.base);
		snprintf(id, sizeof(id), "%s/vm1", name);
		assert_int_equal(mkdir(f.base, 0755), 0);
		assert_int_equal(mkdir(name, 0755), 0);
		assert_int_equal(chown(name, cases[i].uid, cases[i].uid), 0);
		assert_int_equal(chmod(name, cases[i].mode), 0);
		err[0] = 0;
		int r = jail_dir_create(&f.a, f.exec_fd, &d, err, sizeof(err));
		bool made = access(id, F_OK) == 0;
		if (r == 0)
			jail_dir_remove(&d, &f.a);
		bool name_left = access(name, F_OK) == 0;
		fixture_drop(&f);
		if (r != cases[i].want)
			fail_msg("case %zu (uid %u mode %04o): status %d, want %d (%s)", i,
				 (unsigned int)cases[i].uid, (unsigned int)cases[i].mode, r,
				 cases[i].want, err);
		if (r == 2) {
			assert_false(made);
			assert_true(name_left); /* not ours: left */
			assert_non_null(strstr(err, "may be written by others"));
			assert_null(strchr(err, '\n'));
		}
	}
}

/* A bad argument's message quotes the argument: one with a newline made
 * it two lines (or a forged one in the orchestrator's log). Every
 * refusal is one line, control characters shown as '?'. */
static void test_bad_argument_one_line(void **state)
{
	(void)state;
	struct jail_args a;
	static const char *const bad[][3] = {
	    {"--id", "vm\nskiff-jailer: ok", NULL},
	    {"--cgroup", "memory.max=1\n2", NULL},
	    {"--resource-limit", "fsize=1\n", NULL},
	    {"--device", "vfio/\n1", NULL},
	    {"--uid", "1\r", NULL},
	    {"--parent-cgroup", "a\nb", NULL},
	    {"--exec-file", "/bin/a\nb", NULL},
	    {"--frob\n", NULL, NULL},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(bad[i], &a), -1);
		for (const char *p = err; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				fail_msg("case %zu: control character in '%s'", i, err);
		assert_non_null(strchr(err, '?'));
	}
}

/* --netns must be a network namespace, found before the jail is made:
 * a FIFO hung open(2) (the jailer opens it O_NONBLOCK now), anything
 * else failed only at setns, after the jail was made. */
static void test_netns_check(void **state)
{
	(void)state;
	char fifo[] = "/tmp/skiff-rev11-fifo-XXXXXX";
	assert_non_null(mkdtemp(fifo));
	char path[sizeof(fifo) + 8];
	snprintf(path, sizeof(path), "%s/p", fifo);
	assert_int_equal(mkfifo(path, 0600), 0);
	static const struct {
		const char *path;
		int want;
	} cases[] = {
	    {"/proc/self/ns/net", 0},
	    {"/proc/self/ns/mnt", -1},
	    {"/proc/self/status", -1},
	    {"/tmp", -1},
	    {NULL, -1}, /* the FIFO */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *p = cases[i].path ? cases[i].path : path;
		int fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		assert_true(fd >= 0);
		err[0] = 0;
		if (jail_netns_check(fd, p, err, sizeof(err)) != cases[i].want)
			fail_msg("%s: want %d (%s)", p, cases[i].want, err);
		if (cases[i].want < 0)
			assert_non_null(strstr(err, "is not a network namespace"));
		close(fd);
	}
	unlink(path);
	rmdir(fifo);
}

/* Where close_range(2) is missing, the scan closed fds below the
 * RLIMIT_NOFILE of the moment, which --resource-limit no-file had just
 * lowered: an fd inherited above it (900 under no-file=64) reached the
 * jailed process. */
static void test_close_fds_scan_past_rlimit(void **state)
{
	(void)state;
	struct jail_args a;
	const char *more[] = {"--resource-limit", "no-file=64", NULL};
	assert_int_equal(parse_min(more, &a), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (dup2(2, 900) != 900 || dup2(2, 40) != 40)
			_exit(10);
		if (jail_rlimits_set(&a, err, sizeof(err)) < 0)
			_exit(11);
		jail_close_fds_scan();
		_exit(fcntl(40, F_GETFD) == -1 && fcntl(900, F_GETFD) == -1 ? 0
		      : fcntl(40, F_GETFD) == -1			    ? 1
									    : 12);
	}
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 1)
		fail_msg("fd 900, above the lowered no-file limit, was left open");
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* no-file above fs.nr_open: setrlimit refused it after the jail was
 * made (exit 1); now refused before anything is made. */
static void test_rlimits_check(void **state)
{
	(void)state;
	struct jail_args a;
	const char *big[] = {"--resource-limit", "no-file=99999999999", NULL};
	const char *ok[] = {"--resource-limit", "fsize=99999999999", NULL};
	assert_int_equal(parse_min(big, &a), 0);
	err[0] = 0;
	assert_int_equal(jail_rlimits_check(&a, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "fs.nr_open"));
	assert_int_equal(parse_min(ok, &a), 0);
	assert_int_equal(jail_rlimits_check(&a, err, sizeof(err)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_root_given_last),
	    cmocka_unit_test(test_node_mode_not_through_link),
	    cmocka_unit_test(test_name_dir_of_another_user),
	    cmocka_unit_test(test_bad_argument_one_line),
	    cmocka_unit_test(test_netns_check),
	    cmocka_unit_test(test_close_fds_scan_past_rlimit),
	    cmocka_unit_test(test_rlimits_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
