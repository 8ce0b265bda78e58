// SPDX-License-Identifier: Apache-2.0
#include "devices/throttle.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "core/clock.h"
#include "iothread/iothread.h"

int throttle_init(struct throttle *t, const struct ratelimit_cfg *cfg, void (*resume)(void *),
		  void *opaque, counter_t *throttled, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	t->tfd = -1;
	t->clock_ns = monotonic_ns;
	t->resume = resume;
	t->opaque = opaque;
	t->throttled = throttled;
	ratelimit_init(&t->rl, cfg, t->clock_ns());
	atomic_store(&t->on, ratelimit_on(&t->rl));
	t->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (t->tfd < 0) {
		snprintf(err, errlen, "cannot create the rate limiter's timer: %s",
			 strerror(errno));
		return -1;
	}
	pthread_mutex_init(&t->mu, NULL);
	return 0;
}

int throttle_start(struct throttle *t, struct iothread *io)
{
	t->io = io;
	return io ? iothread_add_fd(io, t->tfd, EPOLLIN, throttle_event, t) : 0;
}

void throttle_stop(struct throttle *t)
{
	if (t->io && t->tfd >= 0)
		iothread_del_fd(t->io, t->tfd);
	t->io = NULL;
}

void throttle_fini(struct throttle *t)
{
	if (t->tfd < 0)
		return;
	close(t->tfd);
	t->tfd = -1;
	pthread_mutex_destroy(&t->mu);
}

/* With mu held. armed before the timer: a handler that runs in between
 * only makes the device pop once more. */
static bool throttle_arm(struct throttle *t, uint64_t ns)
{
	atomic_store(&t->armed, true);
	if (clock_timerfd_set(t->tfd, 0, ns) < 0) {
		atomic_store(&t->armed, false);
		return false;
	}
	counter_add(t->throttled, 1);
	return true;
}

/* take: consume the tokens (admit) or only look (ready). */
static bool throttle_ask(struct throttle *t, uint64_t ops, uint64_t bytes, bool take)
{
	if (!atomic_load(&t->on))
		return true;
	if (atomic_load(&t->armed))
		return false;
	pthread_mutex_lock(&t->mu);
	uint64_t now = t->clock_ns();
	uint64_t wait = take ? ratelimit_consume(&t->rl, ops, bytes, now)
			     : ratelimit_check(&t->rl, ops, bytes, now);
	if (wait && !throttle_arm(t, wait)) {
		/* Nothing could wake us: pass rather than wedge. */
		if (take)
			ratelimit_charge(&t->rl, ops, bytes, now);
		wait = 0;
	}
	pthread_mutex_unlock(&t->mu);
	return !wait;
}

bool throttle_admit(struct throttle *t, uint64_t ops, uint64_t bytes)
{
	return throttle_ask(t, ops, bytes, true);
}

bool throttle_ready(struct throttle *t, uint64_t ops, uint64_t bytes)
{
	return throttle_ask(t, ops, bytes, false);
}

void throttle_charge(struct throttle *t, uint64_t ops, uint64_t bytes)
{
	if (!atomic_load(&t->on))
		return;
	pthread_mutex_lock(&t->mu);
	ratelimit_charge(&t->rl, ops, bytes, t->clock_ns());
	pthread_mutex_unlock(&t->mu);
}

void throttle_update(struct throttle *t, const struct ratelimit_cfg *cfg, unsigned int mask)
{
	pthread_mutex_lock(&t->mu);
	ratelimit_update(&t->rl, cfg, mask, t->clock_ns());
	atomic_store(&t->on, ratelimit_on(&t->rl));
	/* A wait under the old limits: end it now (1 ns; 0 would disarm). */
	if (atomic_load(&t->armed) && clock_timerfd_set(t->tfd, 0, 1) < 0) {
		/* The armed timer still fires, later. */
	}
	pthread_mutex_unlock(&t->mu);
}

void throttle_event(void *opaque, uint32_t events)
{
	struct throttle *t = opaque;
	uint64_t n;
	(void)events;
	if (read(t->tfd, &n, sizeof(n)) < 0) {
		/* EAGAIN: a test called us directly, or an update re-armed */
	}
	atomic_store(&t->armed, false);
	t->resume(t->opaque);
}
