/* Thread names: every long-lived thread names itself ("vcpu0", "io1",
 * "blk0", "console", "api") so that /proc/PID/task/TID/comm, top -H and
 * the benchmark harness's per-thread CPU can tell skiff's threads apart. */
#ifndef SKIFF_THREAD_H
#define SKIFF_THREAD_H

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

/* Names the calling thread (the kernel keeps 15 bytes). A thread names
 * itself rather than being named by its creator: for the calling thread
 * glibc uses prctl(PR_SET_NAME), which the seccomp filter allows, while
 * naming another thread writes /proc/self/task/TID/comm, which it refuses
 * (most threads start after the filter is loaded). */
__attribute__((format(printf, 1, 2))) static inline void thread_name_self(const char *fmt, ...)
{
	char name[16];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	pthread_setname_np(pthread_self(), name);
}

#endif
