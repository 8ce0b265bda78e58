// SPDX-License-Identifier: Apache-2.0
/* iothread_hold/iothread_release (a snapshot's quiet devices): once hold
 * returns, no handler of the thread runs, whatever becomes ready; release
 * lets what became ready meanwhile run; stop still stops a released
 * thread. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "iothread/iothread.h"

static atomic_int runs;

static void on_ready(void *opaque, uint32_t events)
{
	(void)events;
	uint64_t n;
	if (read(*(int *)opaque, &n, sizeof(n)) == sizeof(n))
		atomic_fetch_add(&runs, 1);
}

/* Waits (bounded) until the handler has run want times. */
static void wait_runs(int want)
{
	for (int i = 0; i < 10000 && atomic_load(&runs) < want; i++) {
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	assert_int_equal(atomic_load(&runs), want);
}

static void test_hold_parks_and_release_resumes(void **state)
{
	(void)state;
	struct iothread io;
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	uint64_t one = 1;
	assert_true(efd >= 0);
	assert_int_equal(iothread_init(&io, "io-hold"), 0);
	assert_int_equal(iothread_add_fd(&io, efd, EPOLLIN, on_ready, &efd), 0);
	iothread_hold(&io); /* not started: nothing to wait for */
	iothread_release(&io);
	assert_int_equal(iothread_start(&io), 0);
	assert_int_equal(write(efd, &one, sizeof(one)), sizeof(one));
	wait_runs(1);
	for (int round = 0; round < 3; round++) {
		iothread_hold(&io);
		pthread_mutex_lock(&io.hold_lock);
		assert_true(io.held);
		pthread_mutex_unlock(&io.hold_lock);
		assert_int_equal(write(efd, &one, sizeof(one)), sizeof(one));
		/* Parked: however long we look, the handler has not run. */
		for (int i = 0; i < 20; i++) {
			struct timespec ts = {0, 1000000};
			nanosleep(&ts, NULL);
			assert_int_equal(atomic_load(&runs), 1 + round);
		}
		iothread_release(&io);
		wait_runs(2 + round);
	}
	iothread_destroy(&io);
	close(efd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hold_parks_and_release_resumes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
