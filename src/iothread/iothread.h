// SPDX-License-Identifier: Apache-2.0
/* An I/O thread: an epoll loop that runs device work (queue kicks from
 * ioeventfds, tap events, polled queues) off the vCPU threads. An idle
 * I/O thread sleeps in epoll_wait. A VM has 1 to IOTHREAD_MAX of them
 * (--iothreads N), named io0, io1, ...; each device is served by exactly
 * one (see machine_iothread). */
#ifndef SKIFF_IOTHREAD_H
#define SKIFF_IOTHREAD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/counter.h"
#include "iothread/poll_policy.h"
#include "core/must_check.h"

typedef void (*iothread_fd_fn)(void *opaque, uint32_t events);
struct iothread_handler;

#define IOTHREAD_MAX	     8 /* --iothreads N: 1..IOTHREAD_MAX */
#define IOTHREAD_MAX_POLLERS 32

/* A queue the I/O thread may poll instead of waiting for kicks. */
struct iothread_poller {
	const char *name;
	struct poll_policy policy;
	struct poll_state st; /* touched by the I/O thread only */
	/* Processes available work; returns true if there was any. */
	bool (*poll)(void *opaque);
	/* Disables (false) or re-enables (true) guest notifications. When
	 * re-enabling, returns true if work arrived meanwhile, which the
	 * guest may not have kicked for (virtq_enable_notify's contract). */
	bool (*set_notify)(void *opaque, bool enable);
	/* Optional: true while the queue belongs to someone else (vhost):
	 * polling stops at once, whatever the mode, touching nothing; the
	 * next kick may start it again. */
	bool (*parked)(void *opaque);
	void *opaque;
};

struct iothread {
	char name[16]; /* "io0": also the thread's name */
	int epfd;
	int stop_fd; /* eventfd: wakes the loop to stop */
	pthread_t thread;
	int running;
	int pin_cpu; /* host CPU the thread runs on, or -1 (iothread_start) */
	/* epoll_wait returns (not counting empty peeks while polling), and fd
	 * handlers run; published as "ioN wakeups" / "ioN events". */
	counter_t wakeups, events;
	struct iothread_poller *pollers[IOTHREAD_MAX_POLLERS];
	unsigned int nr_pollers; /* fixed before iothread_start */
	unsigned int nr_polling;
	uint64_t cpu_ns;		   /* thread CPU time, set when the thread ends */
	uint64_t (*cpu_clock)(void);	   /* thread_cpu_ns; NULL: no contention check */
	pthread_mutex_t handlers_lock;	   /* add_fd/del_fd callers, not the loop */
	struct iothread_handler *handlers; /* every fd handler added; freed by destroy */
	unsigned int nr_handlers;	   /* allocated (live or removed) */
	/* iothread_hold: the loop parks between two batches of handlers. */
	pthread_mutex_t hold_lock;
	pthread_cond_t hold_cv;
	bool hold, held;       /* asked to park; parked (under hold_lock) */
	_Atomic bool stopping; /* stop_fd means stop, not park */
};

/* name is copied (at most 15 bytes). */
int iothread_init(struct iothread *io, const char *name);
/* Calls fn(opaque, events) on the I/O thread when fd is ready (EPOLLIN
 * etc.). Safe while the thread runs. Adding an (fd, fn, opaque) again
 * after iothread_del_fd reuses its handler: del/add cycles do not grow. */
MUST_CHECK int iothread_add_fd(struct iothread *io, int fd, uint32_t events, iothread_fd_fn fn,
			       void *opaque);
int iothread_del_fd(struct iothread *io, int fd);
/* Registers a poller (before iothread_start); -ENOSPC if full. */
MUST_CHECK int iothread_add_poller(struct iothread *io, struct iothread_poller *p);
/* Called on the I/O thread for every kick of p's queue (its ioeventfd
 * fired): may start polling, which suppresses further kicks. */
void iothread_poller_kick(struct iothread *io, struct iothread_poller *p);
/* One polling round over the polling pollers at time `now` (the loop calls
 * it; exposed for tests). */
void iothread_poll_once(struct iothread *io, uint64_t now);
int iothread_start(struct iothread *io);
void iothread_stop(struct iothread *io);
void iothread_destroy(struct iothread *io);
/* Parks a running thread between two batches of its handlers and returns
 * once it is parked: no handler or poller of it runs until
 * iothread_release (a snapshot saves its devices' state meanwhile). A
 * thread not started: nothing to do. Main thread only, paired. */
void iothread_hold(struct iothread *io);
void iothread_release(struct iothread *io);

#endif
