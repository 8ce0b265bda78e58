// SPDX-License-Identifier: Apache-2.0
/* The gate vCPU threads pass on every turn of their exit loop, so the
 * VMM can pause them: closing it asks every thread to park (the caller
 * kicks them out of KVM_RUN) and returns once all have; opening it lets
 * them run again; stopping it releases them for good, so that a stop
 * while paused never hangs. Knows nothing of KVM: unit-tested with plain
 * threads.
 *
 * Threads: one per vCPU (enter/leave/park), any number of controllers
 * (close/open/stop); all under one lock except vcpu_gate_closed, the
 * vCPU's cheap check. */
#ifndef SKIFF_VCPU_GATE_H
#define SKIFF_VCPU_GATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

struct vcpu_gate {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* parked count, open and stop changes */
	atomic_bool closed;
	bool stopped;
	int running; /* threads between enter and leave */
	int parked;
};

void vcpu_gate_init(struct vcpu_gate *g);
void vcpu_gate_destroy(struct vcpu_gate *g);
/* Counts a vCPU thread in (by its starter, before it can run) and out
 * (by the thread as it ends, or by the starter if it did not start). */
void vcpu_gate_enter(struct vcpu_gate *g);
void vcpu_gate_leave(struct vcpu_gate *g);

static inline bool vcpu_gate_closed(struct vcpu_gate *g)
{
	return atomic_load(&g->closed);
}

/* Called by a vCPU thread when vcpu_gate_closed: sleeps until the gate
 * opens or stops. */
void vcpu_gate_park(struct vcpu_gate *g);
/* Closes the gate, calls kick(opaque) to make the threads look, and
 * waits until every running thread parked. 0, or -1 if the gate was or
 * got stopped, or another controller opened it meanwhile (the VMM
 * serializes its controllers; this only keeps a race from hanging). */
int vcpu_gate_close(struct vcpu_gate *g, void (*kick)(void *opaque), void *opaque);
void vcpu_gate_open(struct vcpu_gate *g);
/* Opens the gate for good: parked threads return, close fails. */
void vcpu_gate_stop(struct vcpu_gate *g);

#endif
