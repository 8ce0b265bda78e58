// SPDX-License-Identifier: Apache-2.0
/* Host names in tcp: migration URLs (vmm/mig_hosts.c, vmm/mig_sock.c):
 * looked up in a hosts file by skiff's own parser (no DNS under seccomp);
 * the file's forms (comments, aliases, case, blanks, IPv6, a bad line)
 * read as hosts(5) says; a name that is not one, or not there, or a file
 * that cannot be read, is one line at once; "localhost" connects and
 * listens on the file's first address. Its filter's part is
 * test_sandbox_roles.c's (the controller resolves under its filter). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vmm/mig_hosts.h"
#include "vmm/mig_proto.h"

static const char hosts[] = "# a comment line\n"
			    "127.0.0.1\tlocalhost loopback # comment: other-name\n"
			    "::1 localhost ip6-localhost\r\n"
			    "10.0.0.7   Target-7.example target-7\n"
			    "not-an-address broken-line\n"
			    "fe80::1%eth0 scoped\n"
			    "10.0.0.8\n"
			    "   \n"
			    "10.0.0.9 other-name";

static char path[64];

static int setup(void **state)
{
	(void)state;
	snprintf(path, sizeof(path), "/tmp/skiff-hosts-%d", getpid());
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(hosts, f);
	fclose(f);
	mig_hosts_path = path;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	mig_hosts_path = "/etc/hosts";
	return 0;
}

static void test_name_ok(void **state)
{
	(void)state;
	static const char *const good[] = {"localhost", "a",  "target-7.example",
					   "x1.y2",	"1a", "A-B.c0m"};
	static const char *const bad[] = {
	    "",	     "-a",	  "a-",	   "a..b", ".a",  "a.",	   "a_b",
	    "1.2.3", "127.0.0.1", "a.123", "a b",  "a:b", "[::1]", "\xc3\xa9t\xc3\xa9"};
	char label[80], longname[300];
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (!mig_host_name_ok(good[i]))
			fail_msg("'%s' refused", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (mig_host_name_ok(bad[i]))
			fail_msg("'%s' taken", bad[i]);
	memset(label, 'a', 63);
	label[63] = '\0';
	assert_true(mig_host_name_ok(label));
	label[63] = 'a', label[64] = '\0'; /* a label of 64 */
	assert_false(mig_host_name_ok(label));
	memset(longname, 'a', sizeof(longname));
	for (size_t i = 60; i < sizeof(longname); i += 61)
		longname[i] = '.';
	longname[253] = '\0';
	assert_true(mig_host_name_ok(longname));
	longname[253] = 'a', longname[254] = '\0'; /* 254 bytes */
	assert_false(mig_host_name_ok(longname));
}

static void test_find(void **state)
{
	(void)state;
	struct mig_host_addr a[MIG_HOSTS_ADDRS_MAX];
	char s[INET6_ADDRSTRLEN];
	/* Both of localhost's, in the file's order. */
	assert_int_equal(mig_hosts_find(hosts, strlen(hosts), "localhost", a, 8), 2);
	assert_int_equal(a[0].family, AF_INET);
	assert_string_equal(inet_ntop(AF_INET, &a[0].a.v4, s, sizeof(s)), "127.0.0.1");
	assert_int_equal(a[1].family, AF_INET6);
	assert_string_equal(inet_ntop(AF_INET6, &a[1].a.v6, s, sizeof(s)), "::1");
	/* At most max. */
	assert_int_equal(mig_hosts_find(hosts, strlen(hosts), "localhost", a, 1), 1);
	/* An alias, any case; the last line without its newline. */
	assert_int_equal(mig_hosts_find(hosts, strlen(hosts), "TARGET-7", a, 8), 1);
	assert_string_equal(inet_ntop(AF_INET, &a[0].a.v4, s, sizeof(s)), "10.0.0.7");
	assert_int_equal(mig_hosts_find(hosts, strlen(hosts), "other-name", a, 8), 1);
	assert_string_equal(inet_ntop(AF_INET, &a[0].a.v4, s, sizeof(s)), "10.0.0.9");
	/* A comment's word, a bad line's name, a scoped address's: none;
	 * nor a prefix of a name. */
	static const char commented[] = "10.0.0.1 a # other-name\n#10.0.0.2 other-name\n";
	assert_int_equal(mig_hosts_find(commented, strlen(commented), "other-name", a, 8), 0);
	assert_int_equal(mig_hosts_find(hosts, strlen(hosts), "broken-line", a, 8), 0);
	assert_int_equal(mig_hosts_find(hosts, strlen(hosts), "scoped", a, 8), 0);
	assert_int_equal(mig_hosts_find(hosts, strlen(hosts), "local", a, 8), 0);
	assert_int_equal(mig_hosts_find(hosts, 0, "localhost", a, 8), 0);
}

/* Each refusal is one line, at once. */
static void test_refusals(void **state)
{
	(void)state;
	char err[400], url[80];
	assert_int_equal(mig_connect("tcp:no-such-host:80", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot resolve `no-such-host`: "));
	assert_non_null(strstr(err, "has no such name"));
	assert_null(strchr(err, '\n'));
	assert_int_equal(mig_listen_accept("tcp:no-such-host:80", 10, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot resolve `no-such-host`"));
	/* The file unreadable, a directory, endless. */
	mig_hosts_path = "/nonexistent/hosts";
	assert_int_equal(mig_connect("tcp:localhost:80", err, sizeof(err)), -1);
	assert_string_equal(err, "cannot resolve `localhost`: cannot read /nonexistent/hosts: No "
				 "such file or directory");
	mig_hosts_path = "/tmp";
	assert_int_equal(mig_connect("tcp:localhost:80", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot read /tmp: Is a directory"));
	mig_hosts_path = "/dev/zero";
	assert_int_equal(mig_connect("tcp:localhost:80", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/dev/zero is over 1048576 bytes"));
	mig_hosts_path = path;
	/* Not a name: the URL's form. */
	snprintf(url, sizeof(url), "tcp:%s:80", "a..b");
	assert_int_equal(mig_connect(url, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "invalid migration URL"));
}

/* A free port of 127.0.0.1 (bound, then let go). */
static int free_port(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&sa, &len), 0);
	close(s);
	return ntohs(sa.sin_port);
}

static void *connect_later(void *arg)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)(intptr_t)arg),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	for (int i = 0; i < 500; i++) {
		int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return (void *)(intptr_t)s;
		close(s);
		usleep(10000);
	}
	return (void *)(intptr_t)-1;
}

/* "localhost" connects to its first address (127.0.0.1, where the test
 * listens), and a target listens there. */
static void test_localhost(void **state)
{
	(void)state;
	char err[300], url[80];
	int port = free_port();
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int one = 1, l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* Both ends reuse the address: the port is bound again below. */
	assert_int_equal(setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
	assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(l, 1), 0);
	snprintf(url, sizeof(url), "tcp:localhost:%d", port);
	int c = mig_connect(url, err, sizeof(err));
	if (c < 0)
		fail_msg("%s: %s", url, err);
	int a = accept(l, NULL, NULL);
	assert_true(a >= 0);
	close(c); /* the client's end first: its port waits, not this one */
	close(a);
	close(l);
	/* The target's side: it listens on 127.0.0.1. */
	pthread_t t;
	void *peer;
	assert_int_equal(pthread_create(&t, NULL, connect_later, (void *)(intptr_t)port), 0);
	int s = mig_listen_accept(url, 10000, err, sizeof(err));
	pthread_join(t, &peer);
	if (s < 0)
		fail_msg("%s: %s", url, err);
	assert_true((intptr_t)peer >= 0);
	close(s);
	close((int)(intptr_t)peer);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_name_ok),
	    cmocka_unit_test(test_find),
	    cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_localhost, setup, teardown),
	};
	return cmocka_run_group_tests_name("mig_hosts", tests, NULL, NULL);
}
