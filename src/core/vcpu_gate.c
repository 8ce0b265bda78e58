// SPDX-License-Identifier: Apache-2.0
#include "core/vcpu_gate.h"

void vcpu_gate_init(struct vcpu_gate *g)
{
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cond, NULL);
	atomic_init(&g->closed, false);
	g->stopped = false;
	g->running = g->parked = 0;
}

void vcpu_gate_destroy(struct vcpu_gate *g)
{
	pthread_cond_destroy(&g->cond);
	pthread_mutex_destroy(&g->lock);
}

void vcpu_gate_enter(struct vcpu_gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->running++;
	pthread_mutex_unlock(&g->lock);
}

void vcpu_gate_leave(struct vcpu_gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->running--;
	/* A closer may be waiting for this thread to park: it never will. */
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

void vcpu_gate_park(struct vcpu_gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->parked++;
	pthread_cond_broadcast(&g->cond);
	while (atomic_load(&g->closed) && !g->stopped)
		pthread_cond_wait(&g->cond, &g->lock);
	g->parked--;
	pthread_mutex_unlock(&g->lock);
}

int vcpu_gate_close(struct vcpu_gate *g, void (*kick)(void *opaque), void *opaque)
{
	pthread_mutex_lock(&g->lock);
	atomic_store(&g->closed, true); /* undone below if stopped */
	pthread_mutex_unlock(&g->lock);
	/* Outside the lock: a kicked thread may need it to leave. */
	if (kick)
		kick(opaque);
	pthread_mutex_lock(&g->lock);
	while (g->parked < g->running && !g->stopped && atomic_load(&g->closed))
		pthread_cond_wait(&g->cond, &g->lock);
	int r = g->stopped || !atomic_load(&g->closed) ? -1 : 0;
	if (g->stopped)
		atomic_store(&g->closed, false);
	pthread_mutex_unlock(&g->lock);
	return r;
}

void vcpu_gate_open(struct vcpu_gate *g)
{
	pthread_mutex_lock(&g->lock);
	atomic_store(&g->closed, false);
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

void vcpu_gate_stop(struct vcpu_gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->stopped = true;
	atomic_store(&g->closed, false);
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}
