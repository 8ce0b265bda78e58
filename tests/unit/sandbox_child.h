// SPDX-License-Identifier: Apache-2.0
/* Runs a function in a forked child with stderr captured, for the sandbox
 * tests: a filter cannot be removed, so each case gets its own process.
 * No KVM is needed: a role's filter is installed by hand in the child. */
#ifndef TEST_SANDBOX_CHILD_H
#define TEST_SANDBOX_CHILD_H

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct child_result {
	int status;	/* waitpid's */
	char err[1024]; /* what the child wrote on stderr */
};

/* fn's return value is the child's exit status. */
static inline void child_run(int (*fn)(void *), void *arg, struct child_result *res)
{
	int p[2];
	memset(res, 0, sizeof(*res));
	if (pipe(p) < 0)
		return;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		dup2(p[1], STDERR_FILENO);
		_exit(fn(arg)); /* _exit: no atexit handlers, no leak checks */
	}
	close(p[1]);
	size_t n = 0;
	ssize_t r;
	while (n + 1 < sizeof(res->err) &&
	       (r = read(p[0], res->err + n, sizeof(res->err) - 1 - n)) > 0)
		n += (size_t)r;
	close(p[0]);
	waitpid(pid, &res->status, 0);
}

static inline bool child_died_by_sigsys(const struct child_result *res)
{
	return WIFSIGNALED(res->status) && WTERMSIG(res->status) == SIGSYS;
}

static inline bool child_exited_ok(const struct child_result *res)
{
	return WIFEXITED(res->status) && WEXITSTATUS(res->status) == 0;
}

#endif
