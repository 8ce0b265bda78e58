/* Named counters that devices, transports and the I/O thread publish for
 * the exit-accounting report ("virtio-net0 q1 kicks", "io0 poll hits"),
 * without the report knowing them. Registered at setup, read at any time. */
#ifndef SKIFF_COUNTERS_H
#define SKIFF_COUNTERS_H

#include <stdint.h>

#define COUNTERS_MAX 256

/* `name` is copied; `value` must stay valid for the VM's lifetime and is
 * read with a relaxed atomic load. Silently ignored when the table is full. */
void counters_register(const char *name, const uint64_t *value);
unsigned int counters_count(void);
const char *counters_name(unsigned int i);
uint64_t counters_value(unsigned int i);

#endif
