// SPDX-License-Identifier: Apache-2.0
/* The per-role seccomp filters: every role dies by SIGSYS, with one line
 * naming the role and the call, on what no role may do; the test-only
 * switch makes a role's thread attempt a call; a filter binds only the
 * thread that installed it. Each case runs in a forked child. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "core/sandbox.h"
#include "sandbox_child.h"

/* One forbidden attempt; returns only if it was allowed. */
struct attempt {
	const char *name; /* as the line must name it */
	int nr;
	void (*fn)(void);
};

/* Creating a file (the controller may open an existing one). */
static void try_openat(void)
{
	syscall(SYS_openat, AT_FDCWD, "/nonexistent-skiff-test", O_WRONLY | O_CREAT, 0600);
}

/* A path probe: fstat through a path, what glibc's fstat uses. */
static void try_newfstatat(void)
{
	struct stat st;
	syscall(SYS_newfstatat, AT_FDCWD, "/etc/passwd", &st, 0);
}

static void try_unlink(void)
{
	syscall(SYS_unlink, "/nonexistent-skiff-test");
}

/* A family no role is given (the controller makes Unix and IP streams
 * for a live migration, vsock's thread Unix ones). */
static void try_socket(void)
{
	syscall(SYS_socket, AF_NETLINK, SOCK_RAW, 0);
}

static void try_execve(void)
{
	char *argv[] = {"/bin/true", NULL};
	syscall(SYS_execve, "/bin/true", argv, NULL);
}

static void try_clone(void)
{
	syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0); /* a process */
}

/* Pushing a byte into the terminal's input: never, in any role. */
static void try_tiocsti(void)
{
	char c = 'x';
	syscall(SYS_ioctl, STDIN_FILENO, TIOCSTI, &c);
}

/* tgkill to a pid other than skiff's own (the parent: the test). */
static pid_t other_pid;

static void try_tgkill_other(void)
{
	syscall(SYS_tgkill, other_pid, other_pid, 0);
}

static void try_mmap_exec(void)
{
	syscall(SYS_mmap, 0, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

static void try_prctl(void)
{
	syscall(SYS_prctl, PR_SET_DUMPABLE, 1, 0, 0, 0);
}

static const struct attempt forbidden_everywhere[] = {
    {"openat", SYS_openat, try_openat}, {"newfstatat", SYS_newfstatat, try_newfstatat},
    {"unlink", SYS_unlink, try_unlink}, {"socket", SYS_socket, try_socket},
    {"execve", SYS_execve, try_execve}, {"clone", SYS_clone, try_clone},
    {"ioctl", SYS_ioctl, try_tiocsti},	{"tgkill", SYS_tgkill, try_tgkill_other},
    {"mmap", SYS_mmap, try_mmap_exec},	{"prctl", SYS_prctl, try_prctl},
};

struct role_attempt {
	enum sandbox_role role;
	const struct attempt *a;
};

static int child_attempt(void *arg)
{
	const struct role_attempt *ra = arg;
	other_pid = getppid();
	sandbox_enable(true);
	if (sandbox_enter(ra->role) != 0)
		return 10;
	ra->a->fn();
	return 11; /* survived */
}

static void expect_death(enum sandbox_role role, const struct attempt *a)
{
	struct role_attempt ra = {role, a};
	struct child_result res;
	child_run(child_attempt, &ra, &res);
	char want[160];
	snprintf(want, sizeof(want),
		 "skiff: seccomp: %s thread made forbidden system call %s (%d)\n",
		 sandbox_role_name(role), a->name, a->nr);
	if (!child_died_by_sigsys(&res) || strcmp(res.err, want) != 0)
		print_error("role %s, %s: status %#x, stderr \"%s\", wanted \"%s\"\n",
			    sandbox_role_name(role), a->name, res.status, res.err, want);
	assert_true(child_died_by_sigsys(&res));
	assert_string_equal(res.err, want); /* exactly one line */
}

static void test_every_role_dies_on_forbidden_calls(void **state)
{
	(void)state;
	for (int r = 0; r < SANDBOX_NR_ROLES; r++)
		for (size_t i = 0;
		     i < sizeof(forbidden_everywhere) / sizeof(forbidden_everywhere[0]); i++)
			expect_death((enum sandbox_role)r, &forbidden_everywhere[i]);
}

static void try_kvm_run(void)
{
	syscall(SYS_ioctl, STDIN_FILENO, 0xae80 /* KVM_RUN */, 0);
}

static void try_tcsets(void)
{
	struct termios t;
	memset(&t, 0, sizeof(t));
	syscall(SYS_ioctl, STDIN_FILENO, TCSETS, &t);
}

static void try_epoll_wait(void)
{
	syscall(SYS_epoll_wait, -1, NULL, 0, 0);
}

static void try_pwrite(void)
{
	syscall(SYS_pwrite64, -1, NULL, 0, 0);
}

static void try_accept(void)
{
	syscall(SYS_accept4, -1, NULL, NULL, 0);
}

static void try_sockopt_type(void)
{
	int v;
	socklen_t len = sizeof(v);
	syscall(SYS_getsockopt, -1, SOL_SOCKET, SO_TYPE, &v, &len);
}

static void try_close(void)
{
	syscall(SYS_close, -1);
}

/* What one role may do and another may not: the tables differ. */
static const struct attempt kvm_run = {"ioctl", SYS_ioctl, try_kvm_run};
static const struct attempt tcsets = {"ioctl", SYS_ioctl, try_tcsets};
static const struct attempt epoll_wait_ = {"epoll_wait", SYS_epoll_wait, try_epoll_wait};
static const struct attempt pwrite_ = {"pwrite64", SYS_pwrite64, try_pwrite};
static const struct attempt accept_ = {"accept4", SYS_accept4, try_accept};
static const struct attempt sockopt_type = {"getsockopt", SYS_getsockopt, try_sockopt_type};
static const struct attempt close_ = {"close", SYS_close, try_close};

static void test_roles_differ(void **state)
{
	(void)state;
	const struct role_attempt cases[] = {
	    {SANDBOX_IO, &kvm_run},	  {SANDBOX_BLK, &kvm_run},	{SANDBOX_CONSOLE, &kvm_run},
	    {SANDBOX_API, &kvm_run},	  {SANDBOX_MAIN, &kvm_run},	{SANDBOX_VCPU, &tcsets},
	    {SANDBOX_IO, &tcsets},	  {SANDBOX_CONSOLE, &tcsets},	{SANDBOX_API, &tcsets},
	    {SANDBOX_BLK, &epoll_wait_},  {SANDBOX_MAIN, &epoll_wait_}, {SANDBOX_IO, &pwrite_},
	    {SANDBOX_CONSOLE, &pwrite_},  {SANDBOX_VCPU, &accept_},	{SANDBOX_MAIN, &accept_},
	    {SANDBOX_API, &sockopt_type}, {SANDBOX_BLK, &close_},	{SANDBOX_IO, &close_},
	    {SANDBOX_CONSOLE, &close_},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_death(cases[i].role, cases[i].a);
}

/* The test-only switch: the role's thread attempts the call right after
 * installing its filter. */
static int child_hook(void *arg)
{
	sandbox_enable(true);
	sandbox_enter(*(const enum sandbox_role *)arg);
	return 12; /* the hook did not fire, or the call was allowed */
}

static void test_switch_makes_role_attempt_call(void **state)
{
	(void)state;
	const struct {
		enum sandbox_role role;
		const char *env, *line;
	} cases[] = {
	    {SANDBOX_BLK, "blk:openat",
	     "skiff: seccomp: blk thread made forbidden system call openat (257)\n"},
	    {SANDBOX_MAIN, "main:socket",
	     "skiff: seccomp: main thread made forbidden system call socket (41)\n"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setenv("SKIFF_SECCOMP_TEST", cases[i].env, 1);
		struct child_result res;
		child_run(child_hook, (void *)&cases[i].role, &res);
		assert_true(child_died_by_sigsys(&res));
		assert_string_equal(res.err, cases[i].line);
	}
	/* Another role's switch leaves this one alone. */
	setenv("SKIFF_SECCOMP_TEST", "io:openat", 1);
	struct child_result res;
	enum sandbox_role blk = SANDBOX_BLK;
	child_run(child_hook, &blk, &res);
	assert_true(WIFEXITED(res.status) && WEXITSTATUS(res.status) == 12);
	/* A call the role may make is reported as allowed. */
	setenv("SKIFF_SECCOMP_TEST", "blk:getpid", 1);
	child_run(child_hook, &blk, &res);
	assert_true(WIFEXITED(res.status) && WEXITSTATUS(res.status) == 12);
	assert_non_null(strstr(res.err, "getpid was allowed in the blk thread"));
	unsetenv("SKIFF_SECCOMP_TEST");
}

static int helper_pipe[2];

static void *helper_opens(void *arg)
{
	(void)arg;
	char c;
	if (read(helper_pipe[0], &c, 1) != 1)
		return (void *)1;
	int fd = open("/dev/null", O_RDONLY);
	if (fd < 0)
		return (void *)2;
	close(fd);
	return NULL;
}

/* No TSYNC: a thread that was running before stays unfiltered. */
static int child_thread_only(void *arg)
{
	(void)arg;
	pthread_t t;
	if (pipe(helper_pipe) < 0 || pthread_create(&t, NULL, helper_opens, NULL) != 0)
		return 20;
	sandbox_enable(true);
	if (sandbox_enter(SANDBOX_VCPU) != 0)
		return 21;
	if (!sandbox_active())
		return 22;
	if (sandbox_enter(SANDBOX_VCPU) != -EBUSY) /* filters would stack */
		return 23;
	if (write(helper_pipe[1], "x", 1) != 1)
		return 24;
	void *ret;
	pthread_join(t, &ret);
	return ret ? 25 : 0;
}

static void test_filter_binds_only_its_thread(void **state)
{
	(void)state;
	struct child_result res;
	child_run(child_thread_only, NULL, &res);
	if (!child_exited_ok(&res))
		print_error("status %#x, stderr \"%s\"\n", res.status, res.err);
	assert_true(child_exited_ok(&res));
}

static void mark_handler(int sig)
{
	(void)sig;
}

static void *enter_io(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)sandbox_enter(SANDBOX_IO);
}

/* The SIGSYS handler is set once, when the filters are turned on: a
 * thread installing its filter later must not re-arm it, or a SIGSYS that
 * another thread has just re-raised to die would be caught once more
 * (seen in the testbed as a second line, "read (0)"). */
static int child_no_rearm(void *arg)
{
	(void)arg;
	sandbox_enable(true);
	struct sigaction mark = {.sa_handler = mark_handler}, now;
	sigaction(SIGSYS, &mark, NULL);
	pthread_t t;
	void *ret;
	if (pthread_create(&t, NULL, enter_io, NULL) != 0 || pthread_join(t, &ret) != 0 || ret)
		return 30;
	sigaction(SIGSYS, NULL, &now);
	return now.sa_handler == mark_handler ? 0 : 31;
}

static void test_handler_set_once(void **state)
{
	(void)state;
	struct child_result res;
	child_run(child_no_rearm, NULL, &res);
	if (!child_exited_ok(&res))
		print_error("status %#x, stderr \"%s\"\n", res.status, res.err);
	assert_true(child_exited_ok(&res));
}

/* A SIGSYS that is not a seccomp trap (a re-raised one, or one sent by
 * someone) kills without a line: one violation, one line. */
static int child_sent_sigsys(void *arg)
{
	(void)arg;
	sandbox_enable(true);
	if (sandbox_enter(SANDBOX_CONSOLE) != 0)
		return 40;
	syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGSYS);
	return 41;
}

static void test_sent_sigsys_kills_silently(void **state)
{
	(void)state;
	struct child_result res;
	child_run(child_sent_sigsys, NULL, &res);
	assert_true(child_died_by_sigsys(&res));
	assert_string_equal(res.err, "");
}

static int child_disabled(void *arg)
{
	(void)arg;
	sandbox_enable(false);
	if (sandbox_enter(SANDBOX_IO) != 0 || sandbox_active())
		return 1;
	int fd = open("/dev/null", O_RDONLY);
	return fd >= 0 ? 0 : 2;
}

static void test_disabled_is_noop(void **state)
{
	(void)state;
	struct child_result res;
	child_run(child_disabled, NULL, &res);
	assert_true(child_exited_ok(&res));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_role_dies_on_forbidden_calls),
	    cmocka_unit_test(test_roles_differ),
	    cmocka_unit_test(test_switch_makes_role_attempt_call),
	    cmocka_unit_test(test_filter_binds_only_its_thread),
	    cmocka_unit_test(test_handler_set_once),
	    cmocka_unit_test(test_sent_sigsys_kills_silently),
	    cmocka_unit_test(test_disabled_is_noop),
	};
	return cmocka_run_group_tests_name("sandbox", tests, NULL, NULL);
}
