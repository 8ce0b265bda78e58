// SPDX-License-Identifier: Apache-2.0
/* A hostile review of skiff-jailer (review 3), as root with temporary
 * directories: what an orchestrator's arguments, environment or a user
 * with write access below the chroot base can make the root jailer do.
 * Each test failed on the code before its fix ("review: ..." commits). */
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
#include "jailer/jail_cgroup.h"
#include "jailer/jail_exec.h"

/* The jail made, then <base>/<name>/<id> swapped for a symlink to a
 * decoy with a root of its own (who can write <base>/<name> can do it
 * between the jailer's mkdir and its pivot): the jailer enters the jail it
 * made or none, never the decoy. It followed the path into the decoy. */
static void test_enter_swapped_path(void **state)
{
	(void)state;
	char id[PATH_MAX + 16], real[PATH_MAX + 16], decoy[PATH_MAX + 16], path[PATH_MAX + 64];
	struct fixture f;
	struct jail_dir d;
	root_fixture_make(&f);
	assert_int_equal(jail_dir_create(&f.a, f.exec_fd, &d, err, sizeof(err)), 0);
	/* The path as made: entered (the exec file is at its root). */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(jail_enter(-1, d.root_fd, d.root_path, err, sizeof(err)) == 0 &&
			      access("/skiff", F_OK) == 0
			  ? 0
			  : 1);
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	snprintf(id, sizeof(id), "%s/skiff/vm1", f.base);
	snprintf(real, sizeof(real), "%s/skiff/vm1.real", f.base);
	snprintf(decoy, sizeof(decoy), "%s/decoy", f.top);
	assert_int_equal(mkdir(decoy, 0755), 0);
	snprintf(path, sizeof(path), "%s/root", decoy);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/root/decoy-marker", decoy);
	put(path, "decoy", 0644);
	assert_int_equal(rename(id, real), 0);
	assert_int_equal(symlink(decoy, id), 0);

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* 0: refused, or in the jail it made; 1: in the decoy. */
		if (jail_enter(-1, d.root_fd, d.root_path, err, sizeof(err)) < 0)
			_exit(0);
		_exit(access("/decoy-marker", F_OK) == 0 ? 1 : 0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	unlink(id);
	assert_int_equal(rename(real, id), 0);
	jail_dir_remove(&d, &f.a);
	fixture_drop(&f);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 1)
		fail_msg("the jailer pivoted into the decoy the swapped path named");
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* SKIFF_JAILER_CGROUP_ROOT names any directory: the root jailer made
 * <dir>/<parent>/<id> there, wrote the --cgroup values and cgroup.procs
 * into plain files, and ran the VMM with none of its limits. Only a
 * cgroup v2 file system is taken now (tests/cli/run.sh runs the binary). */
static void test_cgroup_root_not_cgroup2(void **state)
{
	(void)state;
	char dir[] = "/tmp/skiff-rev3cg-XXXXXX";
	assert_non_null(mkdtemp(dir));
	err[0] = 0;
	assert_int_equal(jail_cgroup_root_check(dir, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a cgroup v2 file system"));
	assert_int_equal(jail_cgroup_root_check("/proc", err, sizeof(err)), -1);
	rmdir(dir);
	/* A real cgroup2 mount, where the host has one, is taken. */
	FILE *m = fopen("/proc/self/mounts", "re");
	char line[1024], path[512], type[64];
	while (m && fgets(line, sizeof(line), m))
		if (sscanf(line, "%*s %511s %63s", path, type) == 2 && !strcmp(type, "cgroup2"))
			assert_int_equal(jail_cgroup_root_check(path, err, sizeof(err)), 0);
	if (m)
		fclose(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_enter_swapped_path),
	    cmocka_unit_test(test_cgroup_root_not_cgroup2),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
