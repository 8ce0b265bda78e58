// SPDX-License-Identifier: Apache-2.0
/* A device's rate limiter (core/ratelimit.h) with what waiting needs: a
 * timerfd on the device's I/O thread that calls the device back once
 * tokens exist, and a lock, because a device's data path runs on several
 * threads (one per queue, kicks on vCPUs) and PATCH updates the limits
 * from the main thread.
 *
 * The data path asks throttle_admit before it takes a request; false
 * means "leave it where it is": the timer is armed and resume(opaque) runs
 * on the I/O thread when it fires, to pop again. While a wait is pending,
 * admit answers false at once without the lock (kicks stay O(1)). Every
 * false answer has a resume after it: armed is set before the timer and
 * cleared by the handler before it calls resume. A limiter that is off
 * costs one atomic load. Without a timer (timerfd failed) nothing waits:
 * requests pass, so nothing can wedge. */
#ifndef SKIFF_THROTTLE_H
#define SKIFF_THROTTLE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/counter.h"
#include "core/ratelimit.h"

struct iothread;

struct throttle {
	pthread_mutex_t mu; /* rl */
	struct ratelimit rl;
	atomic_bool on;	   /* a bucket is on */
	atomic_bool armed; /* a wait is pending: resume will run */
	int tfd;
	struct iothread *io; /* set by throttle_start */
	void (*resume)(void *opaque);
	void *opaque;
	counter_t *throttled;	    /* bumped for every wait begun */
	uint64_t (*clock_ns)(void); /* monotonic_ns; tests set their own */
};

/* A wait is pending: the data path should not even pop. */
static inline bool throttle_waiting(struct throttle *t)
{
	return atomic_load(&t->on) && atomic_load(&t->armed);
}

/* cfg NULL: off (a PATCH may turn it on). 0, or -1 with err. */
int throttle_init(struct throttle *t, const struct ratelimit_cfg *cfg, void (*resume)(void *),
		  void *opaque, counter_t *throttled, char *err, size_t errlen);
/* Watches the timer on io (the device's start). 0 or -errno. */
int throttle_start(struct throttle *t, struct iothread *io);
/* Stops watching it (the device's stop: the I/O thread has stopped). */
void throttle_stop(struct throttle *t);
/* Closes the timer; also after a failed or no throttle_init (tfd -1). */
void throttle_fini(struct throttle *t);
/* May the data path take ops operations of bytes bytes now? Takes the
 * tokens if so. */
bool throttle_admit(struct throttle *t, uint64_t ops, uint64_t bytes);
/* The same question, taking nothing: for a side that learns the size
 * only by moving the data (RX), then pays with throttle_charge. */
bool throttle_ready(struct throttle *t, uint64_t ops, uint64_t bytes);
/* Takes tokens for data already moved (may leave a debt that blocks). */
void throttle_charge(struct throttle *t, uint64_t ops, uint64_t bytes);
/* Replaces the buckets in mask (1 << RL_*) with cfg's, full; a pending
 * wait ends at once so the device retries under the new limits. From any
 * thread. */
void throttle_update(struct throttle *t, const struct ratelimit_cfg *cfg, unsigned int mask);
/* The timer's handler (iothread_fd_fn); tests call it directly. */
void throttle_event(void *opaque, uint32_t events);

#endif
