#include "stats/counters.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static struct {
	char name[64];
	const uint64_t *value;
} table[COUNTERS_MAX];
static atomic_uint nr;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void counters_register(const char *name, const uint64_t *value)
{
	pthread_mutex_lock(&lock);
	unsigned int i = atomic_load_explicit(&nr, memory_order_relaxed);
	if (i < COUNTERS_MAX) {
		snprintf(table[i].name, sizeof(table[i].name), "%s", name);
		table[i].value = value;
		/* Publishes the entry to readers that load nr with acquire. */
		atomic_store_explicit(&nr, i + 1, memory_order_release);
	}
	pthread_mutex_unlock(&lock);
}

unsigned int counters_count(void)
{
	return atomic_load_explicit(&nr, memory_order_acquire);
}

const char *counters_name(unsigned int i)
{
	return table[i].name;
}

uint64_t counters_value(unsigned int i)
{
	return __atomic_load_n(table[i].value, __ATOMIC_RELAXED);
}
