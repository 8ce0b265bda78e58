// SPDX-License-Identifier: Apache-2.0
/* The I/O thread's loop, and adaptive polling: when to start and stop,
 * and the stop/kick race. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "iothread/iothread.h"
#include "iothread/poll_opts.h"
#include "iothread/poll_policy.h"

static struct poll_policy adaptive(void)
{
	struct poll_policy p;
	poll_policy_default(&p);
	p.mode = POLL_ADAPTIVE;
	p.start_kicks = 4;
	p.window_ns = 1000000;
	p.idle_ns = 50000;
	p.max_ns = 20000000;
	return p;
}

static void test_start_needs_fast_kicks(void **state)
{
	(void)state;
	struct poll_policy p = adaptive();
	struct poll_state st = {0};
	uint64_t t = 10000000;
	/* four kicks 2 ms apart: slower than the threshold, never polls */
	for (int i = 0; i < 4; i++, t += 2000000)
		assert_false(poll_on_kick(&st, &p, t));
	/* four kicks within 1 ms: the fourth starts polling */
	assert_false(poll_on_kick(&st, &p, t));
	assert_false(poll_on_kick(&st, &p, t + 100));
	assert_false(poll_on_kick(&st, &p, t + 200));
	assert_true(poll_on_kick(&st, &p, t + 300));
	assert_int_equal(st.kicks, 8);
}

static void test_modes_off_and_always(void **state)
{
	(void)state;
	struct poll_policy p = adaptive();
	struct poll_state st = {0};
	p.mode = POLL_OFF;
	for (int i = 0; i < 100; i++)
		assert_false(poll_on_kick(&st, &p, (uint64_t)i));
	p.mode = POLL_ALWAYS;
	assert_true(poll_on_kick(&st, &p, 1000));
	poll_start(&st, 1000);
	/* always never stops, however long idle */
	assert_false(poll_after_iteration(&st, &p, 1000 + 10000000000ULL, false));
	enum poll_mode m;
	assert_int_equal(poll_mode_parse("adaptive", &m), 0);
	assert_int_equal(m, POLL_ADAPTIVE);
	assert_int_equal(poll_mode_parse("sometimes", &m), -1);
}

static void test_stop_after_idle_and_cap(void **state)
{
	(void)state;
	struct poll_policy p = adaptive();
	struct poll_state st = {0};
	poll_start(&st, 0);
	assert_false(poll_after_iteration(&st, &p, 10000, true));
	assert_false(poll_after_iteration(&st, &p, 40000, false)); /* 30 us idle */
	assert_true(poll_after_iteration(&st, &p, 60000, false));  /* 50 us idle */
	assert_int_equal(st.stops_idle, 1);
	assert_false(st.polling);
	/* busy all the time: the cap ends the period */
	poll_start(&st, 0);
	uint64_t t = 0;
	bool stopped = false;
	for (; t <= p.max_ns && !stopped; t += 10000)
		stopped = poll_after_iteration(&st, &p, t, true);
	assert_true(stopped);
	assert_int_equal(st.stops_cap, 1);
}

/* The poller got under half of its CPU over a sample window: it shares a
 * CPU with the thread it waits for, so it stops and holds off (10 ms, then
 * doubled), until a window where it ran freely forgives it. */
static void test_contention_backs_off(void **state)
{
	(void)state;
	struct poll_policy p = adaptive();
	struct poll_state st = {0};
	const uint64_t ms = 1000000;
	uint64_t t = 100 * ms;
	poll_start(&st, t);
	assert_true(poll_share_due(&st, &p, t)); /* the first sample opens a window */
	assert_false(poll_share_check(&st, t, 5 * ms));
	assert_false(poll_share_due(&st, &p, t + ms / 2));
	t += ms;
	assert_true(poll_share_due(&st, &p, t));
	assert_false(poll_share_check(&st, t, 5 * ms + ms * 9 / 10)); /* ran 90%: fine */
	t += ms;
	assert_true(poll_share_check(&st, t, 5 * ms + ms)); /* ran 10% */
	assert_false(st.polling);
	assert_int_equal(st.stops_contended, 1);
	/* held off: fast kicks within 10 ms start nothing */
	for (int i = 0; i < 8; i++)
		assert_false(poll_on_kick(&st, &p, t + 9 * ms + (uint64_t)i));
	bool started = false;
	for (int i = 0; i < 4; i++)
		started = poll_on_kick(&st, &p, t + 10 * ms + (uint64_t)i);
	assert_true(started);
	/* contended again: the hold-off doubles */
	t += 10 * ms;
	poll_start(&st, t);
	assert_false(poll_share_check(&st, t, 0));
	assert_true(poll_share_check(&st, t + ms, 0));
	t += ms;
	assert_false(poll_on_kick(&st, &p, t + 19 * ms));
	assert_int_equal(st.holdoff_ns, 20 * ms);
	/* a free window forgives */
	poll_start(&st, t + 20 * ms);
	assert_false(poll_share_check(&st, t + 20 * ms, 0));
	assert_false(poll_share_check(&st, t + 21 * ms, ms));
	assert_int_equal(st.holdoff_ns, 0);
	/* always polls whatever the share */
	p.mode = POLL_ALWAYS;
	assert_false(poll_share_due(&st, &p, t + 30 * ms));
}

/* A fake queue: `avail` buffers published by the guest, `used` consumed;
 * kicks happen only while notifications are enabled. */
struct fake_queue {
	int avail, used;
	bool notify;
	int kicks;
	bool race; /* the guest publishes a buffer while notifications are off */
};

static bool fake_poll(void *opaque)
{
	struct fake_queue *q = opaque;
	bool work = q->used < q->avail;
	q->used = q->avail;
	return work;
}

static bool fake_set_notify(void *opaque, bool enable)
{
	struct fake_queue *q = opaque;
	if (enable && q->race) {
		/* The guest added a buffer after the poller decided to stop,
		 * just before kicks came back: it saw them off and did not kick. */
		q->avail++;
		q->race = false;
	}
	q->notify = enable;
	/* re-check after enabling, as virtq_enable_notify does */
	return enable && q->used < q->avail;
}

static void guest_publish(struct iothread *io, struct iothread_poller *p, struct fake_queue *q)
{
	q->avail++;
	if (q->notify) {
		q->kicks++;
		iothread_poller_kick(io, p);
		fake_poll(q); /* the kick handler processes the queue */
	}
}

/* A poller that did not get its CPU stops at once: kicks back on, and what
 * the guest queued meanwhile served (it was published without a kick). */
static uint64_t frozen_cpu(void)
{
	return 12345;
}

static void test_contended_poller_stops(void **state)
{
	(void)state;
	struct iothread io;
	memset(&io, 0, sizeof(io));
	io.cpu_clock = frozen_cpu;
	struct fake_queue q = {.notify = true};
	struct iothread_poller p = {.name = "q",
				    .policy = adaptive(),
				    .poll = fake_poll,
				    .set_notify = fake_set_notify,
				    .opaque = &q};
	assert_int_equal(iothread_add_poller(&io, &p), 0);
	for (int i = 0; i < 4; i++)
		guest_publish(&io, &p, &q);
	assert_true(p.st.polling);
	uint64_t t = p.st.started_ns;
	iothread_poll_once(&io, t + 1000); /* opens the sample window */
	assert_true(p.st.polling);
	q.race = true;				     /* a buffer comes as kicks come back */
	iothread_poll_once(&io, t + 1000 + 1000000); /* 1 ms, no CPU */
	assert_false(p.st.polling);
	assert_true(q.notify);
	assert_int_equal(io.nr_polling, 0);
	assert_int_equal(q.used, q.avail);
	assert_int_equal(p.st.stops_contended, 1);
}

static void test_no_kick_lost_when_polling_stops(void **state)
{
	(void)state;
	struct iothread io;
	memset(&io, 0, sizeof(io));
	struct fake_queue q = {.notify = true};
	struct iothread_poller p = {.name = "q",
				    .policy = adaptive(),
				    .poll = fake_poll,
				    .set_notify = fake_set_notify,
				    .opaque = &q};
	assert_int_equal(iothread_add_poller(&io, &p), 0);
	for (int i = 0; i < 4; i++)
		guest_publish(&io, &p, &q); /* fast kicks: polling starts */
	assert_true(p.st.polling);
	assert_false(q.notify); /* kicks suppressed while polling */
	assert_int_equal(io.nr_polling, 1);
	guest_publish(&io, &p, &q); /* no kick now: found by polling */
	assert_int_equal(q.kicks, 4);
	uint64_t t = p.st.started_ns;
	iothread_poll_once(&io, t + 1000);
	assert_int_equal(q.used, q.avail);

	/* Idle long enough to stop, with the race: must keep polling and
	 * consume the buffer the guest did not kick for. */
	q.race = true;
	iothread_poll_once(&io, t + 1000 + p.policy.idle_ns);
	assert_int_equal(q.used, q.avail);
	assert_true(p.st.polling);
	assert_false(q.notify);
	assert_int_equal(io.nr_polling, 1);

	/* Idle again without the race: polling stops, kicks come back. */
	iothread_poll_once(&io, t + 2000 + 3 * p.policy.idle_ns);
	assert_false(p.st.polling);
	assert_true(q.notify);
	assert_int_equal(io.nr_polling, 0);
	guest_publish(&io, &p, &q);
	assert_int_equal(q.kicks, 5);
	assert_int_equal(q.used, q.avail);
}

struct handled {
	int efd;
	pid_t tid;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done;
};

static void on_ready(void *opaque, uint32_t events)
{
	struct handled *h = opaque;
	uint64_t n;
	assert_true(events & EPOLLIN);
	assert_int_equal(read(h->efd, &n, sizeof(n)), sizeof(n));
	pthread_mutex_lock(&h->mu);
	h->tid = gettid();
	h->done = true;
	pthread_cond_signal(&h->cv);
	pthread_mutex_unlock(&h->mu);
}

/* A running I/O thread calls fd handlers on itself, under the name the
 * benchmark harness reads from /proc (comm), and counts its wakeups. */
static void test_iothread_runs_handlers_named(void **state)
{
	(void)state;
	struct iothread io;
	struct handled h = {.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)};
	pthread_mutex_init(&h.mu, NULL);
	pthread_cond_init(&h.cv, NULL);
	assert_int_equal(iothread_init(&io, "io3-and-a-long-name"), 0);
	assert_string_equal(io.name, "io3-and-a-long-"); /* the kernel keeps 15 bytes */
	assert_int_equal(iothread_add_fd(&io, h.efd, EPOLLIN, on_ready, &h), 0);
	assert_int_equal(iothread_start(&io), 0);
	uint64_t one = 1;
	assert_int_equal(write(h.efd, &one, sizeof(one)), sizeof(one));
	pthread_mutex_lock(&h.mu);
	while (!h.done)
		pthread_cond_wait(&h.cv, &h.mu);
	pthread_mutex_unlock(&h.mu);
	assert_int_not_equal(h.tid, gettid());
	char path[64], comm[32] = "";
	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)h.tid);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	assert_string_equal(comm, "io3-and-a-long-\n");
	iothread_stop(&io);
	assert_true(io.wakeups >= 1);
	assert_int_equal(io.events, 1);
	iothread_destroy(&io); /* frees the handler (ASan would say) */
	close(h.efd);
}

/* A guest cycling a device through vhost and back removes and re-adds the
 * same fd handlers each time: 10,000 cycles cost no memory, and the handler
 * still runs after them. */
static void test_iothread_readd_reuses_handler(void **state)
{
	(void)state;
	struct iothread io;
	struct handled h = {.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)};
	pthread_mutex_init(&h.mu, NULL);
	pthread_cond_init(&h.cv, NULL);
	assert_int_equal(iothread_init(&io, "io0"), 0);
	assert_int_equal(iothread_add_fd(&io, h.efd, EPOLLIN, on_ready, &h), 0);
	assert_int_equal(io.nr_handlers, 1);
	for (int i = 0; i < 10000; i++) {
		assert_int_equal(iothread_del_fd(&io, h.efd), 0);
		assert_int_equal(iothread_add_fd(&io, h.efd, EPOLLIN, on_ready, &h), 0);
	}
	assert_int_equal(io.nr_handlers, 1);
	/* Added twice without a del: epoll refuses, nothing leaks. */
	assert_int_equal(iothread_add_fd(&io, h.efd, EPOLLIN, on_ready, &h), -EEXIST);
	assert_int_equal(io.nr_handlers, 2);
	assert_int_equal(iothread_add_fd(&io, h.efd, EPOLLIN, on_ready, &h), -EEXIST);
	assert_int_equal(io.nr_handlers, 2);
	assert_int_equal(iothread_start(&io), 0);
	uint64_t one = 1;
	assert_int_equal(write(h.efd, &one, sizeof(one)), sizeof(one));
	pthread_mutex_lock(&h.mu);
	while (!h.done)
		pthread_cond_wait(&h.cv, &h.mu);
	pthread_mutex_unlock(&h.mu);
	iothread_stop(&io);
	assert_int_equal(io.events, 1);
	iothread_destroy(&io);
	close(h.efd);
}

static int opt(const char *kv, struct poll_policy *p, char *err)
{
	const char *eq = strchr(kv, '=');
	return poll_opt_parse(kv, (size_t)(eq - kv), eq + 1, strlen(eq + 1), p, err, 128);
}

static void test_poll_options(void **state)
{
	(void)state;
	struct poll_policy p;
	char err[128];
	poll_policy_default(&p);
	assert_int_equal(opt("poll=adaptive", &p, err), 1);
	assert_int_equal(p.mode, POLL_ADAPTIVE);
	assert_int_equal(opt("poll-start=2", &p, err), 1);
	assert_int_equal(p.start_kicks, 2);
	assert_int_equal(opt("poll-idle=75", &p, err), 1);
	assert_int_equal(p.idle_ns, 75000);
	assert_int_equal(opt("poll-max=1000", &p, err), 1);
	assert_int_equal(p.max_ns, 1000000);
	assert_int_equal(opt("poll-window=20000", &p, err), 1);
	assert_int_equal(p.window_ns, 20000000);
	assert_int_equal(opt("mac=02:00:00:00:00:01", &p, err), 0); /* not a poll key */
	/* bad values: one line naming the option */
	assert_int_equal(opt("poll=sometimes", &p, err), -1);
	assert_non_null(strstr(err, "poll=sometimes"));
	assert_int_equal(opt("poll-start=0", &p, err), -1);
	assert_int_equal(opt("poll-start=x", &p, err), -1);
	assert_int_equal(opt("poll-idle=", &p, err), -1);
	assert_int_equal(opt("poll-idle=-5", &p, err), -1);
	assert_int_equal(opt("poll-max=99999999999", &p, err), -1);
	assert_non_null(strstr(err, "poll-max"));
	assert_null(strchr(err, '\n'));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_start_needs_fast_kicks),
	    cmocka_unit_test(test_modes_off_and_always),
	    cmocka_unit_test(test_stop_after_idle_and_cap),
	    cmocka_unit_test(test_contention_backs_off),
	    cmocka_unit_test(test_contended_poller_stops),
	    cmocka_unit_test(test_no_kick_lost_when_polling_stops),
	    cmocka_unit_test(test_poll_options),
	    cmocka_unit_test(test_iothread_runs_handlers_named),
	    cmocka_unit_test(test_iothread_readd_reuses_handler),
	};
	return cmocka_run_group_tests_name("poll", tests, NULL, NULL);
}
