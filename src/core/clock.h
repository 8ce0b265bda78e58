// SPDX-License-Identifier: Apache-2.0
/* Time in nanoseconds: monotonic wall time and the calling thread's CPU. */
#ifndef SKIFF_CLOCK_H
#define SKIFF_CLOCK_H

#include <stdint.h>
#include <sys/timerfd.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline uint64_t monotonic_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static inline uint64_t thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* Arms timerfd fd to fire once at ns (flags TFD_TIMER_ABSTIME) or ns from
 * now (0); ns 0 disarms it. timerfd_settime's result. */
static inline int clock_timerfd_set(int fd, int flags, uint64_t ns)
{
	struct itimerspec its = {
	    .it_value = {.tv_sec = (time_t)(ns / 1000000000), .tv_nsec = (long)(ns % 1000000000)}};
	return timerfd_settime(fd, flags, &its, NULL);
}

#endif
