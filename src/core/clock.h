/* Time in nanoseconds: monotonic wall time and the calling thread's CPU. */
#ifndef SKIFF_CLOCK_H
#define SKIFF_CLOCK_H

#include <stdint.h>
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

#endif
