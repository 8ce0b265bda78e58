// SPDX-License-Identifier: Apache-2.0
/* The control socket (src/stats/api_sock.c): a file only its owner can
 * open whatever the umask, accepts only its owner's uid and root, never
 * replaces a file that is not a socket, and is removed at close. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stats/api_sock.h"

struct fx {
	char dir[64], path[128];
	struct api_sock a;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	const char *tmp = getenv("TMPDIR");
	snprintf(f->dir, sizeof(f->dir), "%s/skiff-api-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/api.sock", f->dir);
	f->a.fd = -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	api_sock_close(&f->a);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static void sock_open(struct fx *f)
{
	char err[256] = "";
	if (api_sock_open(&f->a, f->path, err, sizeof(err)) < 0)
		fail_msg("api_sock_open: %s", err);
}

/* A client: connects and waits for the server to close; -1 if it could
 * not connect. */
static ssize_t client_wait(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (c >= 0)
			close(c);
		return -1;
	}
	char buf[4096];
	ssize_t total = 0, n;
	while ((n = read(c, buf, sizeof(buf))) > 0)
		total += n;
	close(c);
	return total;
}

/* 0600 even under umask 0, and gone after close. */
static void test_mode_and_unlink(void **state)
{
	struct fx *f = *state;
	mode_t old = umask(0);
	sock_open(f);
	umask(old);
	struct stat st;
	assert_int_equal(lstat(f->path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	api_sock_close(&f->a);
	assert_int_equal(lstat(f->path, &st), -1);
}

/* A stale socket is replaced; a regular file is left alone and refused. */
static void test_stale_socket_and_other_file(void **state)
{
	struct fx *f = *state;
	sock_open(f);
	close(f->a.fd); /* an earlier run that died: its file stays */
	f->a.fd = -1;
	sock_open(f);
	api_sock_close(&f->a);

	FILE *keep = fopen(f->path, "w");
	assert_non_null(keep);
	fputs("precious\n", keep);
	fclose(keep);
	char err[256] = "";
	assert_int_equal(api_sock_open(&f->a, f->path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "exists and is not a socket"));
	struct stat st;
	assert_int_equal(lstat(f->path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, 9);
}

/* Issue 32.3: a live socket (another skiff listens) is refused and its
 * file left alone, so the first skiff keeps its API. */
static void test_live_socket_kept(void **state)
{
	struct fx *f = *state;
	sock_open(f);
	struct api_sock second;
	char err[256] = "";
	assert_int_equal(api_sock_open(&second, f->path, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "is in use by a running process"));
	assert_null(strchr(err, '\n'));
	api_sock_close(&second); /* what the failed start does: no unlink */
	struct stat st;
	assert_int_equal(lstat(f->path, &st), 0);
	int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	assert_true(strlen(f->path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, f->path, strlen(f->path));
	assert_int_equal(connect(c, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(c);
	api_sock_close(&f->a);
}

static void test_peer_rule(void **state)
{
	(void)state;
	assert_true(api_sock_peer_ok(1000, 1000));
	assert_true(api_sock_peer_ok(0, 1000)); /* root */
	assert_false(api_sock_peer_ok(1001, 1000));
	assert_false(api_sock_peer_ok(1000, 0));
	assert_false(api_sock_peer_ok(65534, 0));
}

/* The owner's connection is accepted; a client of another uid's is
 * closed, even with the file's mode loosened. As root the other client
 * drops to nobody; otherwise the socket claims another owner. */
static void test_peer_checked(void **state)
{
	struct fx *f = *state;
	sock_open(f);
	assert_int_equal(chmod(f->dir, 0711), 0);
	assert_int_equal(chmod(f->path, 0666), 0);

	/* The owner: connect (queued by the backlog), then serve. */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(client_wait(f->path) < 0 ? 1 : 0);
	int fd;
	while ((fd = api_sock_accept(&f->a)) == -2) {
	}
	assert_true(fd >= 0);
	close(fd);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	bool root = geteuid() == 0;
	if (!root)
		f->a.owner = geteuid() + 1;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (root &&
		    (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0))
			_exit(3);
		_exit(client_wait(f->path) < 0 ? 2 : 0);
	}
	struct pollfd p = {.fd = f->a.fd, .events = POLLIN};
	assert_int_equal(poll(&p, 1, -1), 1);
	assert_int_equal(api_sock_accept(&f->a), -2); /* refused */
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0); /* connected, then closed */
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_mode_and_unlink),  T(test_stale_socket_and_other_file),
	    T(test_live_socket_kept), cmocka_unit_test(test_peer_rule),
	    T(test_peer_checked),
	};
	return cmocka_run_group_tests_name("api_sock", tests, NULL, NULL);
}
