// SPDX-License-Identifier: Apache-2.0
/* The per-role seccomp tables: under its filter each role can still do its
 * work (the calls it makes in skiff, on fds made beforehand: an allowed
 * ioctl reaches the kernel, which answers ENOTTY on a pipe), and no table
 * lists a call that looks up a path, spawns, or pushes terminal input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <poll.h>
#include <pthread.h>
#include <seccomp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/sandbox.h"
#include "core/sandbox_rules.h"
#include "vmm/devmgr.h"
#include "vmm/mig_hosts.h"
#include "vmm/mig_proto.h"
#include "sandbox_child.h"

/* fds and a helper thread made before the filter, as skiff's setup does. */
static struct {
	int pipe[2];
	int efd, epfd, tfd, memfd, listen_fd, client_fd;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int turn;
} fx;
static atomic_int kicked;

static void kick_handler(int sig)
{
	(void)sig;
	atomic_store(&kicked, 1);
}

static void *helper(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&fx.mu);
	while (fx.turn != 1)
		pthread_cond_wait(&fx.cv, &fx.mu);
	fx.turn = 2;
	pthread_cond_signal(&fx.cv);
	pthread_mutex_unlock(&fx.mu);
	return NULL;
}

static int setup(pthread_t *t)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "skiff-sandbox-test-%d", getpid());
	fx.listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
	fx.client_fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (pipe(fx.pipe) < 0 || fx.listen_fd < 0 || fx.client_fd < 0 ||
	    bind(fx.listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fx.listen_fd, 1) < 0 ||
	    connect(fx.client_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -1;
	fx.efd = eventfd(0, EFD_NONBLOCK);
	fx.epfd = epoll_create1(0);
	fx.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	fx.memfd = memfd_create("disk", 0);
	if (fx.efd < 0 || fx.epfd < 0 || fx.tfd < 0 || fx.memfd < 0 || ftruncate(fx.memfd, 1 << 16))
		return -1;
	pthread_mutex_init(&fx.mu, NULL);
	pthread_cond_init(&fx.cv, NULL);
	struct sigaction sa_kick = {.sa_handler = kick_handler};
	sigaction(SIGUSR1, &sa_kick, NULL);
	return pthread_create(t, NULL, helper, NULL) == 0 ? 0 : -1;
}

/* What every role does: log, allocate, lock, kick, time. */
static int common_work(pthread_t t)
{
	fprintf(stderr, "a log line\n");
	void *big = malloc(8 << 20); /* mmap'd */
	if (!big)
		return 1;
	memset(big, 1, 8 << 20);
	free(big);
	pthread_mutex_lock(&fx.mu);
	fx.turn = 1;
	pthread_cond_signal(&fx.cv);
	while (fx.turn != 2)
		pthread_cond_wait(&fx.cv, &fx.mu);
	pthread_mutex_unlock(&fx.mu);
	pthread_join(t, NULL);
	if (pthread_kill(pthread_self(), SIGUSR1) != 0 || !atomic_load(&kicked))
		return 2;
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 3;
	return 0;
}

static bool enotty(int fd, unsigned long req)
{
	char buf[512] = {0};
	return ioctl(fd, req, buf) < 0 && errno == ENOTTY;
}

static int eventfd_roundtrip(void)
{
	uint64_t v = 1;
	return write(fx.efd, &v, sizeof(v)) == sizeof(v) && read(fx.efd, &v, sizeof(v)) == sizeof(v)
		   ? 0
		   : 1;
}

static int vcpu_work(void)
{
	struct epoll_event ev = {.events = EPOLLIN};
	struct itimerspec its = {0};
	struct pollfd p = {.fd = fx.pipe[1], .events = POLLOUT}; /* a full tap's check */
	char b[8];
	return poll(&p, 1, 0) != 1 || !enotty(fx.pipe[0], KVM_RUN) ||
	       !enotty(fx.pipe[0], KVM_IRQFD) || !enotty(fx.pipe[0], KVM_SIGNAL_MSI) ||
	       eventfd_roundtrip() || epoll_ctl(fx.epfd, EPOLL_CTL_ADD, fx.efd, &ev) < 0 ||
	       timerfd_settime(fx.tfd, 0, &its, NULL) < 0 || pwrite(fx.memfd, b, 8, 0) != 8 ||
	       pread(fx.memfd, b, 8, 0) != 8;
}

static int io_work(void)
{
	struct epoll_event ev = {.events = EPOLLIN}, out;
	char b[4] = "abc";
	struct iovec iov = {b, sizeof(b)};
	struct pollfd p = {.fd = fx.pipe[1], .events = POLLOUT}; /* a full tap's check */
	return poll(&p, 1, 0) != 1 || epoll_ctl(fx.epfd, EPOLL_CTL_ADD, fx.pipe[0], &ev) < 0 ||
	       writev(fx.pipe[1], &iov, 1) != 4 || epoll_wait(fx.epfd, &out, 1, 0) != 1 ||
	       readv(fx.pipe[0], &iov, 1) != 4 || eventfd_roundtrip() ||
	       !enotty(fx.pipe[0], KVM_IRQ_LINE);
}

static int blk_work(void)
{
	char b[512] = {1};
	uint64_t one = 1; /* an irqfd is only written */
	struct iovec iov = {b, sizeof(b)};
	return pwritev(fx.memfd, &iov, 1, 512) != 512 || preadv(fx.memfd, &iov, 1, 512) != 512 ||
	       fdatasync(fx.memfd) < 0 ||
	       fallocate(fx.memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096) < 0 ||
	       write(fx.efd, &one, sizeof(one)) != sizeof(one) ||
	       !enotty(fx.pipe[0], KVM_SIGNAL_MSI);
}

static int console_work(void)
{
	char b[2] = "x";
	struct pollfd p = {.fd = fx.pipe[0], .events = POLLIN};
	return write(fx.pipe[1], b, 1) != 1 || poll(&p, 1, 0) != 1 || read(fx.pipe[0], b, 1) != 1 ||
	       usleep(1000) < 0 || !enotty(fx.pipe[0], KVM_IRQ_LINE);
}

/* Sorting exit sites: glibc's qsort of more than 1 KiB asks sysinfo for
 * the machine's memory once. */
static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static int sort_big(void)
{
	static int v[4096];
	for (int i = 0; i < 4096; i++)
		v[i] = 4096 - i;
	qsort(v, 4096, sizeof(v[0]), cmp_int);
	struct sysinfo si;
	return v[0] != 1 || sysinfo(&si) < 0;
}

static int api_work(void)
{
	int c = accept4(fx.listen_fd, NULL, NULL, SOCK_CLOEXEC);
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char b[4];
	int e = eventfd(0, 0);
	int bad = c < 0 || getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
		  send(fx.client_fd, "GET", 3, 0) != 3 || recv(c, b, 3, 0) != 3 ||
		  send(c, "200", 3, MSG_DONTWAIT | MSG_NOSIGNAL) != 3 ||
		  fcntl(c, F_SETFL, fcntl(c, F_GETFL) | O_NONBLOCK) < 0 || e < 0 ||
		  !enotty(fx.pipe[0], KVM_GET_STATS_FD) || sort_big();
	close(e);
	close(c);
	return bad;
}

static int main_work(void)
{
	struct pollfd p = {.fd = fx.efd, .events = POLLIN};
	return eventfd_roundtrip() || poll(&p, 1, 0) != 0 || !enotty(fx.pipe[0], TCGETS) ||
	       !enotty(fx.pipe[0], TCSETS) || !enotty(fx.pipe[0], KVM_GET_STATS_FD) ||
	       !enotty(fx.pipe[0], KVM_IRQFD) || !enotty(fx.pipe[0], KVM_GET_CLOCK) ||
	       !enotty(fx.pipe[0], KVM_SET_CLOCK) || !enotty(fx.pipe[0], KVM_IRQ_LINE) ||
	       shutdown(fx.listen_fd, SHUT_RDWR) < 0 || usleep(1000) < 0 || close(fx.tfd) < 0 ||
	       sort_big();
}

/* The main thread serving an API: main's work, and a disk's new image
 * opened as blk_backend_open does (an existing file: the memfd again). */
static int controller_work(void)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fx.memfd);
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	int bad = main_work() || fd < 0 || fstat(fd, &st) < 0 || fcntl(fd, F_SETFL, 0) < 0 ||
		  flock(fd, LOCK_EX | LOCK_NB) < 0 || lseek(fd, 0, SEEK_END) != 1 << 16;
	close(fd);
	/* A migration's stream (mig_connect): made and connected; nobody
	 * listens on port 1 of this host, which is no matter here. */
	struct sockaddr_in sa = {
	    .sin_family = AF_INET, .sin_port = htons(1), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bad |=
	    s < 0 || (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != ECONNREFUSED);
	close(s);
	return bad;
}

/* device (vsock's thread, its kind's rules): an accept on a listener, a Unix stream made and
 * connected, bytes both ways, a shutdown, epoll, the streams closed. */
static int vsock_work(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "skiff-sandbox-test-%d", getpid());
	struct epoll_event ev;
	char b[3];
	struct iovec iov = {b, sizeof(b)};
	int a = accept4(fx.listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	int c = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	return a < 0 || c < 0 || connect(c, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	       send(fx.client_fd, "abc", 3, MSG_NOSIGNAL) != 3 || readv(a, &iov, 1) != 3 ||
	       recv(a, b, 1, MSG_PEEK | MSG_DONTWAIT) >= 0 || shutdown(a, SHUT_WR) < 0 ||
	       epoll_wait(fx.epfd, &ev, 1, 0) < 0 || close(a) < 0 || close(c) < 0;
}

static int (*const role_work[SANDBOX_NR_ROLES])(void) = {
    [SANDBOX_VCPU] = vcpu_work,
    [SANDBOX_IO] = io_work,
    [SANDBOX_BLK] = blk_work,
    [SANDBOX_CONSOLE] = console_work,
    [SANDBOX_API] = api_work,
    [SANDBOX_MAIN] = main_work,
    [SANDBOX_CONTROLLER] = controller_work,
    [SANDBOX_DEVICE] = vsock_work,
};

static int child_work(void *arg)
{
	enum sandbox_role role = *(enum sandbox_role *)arg;
	pthread_t t;
	if (setup(&t) < 0)
		return 100;
	sandbox_enable(true);
	/* As a VM with a device of every kind: their calls added. */
	for (size_t k = 0; k < dm_nr_kinds; k++)
		for (int i = 0; dm_kinds[k]->sandbox && i < SANDBOX_NR_ROLES; i++)
			if (dm_kinds[k]->sandbox->role[i].n &&
			    sandbox_add_rules((enum sandbox_role)i, &dm_kinds[k]->sandbox->role[i]))
				return 102;
	if (sandbox_enter(role) != 0)
		return 101;
	int r = common_work(t);
	return r ? r : role_work[role]() ? 50 : 0;
}

static void test_each_role_can_do_its_work(void **state)
{
	(void)state;
	for (int r = 0; r < SANDBOX_NR_ROLES; r++) {
		struct child_result res;
		child_run(child_work, &r, &res);
		if (!child_exited_ok(&res))
			print_error("role %s: status %#x, stderr \"%s\"\n",
				    sandbox_role_name((enum sandbox_role)r), res.status, res.err);
		assert_true(child_exited_ok(&res));
	}
}

/* ...but it never creates a file: O_CREAT is trapped. */
static int controller_creates(void *arg)
{
	(void)arg;
	char path[64];
	snprintf(path, sizeof(path), "/tmp/skiff-sandbox-%d", getpid());
	sandbox_enable(true);
	if (sandbox_enter(SANDBOX_CONTROLLER) != 0)
		return 101;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		unlink(path);
	return 0;
}

static void test_controller_never_creates(void **state)
{
	(void)state;
	struct child_result res;
	child_run(controller_creates, NULL, &res);
	assert_true(WIFSIGNALED(res.status));
	assert_int_equal(WTERMSIG(res.status), SIGSYS);
	assert_non_null(strstr(res.err, "controller thread made forbidden system call openat"));
}

/* A migration's tcp:localhost URL under the controller's filter: the
 * hosts file read (mig_hosts.c) with the calls it has, then the connect
 * (refused: nobody listens on port 1). */
static int controller_resolves(void *arg)
{
	char err[300];
	mig_hosts_path = arg;
	sandbox_enable(true);
	if (sandbox_enter(SANDBOX_CONTROLLER) != 0)
		return 101;
	if (mig_connect("tcp:localhost:1", err, sizeof(err)) >= 0)
		return 2;
	fprintf(stderr, "%s", err);
	return strstr(err, "cannot connect to tcp:localhost:1") ? 0 : 3;
}

static void test_controller_resolves_hosts(void **state)
{
	(void)state;
	char path[64];
	snprintf(path, sizeof(path), "/tmp/skiff-sandbox-hosts-%d", getpid());
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("127.0.0.1 localhost\n", f);
	fclose(f);
	struct child_result res;
	child_run(controller_resolves, path, &res);
	unlink(path);
	if (!child_exited_ok(&res))
		print_error("status %#x, stderr \"%s\"\n", res.status, res.err);
	assert_true(child_exited_ok(&res));
}

/* Declarative checks on the tables themselves, and on the sets the
 * device kinds add (role r's). */
static void check_rule(int r, const struct sandbox_rule *rule)
{
	static const char *const never[] = {
	    "open",	  "openat",	"openat2",    "creat",	    "stat",
	    "lstat",	  "newfstatat", "statx",      "access",	    "faccessat",
	    "faccessat2", "readlink",	"readlinkat", "unlink",	    "unlinkat",
	    "rename",	  "renameat",	"renameat2",  "mkdir",	    "mkdirat",
	    "chdir",	  "chmod",	"chown",      "truncate",   "link",
	    "symlink",	  "execve",	"execveat",   "fork",	    "vfork",
	    "clone",	  "clone3",	"socket",     "connect",    "bind",
	    "ptrace",	  "mount",	"prctl",      "setsockopt", "process_vm_writev",
	    "kill",	  "tkill",
	};
	char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, rule->nr);
	assert_non_null(name);
	/* The controller opens existing files only, and stats open fds
	 * (glibc's fstat). */
	bool opens = r == SANDBOX_CONTROLLER &&
		     ((rule->nr == SCMP_SYS(openat) && rule->ncmp == 1 && rule->cmp[0].arg == 2 &&
		       rule->cmp[0].val == 0 && (rule->cmp[0].mask & O_CREAT) &&
		       (rule->cmp[0].mask & O_TRUNC) && (rule->cmp[0].mask & O_PATH)) ||
		      (rule->nr == SCMP_SYS(newfstatat) && rule->ncmp == 1 &&
		       rule->cmp[0].arg == 3 && rule->cmp[0].val == AT_EMPTY_PATH));
	/* A device's own thread (vsock's) makes Unix streams alone:
	 * socket(AF_UNIX, ...) and connect. */
	bool streams = r == SANDBOX_DEVICE &&
		       ((rule->nr == SCMP_SYS(socket) && rule->ncmp == 1 && rule->cmp[0].arg == 0 &&
			 rule->cmp[0].mask == ~0ull && rule->cmp[0].val == AF_UNIX) ||
			rule->nr == SCMP_SYS(connect));
	/* The controller sends a live migration (vmm/vmm_mig_send.c): a
	 * stream of the Unix or an IP family, exactly (its type too: no
	 * datagram or raw socket), and connect. */
	bool migrates = r == SANDBOX_CONTROLLER &&
			((rule->nr == SCMP_SYS(socket) && rule->ncmp == 2 &&
			  rule->cmp[0].arg == 0 && rule->cmp[0].mask == ~0ull &&
			  (rule->cmp[0].val == AF_UNIX || rule->cmp[0].val == AF_INET ||
			   rule->cmp[0].val == AF_INET6) &&
			  rule->cmp[1].arg == 1 && rule->cmp[1].mask == ~0ull &&
			  rule->cmp[1].val == (SOCK_STREAM | SOCK_CLOEXEC)) ||
			 rule->nr == SCMP_SYS(connect));
	/* ... and takes a tap back after a failed switch (net/tap_sandbox.c):
	 * glibc's if_nametoindex asks through an unbound Unix datagram
	 * socket, exactly that type. */
	bool names_tap = r == SANDBOX_CONTROLLER && rule->nr == SCMP_SYS(socket) &&
			 rule->ncmp == 2 && rule->cmp[0].arg == 0 && rule->cmp[0].mask == ~0ull &&
			 rule->cmp[0].val == AF_UNIX && rule->cmp[1].arg == 1 &&
			 rule->cmp[1].mask == ~0ull &&
			 rule->cmp[1].val == (SOCK_DGRAM | SOCK_CLOEXEC);
	/* ... and hands a vsock's uds path over at the switch
	 * (virtio_vsock_mig.c): lstat (a path, AT_SYMLINK_NOFOLLOW) and unlink of the
	 * socket file its bind made; a failed switch's take-back listens
	 * again: a non-blocking Unix stream, exactly that type, and bind. */
	bool hands_uds =
	    r == SANDBOX_CONTROLLER &&
	    ((rule->nr == SCMP_SYS(newfstatat) && rule->ncmp == 1 && rule->cmp[0].arg == 3 &&
	      rule->cmp[0].mask == ~0ull && rule->cmp[0].val == AT_SYMLINK_NOFOLLOW) ||
	     rule->nr == SCMP_SYS(unlink) || rule->nr == SCMP_SYS(unlinkat) ||
	     rule->nr == SCMP_SYS(bind) ||
	     (rule->nr == SCMP_SYS(socket) && rule->ncmp == 2 && rule->cmp[0].arg == 0 &&
	      rule->cmp[0].mask == ~0ull && rule->cmp[0].val == AF_UNIX && rule->cmp[1].arg == 1 &&
	      rule->cmp[1].mask == ~0ull &&
	      rule->cmp[1].val == (SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC)));
	for (size_t k = 0; !opens && !streams && !migrates && !names_tap && !hands_uds &&
			   k < sizeof(never) / sizeof(never[0]);
	     k++)
		if (!strcmp(name, never[k]))
			fail_msg("role %s lists %s", sandbox_role_name((enum sandbox_role)r), name);
	/* ioctls only by exact request, never TIOCSTI */
	if (rule->nr == SCMP_SYS(ioctl)) {
		assert_int_equal(rule->ncmp, 1);
		assert_int_equal(rule->cmp[0].arg, 1);
		assert_int_equal(rule->cmp[0].mask, 0xffffffffull);
		assert_int_not_equal(rule->cmp[0].val, TIOCSTI);
	}
	/* tgkill only to our own pid */
	if (rule->nr == SCMP_SYS(tgkill)) {
		assert_int_equal(rule->ncmp, 1);
		assert_int_equal(rule->cmp[0].arg, 0);
		assert_true(rule->cmp[0].pid);
	}
	free(name);
}

static void test_tables_never_list(void **state)
{
	(void)state;
	for (int r = 0; r < SANDBOX_NR_ROLES; r++) {
		const struct sandbox_table *t = &sandbox_tables[r];
		assert_true(t->n > 0);
		for (size_t g = 0; g < t->n; g++)
			for (size_t i = 0; i < t->group[g].n; i++)
				check_rule(r, &t->group[g].rule[i]);
		for (size_t k = 0; k < dm_nr_kinds; k++)
			for (size_t i = 0;
			     dm_kinds[k]->sandbox && i < dm_kinds[k]->sandbox->role[r].n; i++)
				check_rule(r, &dm_kinds[k]->sandbox->role[r].rule[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_each_role_can_do_its_work),
	    cmocka_unit_test(test_controller_resolves_hosts),
	    cmocka_unit_test(test_controller_never_creates),
	    cmocka_unit_test(test_tables_never_list),
	};
	return cmocka_run_group_tests_name("sandbox_roles", tests, NULL, NULL);
}
