// SPDX-License-Identifier: Apache-2.0
/* Host CPU lists in Linux's cpulist syntax ("0-3,6", as taskset -c and
 * /sys/devices/system/cpu/online write them), for pinning threads
 * (--cpus N,pin=LIST, --iothreads N,pin=LIST), and starting a thread on
 * one host CPU. */
#ifndef SKIFF_CPULIST_H
#define SKIFF_CPULIST_H

#include <pthread.h>
#include <stddef.h>

#define CPULIST_MAX 1024 /* CPU numbers below this (glibc's CPU_SETSIZE) */

/* Parses s into at most max CPU numbers, in the order given ("2,0-1" is
 * 2, 0, 1). Returns how many, or -1 with one line in err: an empty list,
 * a bad item ("a", "0-", "3-1"), a CPU given twice, more than max. */
int cpulist_parse(const char *s, int *cpus, int max, char *err, size_t errlen);
/* 0 if this process may run on every CPU of the list (its affinity mask:
 * the host's online CPUs, less a cpuset's); -1 with one line in err
 * naming the first that it may not. */
int cpulist_check_host(const int *cpus, int n, char *err, size_t errlen);
/* pthread_create, with the thread bound to host CPU cpu from its first
 * instruction (cpu < 0: unbound). The affinity is set by the C library
 * in the creating thread, before the new thread runs or installs its
 * seccomp filter, so no role needs sched_setaffinity. 0 or an errno. */
int thread_create_on(pthread_t *t, int cpu, void *(*fn)(void *), void *arg);

#endif
