// SPDX-License-Identifier: Apache-2.0
/* Thread names: every long-lived thread names itself ("vcpu0", "io1",
 * "blk0", "console", "api") so that /proc/PID/task/TID/comm, top -H and
 * the benchmark harness's per-thread CPU can tell skiff's threads apart. */
#ifndef SKIFF_THREAD_H
#define SKIFF_THREAD_H

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

/* Names the calling thread (the kernel keeps 15 bytes). A thread names
 * itself, first thing, before it installs its seccomp filter (which
 * allows no prctl): for the calling thread glibc uses prctl(PR_SET_NAME),
 * while naming another thread would write /proc/self/task/TID/comm. */
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
