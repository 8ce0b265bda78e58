// SPDX-License-Identifier: Apache-2.0
/* The logger (core/log.c): the level filters, level names (ours and
 * Firecracker's), log_once, the rate limit on an injected clock and its
 * "suppressed" summary, long lines, and whole lines from concurrent
 * threads, each line one write(2) (write is wrapped: Makefile). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"

static _Atomic unsigned int writes;

ssize_t __real_write(int fd, const void *buf, size_t n);
ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
	atomic_fetch_add(&writes, 1);
	return __real_write(fd, buf, n);
}

static int fd = -1;

/* Each test logs to a fresh file (O_APPEND: threads' writes land whole). */
static int setup(void **state)
{
	(void)state;
	char path[] = "/tmp/skiff-test-log-XXXXXX";
	int t = mkstemp(path);
	assert_true(t >= 0);
	unlink(path);
	fd = t;
	assert_int_equal(fcntl(fd, F_SETFL, O_APPEND), 0);
	log_set_fd(fd);
	log_set_level(LOG_DEFAULT_LEVEL);
	atomic_store(&writes, 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	log_set_fd(STDERR_FILENO);
	log_set_level(LOG_DEFAULT_LEVEL);
	close(fd);
	return 0;
}

/* What was logged so far (static buffer, NUL-terminated). */
static const char *logged(void)
{
	static char buf[1 << 20];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	assert_true(n >= 0);
	buf[n] = '\0';
	return buf;
}

static unsigned int lines(void)
{
	unsigned int n = 0;
	for (const char *c = logged(); *c; c++)
		n += *c == '\n';
	return n;
}

static void test_levels_filter(void **state)
{
	(void)state;
	assert_int_equal(log_get_level(), LOG_INFO);
	log_debug("hidden at info");
	log_info("info line");
	log_set_level(LOG_WARN);
	log_info("hidden at warn");
	log_warn("e1000: warn line %d", 2);
	log_set_level(LOG_ERROR);
	log_warn("hidden at error");
	log_err("error line");
	log_set_level(LOG_OFF);
	log_err("hidden when off");
	log_set_level(LOG_DEBUG);
	log_debug("debug line");
	assert_string_equal(logged(), "skiff: info line\n"
				      "skiff: e1000: warn line 2\n"
				      "skiff: error line\n"
				      "skiff: debug line\n");
	assert_int_equal(atomic_load(&writes), 4); /* one write(2) per line */
}

static void test_level_names(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		int level;
	} ok[] = {{"error", LOG_ERROR}, {"warn", LOG_WARN},   {"info", LOG_INFO},
		  {"debug", LOG_DEBUG}, {"Error", LOG_ERROR}, {"Warning", LOG_WARN},
		  {"Info", LOG_INFO},	{"Debug", LOG_DEBUG}, {"Trace", LOG_DEBUG},
		  {"Off", LOG_OFF},	{"WARNING", LOG_WARN}};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		enum log_level l = LOG_NR_LEVELS;
		assert_int_equal(log_level_parse(ok[i].name, &l), 0);
		assert_int_equal(l, ok[i].level);
	}
	enum log_level l = LOG_INFO;
	assert_int_equal(log_level_parse("loud", &l), -1);
	assert_int_equal(log_level_parse("", &l), -1);
	assert_int_equal(log_level_parse(NULL, &l), -1);
	assert_int_equal(l, LOG_INFO);
}

static void say_once(int i)
{
	log_once(LOG_WARN, "once per site (%d)", i);
}

static void test_once(void **state)
{
	(void)state;
	for (int i = 0; i < 5; i++)
		say_once(i);
	assert_string_equal(logged(), "skiff: once per site (0)\n");
	/* A per-object flag; a filtered call does not use it up. */
	atomic_bool flag = false;
	log_set_level(LOG_ERROR);
	log_once_at(&flag, LOG_WARN, "filtered");
	log_set_level(LOG_INFO);
	log_once_at(&flag, LOG_WARN, "flag %s", "a");
	log_once_at(&flag, LOG_WARN, "flag %s", "b");
	assert_string_equal(logged(), "skiff: once per site (0)\nskiff: flag a\n");
}

#define S 1000000000ull

static void test_ratelimit_bucket(void **state)
{
	(void)state;
	struct log_rl rl = {0};
	uint64_t dropped = 99, allowed = 0;
	/* A burst of 1000 at once: the bucket's 10. */
	for (int i = 0; i < 1000; i++)
		allowed += log_rl_allow(&rl, 100 * S, &dropped);
	assert_int_equal(allowed, LOG_RL_BURST);
	assert_int_equal(dropped, 0);
	/* Half a second later, one token: it says what was refused. */
	assert_true(log_rl_allow(&rl, 100 * S + LOG_RL_INTERVAL_NS, &dropped));
	assert_int_equal(dropped, 990);
	assert_false(log_rl_allow(&rl, 100 * S + LOG_RL_INTERVAL_NS, &dropped));
	/* A steady flood over a minute: burst + one per interval, no more. */
	allowed = 0;
	for (uint64_t t = 200 * S; t < 260 * S; t += 1000000)
		allowed += log_rl_allow(&rl, t, &dropped);
	assert_int_equal(allowed, LOG_RL_BURST + 60 * S / LOG_RL_INTERVAL_NS - 1);
}

static void test_ratelimited_summary(void **state)
{
	(void)state;
	for (int i = 0; i < 100; i++)
		log_ratelimited(LOG_WARN, "virtio-net0 q1: flood %d", i);
	assert_int_equal(lines(), LOG_RL_BURST);
	/* Refused lines are counted and the next one let through says so
	 * (the bucket is emptied and refilled by hand: no sleeping). */
	struct log_rl rl = {0};
	atomic_store(&rl.tat, UINT64_MAX / 2);
	for (int i = 0; i < 7; i++)
		log_rl_at(&rl, LOG_WARN, "refused");
	atomic_store(&rl.tat, 0);
	log_rl_at(&rl, LOG_WARN, "vq: let through");
	const char *all = logged();
	const char *last = strstr(all, "skiff: vq:");
	assert_non_null(last);
	assert_string_equal(last, "skiff: vq: let through (7 messages suppressed)\n");
	/* Filtered by level: no token taken, nothing counted. */
	log_set_level(LOG_ERROR);
	log_rl_at(&rl, LOG_WARN, "filtered");
	assert_int_equal(atomic_load(&rl.suppressed), 0);
}

static void test_long_line_cut(void **state)
{
	(void)state;
	static char big[4 * LOG_LINE_MAX];
	memset(big, 'x', sizeof(big) - 1);
	log_warn("%s", big);
	const char *out = logged();
	assert_int_equal(strlen(out), LOG_LINE_MAX - 1);
	assert_int_equal(out[LOG_LINE_MAX - 2], '\n');
	assert_int_equal(lines(), 1);
}

#define THREADS 4
#define PER	300

static void *flood(void *arg)
{
	int id = (int)(intptr_t)arg;
	char pad[400];
	memset(pad, 'a' + id, sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	for (int i = 0; i < PER; i++)
		log_warn("t%d %04d %s end", id, i, pad);
	return NULL;
}

static void test_threads_whole_lines(void **state)
{
	(void)state;
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, flood, (void *)(intptr_t)i), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(atomic_load(&writes), THREADS * PER);
	/* Every line is one thread's, whole: its prefix, its own letter
	 * throughout and its end. */
	const char *c = logged();
	unsigned int n = 0;
	while (*c) {
		const char *nl = strchr(c, '\n');
		assert_non_null(nl);
		int id = -1, i = -1;
		assert_int_equal(sscanf(c, "skiff: t%d %d ", &id, &i), 2);
		assert_true(id >= 0 && id < THREADS);
		const char *pad = strchr(c + 9, ' ') + 1;
		pad = strchr(pad, ' ') + 1;
		for (int k = 0; k < 399; k++)
			assert_int_equal(pad[k], 'a' + id);
		assert_memory_equal(pad + 399, " end\n", 5);
		assert_ptr_equal(pad + 399 + 4, nl);
		c = nl + 1;
		n++;
	}
	assert_int_equal(n, THREADS * PER);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_levels_filter, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_level_names, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_once, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ratelimit_bucket, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ratelimited_summary, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_long_line_cut, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_threads_whole_lines, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
