// SPDX-License-Identifier: Apache-2.0
#include "core/sandbox.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <malloc.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/log.h"
#include "core/sandbox_rules.h"

#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1 /* si_code of a seccomp trap (asm-generic/siginfo.h) */
#endif

static atomic_bool enabled;
/* The calling thread's role once its filter is in, else -1: read by the
 * SIGSYS handler (static TLS of the executable: async-signal-safe). */
static _Thread_local int thread_role = -1;

static const char *const role_names[SANDBOX_NR_ROLES] = {
    [SANDBOX_VCPU] = "vcpu",
    [SANDBOX_IO] = "io",
    [SANDBOX_BLK] = "blk",
    [SANDBOX_CONSOLE] = "console",
    [SANDBOX_API] = "api",
    [SANDBOX_MAIN] = "main",
    [SANDBOX_CONTROLLER] = "controller",
    [SANDBOX_DEVICE] = "device",
};

const char *sandbox_role_name(enum sandbox_role role)
{
	return (unsigned int)role < SANDBOX_NR_ROLES ? role_names[role] : NULL;
}

bool sandbox_active(void)
{
	return thread_role >= 0;
}

/* System-call names, resolved before any filter: the handler may not
 * allocate. */
#define NAMES_NR  512
#define NAME_SIZE 32
static char sys_names[NAMES_NR][NAME_SIZE];
static pthread_once_t process_once = PTHREAD_ONCE_INIT;

static void names_init(void)
{
	for (int nr = 0; nr < NAMES_NR; nr++) {
		char *s = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
		if (s)
			snprintf(sys_names[nr], NAME_SIZE, "%s", s);
		free(s);
	}
}

/* The test-only SKIFF_SECCOMP_TEST=ROLE:SYSCALL (sandbox.h). */
static int test_role = -1;
static int test_nr = -1;

static void test_hook_read(void)
{
	const char *v = getenv("SKIFF_SECCOMP_TEST");
	const char *colon = v ? strchr(v, ':') : NULL;
	test_role = -1;
	if (!colon)
		return;
	for (int r = 0; r < SANDBOX_NR_ROLES; r++)
		if (strlen(role_names[r]) == (size_t)(colon - v) &&
		    !strncmp(v, role_names[r], (size_t)(colon - v)))
			test_role = r;
	test_nr = seccomp_syscall_resolve_name(colon + 1);
	if (test_role < 0 || test_nr < 0) {
		log_warn("seccomp test: ignoring SKIFF_SECCOMP_TEST=%s", v);
		test_role = -1;
	}
}

static void test_hook_run(enum sandbox_role role)
{
	if (test_role != (int)role)
		return;
	syscall(test_nr, 0, 0, 0, 0, 0, 0);
	/* Still here: the call was allowed, and the test must say so. */
	log_err("seccomp test: %s was allowed in the %s thread", sys_names[test_nr],
		role_names[role]);
}

static size_t put_str(char *buf, size_t pos, size_t size, const char *s)
{
	while (*s && pos + 1 < size)
		buf[pos++] = *s++;
	return pos;
}

static size_t put_uint(char *buf, size_t pos, size_t size, unsigned int v)
{
	char digits[12];
	size_t n = 0;
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n && pos + 1 < size)
		buf[pos++] = digits[--n];
	return pos;
}

/* Async-signal-safe: the line is assembled by hand and written with one
 * write(2). SA_RESETHAND has already put SIGSYS back to its default, and
 * SIGSYS is blocked until the handler returns: the tgkill (allowed to
 * skiff's own pid in every role) leaves it pending, and it kills the
 * whole process, with a core dump if enabled, as soon as we return. */
static void sigsys_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (si->si_code != SYS_SECCOMP)
		goto die; /* sent by someone: not ours to explain */
	int role = thread_role;
	unsigned int nr = (unsigned int)si->si_syscall;
	char line[160];
	size_t n = put_str(line, 0, sizeof(line), "skiff: seccomp: ");
	n = put_str(line, n, sizeof(line), role >= 0 ? role_names[role] : "unknown");
	n = put_str(line, n, sizeof(line), " thread made forbidden system call ");
	n = put_str(line, n, sizeof(line), nr < NAMES_NR && sys_names[nr][0] ? sys_names[nr] : "?");
	n = put_str(line, n, sizeof(line), " (");
	n = put_uint(line, n, sizeof(line), nr);
	n = put_str(line, n, sizeof(line), ")\n");
	if (write(STDERR_FILENO, line, n) < 0) {
		/* nothing more to say */
	}
die:
	syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig);
}

/* Once per process, before any thread exists: a thread installing its
 * filter later must not re-arm the handler, or the SIGSYS another thread
 * has just re-raised would be caught again instead of killing. */
static int sigsys_err;

static void process_init(void)
{
	names_init();
	/* glibc shrinks a thread arena's heap only past the trim threshold,
	 * and the first shrink reads /proc/sys/vm/overcommit_memory: a path
	 * lookup no filter allows (it killed the API thread). A threshold
	 * above a thread heap's 64 MiB means it never happens; the main
	 * arena trims with brk, no file. */
	mallopt(M_TRIM_THRESHOLD, 128 << 20);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sigsys_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	sigsys_err = sigaction(SIGSYS, &sa, NULL) < 0 ? -errno : 0;
}

void sandbox_enable(bool on)
{
	atomic_store(&enabled, on);
	if (on) {
		pthread_once(&process_once, process_init);
		test_hook_read();
	}
}

static int rule_add(scmp_filter_ctx ctx, const struct sandbox_rule *r, uint64_t pid)
{
	struct scmp_arg_cmp cmp[2];
	for (unsigned int i = 0; i < r->ncmp; i++) {
		const struct sandbox_cmp *c = &r->cmp[i];
		cmp[i] = (struct scmp_arg_cmp){.arg = c->arg,
					       .op = SCMP_CMP_MASKED_EQ,
					       .datum_a = c->mask,
					       .datum_b = c->pid ? pid : c->val};
	}
	return seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, r->nr, r->ncmp, cmp);
}

/* The sets device kinds added per role (sandbox_add_rules): written by
 * the main thread before it creates the threads that read them. */
static struct {
	const struct sandbox_rules *set[SANDBOX_EXTRA_MAX];
	size_t n;
} extra[SANDBOX_NR_ROLES];

/* The roles whose added sets a role takes too: the controller is the main
 * thread with more, so a kind's calls for main are its calls as well. */
static const int extra_also[SANDBOX_NR_ROLES] = {
    [SANDBOX_VCPU] = -1,
    [SANDBOX_IO] = -1,
    [SANDBOX_BLK] = -1,
    [SANDBOX_CONSOLE] = -1,
    [SANDBOX_API] = -1,
    [SANDBOX_MAIN] = -1,
    [SANDBOX_CONTROLLER] = SANDBOX_MAIN,
    [SANDBOX_DEVICE] = -1,
};

int sandbox_add_rules(enum sandbox_role role, const struct sandbox_rules *rules)
{
	if ((unsigned int)role >= SANDBOX_NR_ROLES)
		return -EINVAL;
	for (size_t i = 0; i < extra[role].n; i++)
		if (extra[role].set[i] == rules)
			return 0;
	if (extra[role].n == SANDBOX_EXTRA_MAX)
		return -ENOSPC;
	extra[role].set[extra[role].n++] = rules;
	return 0;
}

void sandbox_clear_rules(void)
{
	memset(extra, 0, sizeof(extra));
}

bool sandbox_has_rules(enum sandbox_role role, const struct sandbox_rules *rules)
{
	for (size_t i = 0; (unsigned int)role < SANDBOX_NR_ROLES && i < extra[role].n; i++)
		if (extra[role].set[i] == rules)
			return true;
	return false;
}

static int rules_add(scmp_filter_ctx ctx, const struct sandbox_rules *g, uint64_t pid)
{
	int r = 0;
	for (size_t i = 0; i < g->n && r == 0; i++)
		r = rule_add(ctx, &g->rule[i], pid);
	return r;
}

/* The sets a role's filter takes besides its table, in the order added:
 * its own, then those of the role it takes after. */
#define ROLE_SETS_MAX (2 * SANDBOX_EXTRA_MAX)

static size_t role_sets(enum sandbox_role role, const struct sandbox_rules **out)
{
	size_t n = 0;
	const int from[2] = {(int)role, extra_also[role]};
	for (size_t j = 0; j < 2 && from[j] >= 0; j++)
		for (size_t g = 0; g < extra[from[j]].n; g++)
			out[n++] = extra[from[j]].set[g];
	return n;
}

/* The role's filter, not yet loaded: its table and its sets. */
static scmp_filter_ctx filter_build(enum sandbox_role role, int *err)
{
	const struct sandbox_table *t = &sandbox_tables[role];
	const struct sandbox_rules *set[ROLE_SETS_MAX];
	size_t n = role_sets(role, set);
	/* The default traps into sigsys_handler; a call made for another
	 * architecture (int 0x80) kills outright. */
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRAP);
	if (!ctx) {
		*err = -ENOMEM;
		return NULL;
	}
	int r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	uint64_t pid = (uint64_t)getpid();
	for (size_t g = 0; g < t->n && r == 0; g++)
		r = rules_add(ctx, &t->group[g], pid);
	for (size_t i = 0; i < n && r == 0; i++)
		r = rules_add(ctx, set[i], pid);
	if (r < 0) {
		seccomp_release(ctx);
		*err = r;
		return NULL;
	}
	return ctx;
}

/* A role's filter compiled ahead (sandbox_prepare), with the sets it was
 * compiled from: sandbox_enter takes it only while they are still the
 * role's, so it is always the program a compile would make now. */
static struct {
	struct sock_filter *insn;
	unsigned short len;
	const struct sandbox_rules *set[ROLE_SETS_MAX];
	size_t n;
} ready[SANDBOX_NR_ROLES];

static bool ready_matches(enum sandbox_role role)
{
	const struct sandbox_rules *set[ROLE_SETS_MAX];
	size_t n = role_sets(role, set);
	return ready[role].insn && ready[role].n == n &&
	       !memcmp(ready[role].set, set, n * sizeof(set[0]));
}

/* libseccomp's program, read back through a memory file (its 2.5 can
 * only write one to a file descriptor). */
static int filter_export(scmp_filter_ctx ctx, struct sock_filter **insn, unsigned short *len)
{
	int fd = memfd_create("skiff-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = seccomp_export_bpf(ctx, fd);
	off_t size = r == 0 ? lseek(fd, 0, SEEK_END) : -1;
	if (r == 0 && (size <= 0 || size % (off_t)sizeof(**insn) ||
		       size / (off_t)sizeof(**insn) > BPF_MAXINSNS))
		r = -EINVAL;
	*insn = r == 0 ? malloc((size_t)size) : NULL;
	if (r == 0 && !*insn)
		r = -ENOMEM;
	if (r == 0 && pread(fd, *insn, (size_t)size, 0) != size)
		r = -EIO;
	close(fd);
	if (r < 0) {
		free(*insn);
		*insn = NULL;
		return r;
	}
	*len = (unsigned short)(size / (off_t)sizeof(**insn));
	return 0;
}

int sandbox_prepare(void)
{
	if (!atomic_load(&enabled))
		return 0;
	for (int role = 0; role < SANDBOX_NR_ROLES; role++) {
		free(ready[role].insn);
		ready[role].insn = NULL;
		int r = 0;
		scmp_filter_ctx ctx = filter_build((enum sandbox_role)role, &r);
		if (!ctx)
			return r;
		r = filter_export(ctx, &ready[role].insn, &ready[role].len);
		seccomp_release(ctx);
		if (r < 0)
			return r;
		ready[role].n = role_sets((enum sandbox_role)role, ready[role].set);
	}
	return 0;
}

/* What libseccomp's seccomp_load does with its defaults: no new
 * privileges, then the program, for this thread only. */
static int ready_load(enum sandbox_role role)
{
	struct sock_fprog prog = {.len = ready[role].len, .filter = ready[role].insn};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		return -errno;
	return 0;
}

static int filter_load(enum sandbox_role role)
{
	if (ready_matches(role))
		return ready_load(role);
	int r = 0;
	scmp_filter_ctx ctx = filter_build(role, &r);
	if (!ctx)
		return r;
	r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r;
}

int sandbox_enter(enum sandbox_role role)
{
	if (!atomic_load(&enabled))
		return 0;
	if ((unsigned int)role >= SANDBOX_NR_ROLES)
		return -EINVAL;
	if (thread_role >= 0)
		return -EBUSY; /* a second filter would stack on the first */
	pthread_once(&process_once, process_init);
	int r = sigsys_err;
	if (r == 0)
		r = filter_load(role);
	if (r < 0)
		return r;
	thread_role = (int)role;
	test_hook_run(role);
	return 0;
}

void sandbox_enter_or_die(enum sandbox_role role)
{
	int r = sandbox_enter(role);
	if (r == 0)
		return;
	log_err("seccomp: cannot install the filter of the %s thread: %s", role_names[role],
		strerror(-r));
	_exit(1);
}
