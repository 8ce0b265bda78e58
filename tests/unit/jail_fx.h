// SPDX-License-Identifier: Apache-2.0
/* What the jailer's unit tests share: a command line parsed as
 * skiff-jailer's, files and trees made and removed, and (as root) a
 * temporary top holding the exec file of a jail. The includer includes
 * cmocka first. */
#ifndef SKIFF_TEST_JAIL_FX_H
#define SKIFF_TEST_JAIL_FX_H

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jailer/jail_args.h"
#include "jailer/jail_fs.h"

static char err[512];

/* ARGS (NULL-terminated) after "skiff-jailer": jail_args_parse's answer,
 * its line in err. */
static inline int parse(const char *const *args, struct jail_args *a)
{
	static char *argv[32]; /* a.exec_argv points into it */
	int n = 0;
	argv[n++] = "skiff-jailer";
	for (; args[n - 1]; n++)
		argv[n] = (char *)args[n - 1];
	argv[n] = NULL;
	err[0] = 0;
	return jail_args_parse(n, argv, a, err, sizeof(err));
}

/* The least a jail needs (--id x --exec-file /s --uid 5 --gid 6), then
 * MORE (NULL-terminated): for checks of what MORE says. */
static inline int parse_min(const char *const *more, struct jail_args *a)
{
	const char *args[31] = {"--id", "x", "--exec-file", "/s", "--uid", "5", "--gid", "6"};
	size_t n = 8;
	for (; *more; more++) {
		assert_true(n + 1 < sizeof(args) / sizeof(args[0]));
		args[n++] = *more;
	}
	args[n] = NULL;
	return parse(args, a);
}

static inline void rm_rf(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY);
	if (fd >= 0) {
		jail_rm_tree(fd);
		close(fd);
	}
	rmdir(dir);
}

/* PATH holding TEXT, of MODE whatever the umask. */
static inline void put(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

/* A temporary top with an exec file "skiff", and the arguments of a jail
 * vm1 for uid:gid 1000:1000 under <top>/base. */
struct fixture {
	char top[64], base[PATH_MAX], exe[PATH_MAX];
	int exec_fd;
	struct jail_args a;
};

static inline void fixture_make(struct fixture *f)
{
	snprintf(f->top, sizeof(f->top), "/tmp/skiff-jailfx-XXXXXX");
	assert_non_null(mkdtemp(f->top));
	assert_int_equal(chmod(f->top, 0755), 0); /* uid 1000 may walk to the jail */
	snprintf(f->base, sizeof(f->base), "%s/base", f->top);
	snprintf(f->exe, sizeof(f->exe), "%s/skiff", f->top);
	put(f->exe, "binary", 0755);
	f->exec_fd = open(f->exe, O_RDONLY);
	assert_true(f->exec_fd >= 0);
	const char *args[] = {"--id",  "vm1",  "--exec-file",	    f->exe,  "--uid", "1000",
			      "--gid", "1000", "--chroot-base-dir", f->base, NULL};
	assert_int_equal(parse(args, &f->a), 0);
}

/* fixture_make, as root: the test is skipped otherwise (the jail's
 * nodes and owners need it). */
static inline void root_fixture_make(struct fixture *f)
{
	if (geteuid() != 0)
		skip();
	fixture_make(f);
}

static inline void fixture_drop(struct fixture *f)
{
	close(f->exec_fd);
	rm_rf(f->top);
}

#endif
