// SPDX-License-Identifier: Apache-2.0
/* A hostile review of the API's newer parts (review 3): JSON that json-c
 * lets through but Firecracker's serde refuses, and the --api-sock probe
 * of a socket that is still there. Each test failed on the code before
 * its fix ("review: ..." commits). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "api/api_json.h"
#include "stats/api_sock.h"

static int parse(const char *text, char *err, size_t errlen)
{
	struct json_object *o = NULL;
	int r = api_json_parse(text, strlen(text), &o, err, errlen);
	if (o)
		json_object_put(o);
	return r;
}

/* NaN, Infinity and "1." are not JSON (RFC 8259, section 6): serde_json
 * refuses them where json-c, even strict, takes them. */
static void test_json_numbers(void **state)
{
	(void)state;
	static const char *const bad[] = {
	    "{\"a\":NaN}",     "{\"a\":Infinity}",   "{\"a\":-Infinity}",
	    "{\"a\":[1,NaN]}", "{\"a\":1.}",	     "{\"a\":-1.}",
	    "{\"a\":1.e5}",    "{\"a\":{\"b\":2.}}", "{\"a\":\n  NaN}",
	};
	static const char *const good[] = {
	    "{\"a\":1.5e3}",  "{\"a\":-0.5}", "{\"a\":1E+2}",	    "{\"a\":[true,false,null]}",
	    "{\"a\":0}",      "{\"a\":-1}",   "{\"a\":\"NaN 1.\"}", "{\"NaN\":\"Infinity\"}",
	    "{\"a\":0.0e-0}",
	};
	char err[256];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		if (parse(bad[i], err, sizeof(err)) == 0)
			fail_msg("accepted %s", bad[i]);
		assert_non_null(strstr(err, " at line "));
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (parse(good[i], err, sizeof(err)) < 0)
			fail_msg("refused %s: %s", good[i], err);
	assert_int_equal(parse("{\"a\":\n  NaN}", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "line 2 column 3"));
}

/* A live socket whose listener does not accept (a stopped skiff, its
 * backlog full): --api-sock is refused as in use, at once. The probe's
 * blocking connect waited for room in the backlog for ever. */
static void test_sock_probe_full_backlog(void **state)
{
	(void)state;
	char dir[] = "/tmp/skiff-rev3-XXXXXX", path[64], err[256] = "";
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/api.sock", dir);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	int l = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(l, 0), 0);
	int c[8], nc = 0;
	for (; nc < 8; nc++) { /* fill the backlog: the next connect would wait */
		c[nc] = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (connect(c[nc], (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			assert_int_equal(errno, EAGAIN);
			break;
		}
	}
	assert_true(nc < 8);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct api_sock a = {.fd = -1};
		alarm(20); /* a guard against the hang, not a measure */
		int r = api_sock_open(&a, path, err, sizeof(err));
		_exit(r == -1 && strstr(err, "in use") ? 0 : 1);
	}
	int st = 0;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	for (int i = 0; i <= nc && i < 8; i++)
		close(c[i]);
	close(l);
	unlink(path);
	rmdir(dir);
	if (WIFSIGNALED(st))
		fail_msg("api_sock_open hung on a live socket (signal %d)", WTERMSIG(st));
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_json_numbers),
	    cmocka_unit_test(test_sock_probe_full_backlog),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
