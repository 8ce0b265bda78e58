// SPDX-License-Identifier: Apache-2.0
#include "core/cpulist.h"

#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A CPU number: digits only, below CPULIST_MAX. The end in *end. */
static int cpu_number(const char *s, const char **end)
{
	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	char *e;
	unsigned long v = strtoul(s, &e, 10);
	if (errno || v >= CPULIST_MAX)
		return -1;
	*end = e;
	return (int)v;
}

/* One item, "N" or "A-B" with A <= B, ending at a comma or the end. */
static int cpulist_item(const char *s, const char **next, int *lo, int *hi)
{
	const char *p;
	if ((*lo = cpu_number(s, &p)) < 0)
		return -1;
	*hi = *lo;
	if (*p == '-' && ((*hi = cpu_number(p + 1, &p)) < 0 || *hi < *lo))
		return -1;
	if (*p != ',' && *p != '\0')
		return -1;
	*next = p;
	return 0;
}

int cpulist_parse(const char *s, int *cpus, int max, char *err, size_t errlen)
{
	static const char syntax[] = "use Linux's cpulist syntax, e.g. 0-3,6";
	bool seen[CPULIST_MAX] = {false};
	int n = 0;
	if (!*s) {
		snprintf(err, errlen, "empty CPU list (%s)", syntax);
		return -1;
	}
	for (const char *p = s;;) {
		int lo, hi;
		if (cpulist_item(p, &p, &lo, &hi) < 0) {
			snprintf(err, errlen, "bad CPU list '%s' (%s)", s, syntax);
			return -1;
		}
		for (int c = lo; c <= hi; c++) {
			if (seen[c]) {
				snprintf(err, errlen, "CPU %d is listed twice in '%s'", c, s);
				return -1;
			}
			if (n == max) {
				snprintf(err, errlen, "'%s' lists more than %d CPU%s", s, max,
					 max == 1 ? "" : "s");
				return -1;
			}
			seen[c] = true;
			cpus[n++] = c;
		}
		if (!*p)
			return n;
		p++; /* the comma: an item must follow */
	}
}

int cpulist_check_host(const int *cpus, int n, char *err, size_t errlen)
{
	cpu_set_t allowed;
	CPU_ZERO(&allowed);
	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0) {
		snprintf(err, errlen, "cannot read this process's CPUs: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (cpus[i] >= 0 && cpus[i] < CPU_SETSIZE && CPU_ISSET(cpus[i], &allowed))
			continue;
		snprintf(err, errlen, "host CPU %d is not one this process may run on (%d usable)",
			 cpus[i], CPU_COUNT(&allowed));
		return -1;
	}
	return 0;
}

int thread_create_on(pthread_t *t, int cpu, void *(*fn)(void *), void *arg)
{
	if (cpu < 0)
		return pthread_create(t, NULL, fn, arg);
	pthread_attr_t attr;
	int r = pthread_attr_init(&attr);
	if (r)
		return r;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	r = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	if (!r)
		r = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return r;
}
