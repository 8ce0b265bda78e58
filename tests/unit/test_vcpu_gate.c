// SPDX-License-Identifier: Apache-2.0
/* The vCPU pause gate (core/vcpu_gate.c) with plain threads standing in
 * for vCPUs: a fake "KVM_RUN" waits until kicked, as the real one runs
 * until a signal or immediate_exit makes it return. Every wait on the
 * gate runs in a helper thread with a bound, so a broken gate fails the
 * test instead of hanging it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "core/vcpu_gate.h"

#define NR    4
#define BOUND 10 /* seconds: only reached when the gate is broken */

struct fake_vcpu {
	struct vcpu_gate *g;
	pthread_t t;
	bool kicked, quit; /* under fake_lock */
	atomic_int in_run, runs;
	bool deaf; /* ignores kicks and the gate: a thread that never parks */
};

/* The fake KVM_RUN sleeps on this, not spinning: the test must not
 * depend on how the machine schedules. */
static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fake_cond = PTHREAD_COND_INITIALIZER;

static void *fake_vcpu_thread(void *arg)
{
	struct fake_vcpu *f = arg;
	for (;;) {
		if (!f->deaf && vcpu_gate_closed(f->g)) {
			vcpu_gate_park(f->g);
			continue;
		}
		atomic_store(&f->in_run, 1);
		pthread_mutex_lock(&fake_lock);
		while (!f->quit && (!f->kicked || f->deaf))
			pthread_cond_wait(&fake_cond, &fake_lock);
		f->kicked = false; /* like immediate_exit, a kick is kept until seen */
		bool quit = f->quit;
		pthread_mutex_unlock(&fake_lock);
		atomic_store(&f->in_run, 0);
		atomic_fetch_add(&f->runs, 1);
		if (quit)
			break;
	}
	vcpu_gate_leave(f->g);
	return NULL;
}

static struct fake_vcpu vcpus[NR];

static void kick_all(void *opaque)
{
	(void)opaque;
	pthread_mutex_lock(&fake_lock);
	for (int i = 0; i < NR; i++)
		vcpus[i].kicked = true;
	pthread_cond_broadcast(&fake_cond);
	pthread_mutex_unlock(&fake_lock);
}

static void quit_one(int i)
{
	pthread_mutex_lock(&fake_lock);
	vcpus[i].quit = true;
	pthread_cond_broadcast(&fake_cond);
	pthread_mutex_unlock(&fake_lock);
}

static void start_all(struct vcpu_gate *g, int deaf)
{
	for (int i = 0; i < NR; i++) {
		struct fake_vcpu *f = &vcpus[i];
		f->kicked = f->quit = false;
		atomic_store(&f->in_run, 0);
		atomic_store(&f->runs, 0);
		f->g = g;
		f->deaf = i == deaf;
		vcpu_gate_enter(g);
		assert_int_equal(pthread_create(&f->t, NULL, fake_vcpu_thread, f), 0);
	}
}

static struct timespec deadline(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += BOUND;
	return ts;
}

static void join_bounded(pthread_t t)
{
	struct timespec ts = deadline();
	assert_int_equal(pthread_timedjoin_np(t, NULL, &ts), 0);
}

static void quit_all(struct vcpu_gate *g)
{
	for (int i = 0; i < NR; i++)
		quit_one(i);
	vcpu_gate_stop(g); /* parked ones return and see quit */
	for (int i = 0; i < NR; i++)
		join_bounded(vcpus[i].t);
}

struct closer {
	struct vcpu_gate *g;
	pthread_t t;
	int ret;
};

static void *closer_thread(void *arg)
{
	struct closer *c = arg;
	c->ret = vcpu_gate_close(c->g, kick_all, NULL);
	return NULL;
}

static int close_bounded(struct vcpu_gate *g)
{
	struct closer c = {.g = g, .ret = 99};
	assert_int_equal(pthread_create(&c.t, NULL, closer_thread, &c), 0);
	join_bounded(c.t);
	return c.ret;
}

/* Waits (bounded) until every fake vCPU ran again after a resume. */
static void wait_all_ran(const int *before)
{
	struct timespec end = deadline(), now;
	for (int i = 0; i < NR; i++) {
		while (atomic_load(&vcpus[i].runs) == before[i]) {
			kick_all(NULL);
			clock_gettime(CLOCK_REALTIME, &now);
			assert_true(now.tv_sec < end.tv_sec);
			usleep(1000);
		}
	}
}

static void test_close_parks_every_thread(void **state)
{
	(void)state;
	struct vcpu_gate g;
	vcpu_gate_init(&g);
	start_all(&g, -1);
	assert_int_equal(close_bounded(&g), 0);
	assert_int_equal(g.parked, NR);
	assert_int_equal(g.running, NR);
	int runs[NR];
	for (int i = 0; i < NR; i++) {
		assert_int_equal(atomic_load(&vcpus[i].in_run), 0);
		runs[i] = atomic_load(&vcpus[i].runs);
	}
	/* Parked means parked: kicks do not make them run. */
	kick_all(NULL);
	usleep(20000); /* a broken gate would let them run meanwhile */
	for (int i = 0; i < NR; i++)
		assert_int_equal(atomic_load(&vcpus[i].runs), runs[i]);
	assert_int_equal(close_bounded(&g), 0); /* again: still parked */
	vcpu_gate_open(&g);
	wait_all_ran(runs);
	quit_all(&g);
	assert_int_equal(g.running, 0);
	vcpu_gate_destroy(&g);
}

static void test_stop_wakes_parked_threads(void **state)
{
	(void)state;
	struct vcpu_gate g;
	vcpu_gate_init(&g);
	start_all(&g, -1);
	assert_int_equal(close_bounded(&g), 0);
	quit_all(&g); /* joins fail the test if a thread stays parked */
	assert_int_equal(g.parked, 0);
	assert_int_equal(close_bounded(&g), -1); /* stopped for good */
	assert_false(vcpu_gate_closed(&g));
	vcpu_gate_destroy(&g);
}

/* Waits (bounded) until all but the deaf thread 0 parked. */
static void wait_others_parked(struct vcpu_gate *g)
{
	struct timespec end = deadline(), now;
	for (;;) {
		pthread_mutex_lock(&g->lock);
		int parked = g->parked;
		pthread_mutex_unlock(&g->lock);
		if (parked == NR - 1)
			return;
		clock_gettime(CLOCK_REALTIME, &now);
		assert_true(now.tv_sec < end.tv_sec);
		usleep(1000);
	}
}

/* A thread that ends instead of parking (its vCPU hit an error), after
 * the others parked, does not keep the pause waiting. */
static void test_thread_leaving_during_close(void **state)
{
	(void)state;
	struct vcpu_gate g;
	vcpu_gate_init(&g);
	start_all(&g, 0);
	struct closer c = {.g = &g, .ret = 99};
	assert_int_equal(pthread_create(&c.t, NULL, closer_thread, &c), 0);
	wait_others_parked(&g);
	quit_one(0);
	join_bounded(vcpus[0].t);
	join_bounded(c.t);
	assert_int_equal(c.ret, 0);
	assert_int_equal(g.parked, NR - 1);
	assert_int_equal(g.running, NR - 1);
	vcpu_gate_stop(&g);
	for (int i = 1; i < NR; i++) {
		quit_one(i);
		join_bounded(vcpus[i].t);
	}
	vcpu_gate_destroy(&g);
}

/* A stop while a pause waits for a thread that does not park ends the
 * pause with -1 instead of hanging it. */
static void test_stop_during_close(void **state)
{
	(void)state;
	struct vcpu_gate g;
	vcpu_gate_init(&g);
	start_all(&g, 0);
	struct closer c = {.g = &g, .ret = 99};
	assert_int_equal(pthread_create(&c.t, NULL, closer_thread, &c), 0);
	wait_others_parked(&g);
	vcpu_gate_stop(&g); /* the deaf thread is still running */
	join_bounded(c.t);
	assert_int_equal(c.ret, -1);
	assert_int_equal(close_bounded(&g), -1); /* and any later pause */
	quit_all(&g);
	vcpu_gate_destroy(&g);
}

static void test_close_without_threads(void **state)
{
	(void)state;
	struct vcpu_gate g;
	vcpu_gate_init(&g);
	assert_int_equal(close_bounded(&g), 0);
	assert_true(vcpu_gate_closed(&g));
	vcpu_gate_open(&g);
	assert_false(vcpu_gate_closed(&g));
	vcpu_gate_destroy(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_close_parks_every_thread),
	    cmocka_unit_test(test_stop_wakes_parked_threads),
	    cmocka_unit_test(test_thread_leaving_during_close),
	    cmocka_unit_test(test_stop_during_close),
	    cmocka_unit_test(test_close_without_threads),
	};
	return cmocka_run_group_tests_name("vcpu_gate", tests, NULL, NULL);
}
