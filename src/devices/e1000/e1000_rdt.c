// SPDX-License-Identifier: Apache-2.0
/* e1000: a parked receive looks for a batched RDT write on a timer.
 *
 * With coalesce=on, RDT writes wait in KVM's coalesced ring until some
 * thread drains it: every exit does, and RX does before it parks
 * (e1000_rx.c). A driver that polls its ring and never exits (no
 * interrupt, no other register write) would leave RX parked behind an
 * RDT write it made long ago, until the ring fills. So while RX is parked
 * and RDT is batched, a timerfd on the I/O thread drains the ring: a
 * replayed RDT write unparks RX (e1000_rx_kick), which then runs on its
 * usual turn. The wait doubles from E1000_RDT_POLL_MIN_NS up to
 * E1000_RDT_POLL_MAX_NS while nothing comes, so a guest that has stopped
 * reading costs at most ~100 empty ring peeks a second; the bound on a
 * missed RDT write is E1000_RDT_POLL_MAX_NS. A parked RX whose ring
 * holds no RDT write stays parked, and no counter moves. */
#include <sys/timerfd.h>
#include <unistd.h>

#include "core/clock.h"
#include "devices/e1000/e1000_priv.h"

#define E1000_RDT_POLL_MIN_NS 200000ull	  /* 200 us */
#define E1000_RDT_POLL_MAX_NS 10000000ull /* 10 ms */

/* Caller holds lock. */
static void rdt_arm(struct e1000 *d)
{
	if (d->rdt_armed || clock_timerfd_set(d->rdt_fd, 0, d->rdt_poll_ns) < 0)
		return; /* without a timer: the next exit drains, as before */
	d->rdt_armed = true;
}

void e1000_rx_park(struct e1000 *d)
{
	d->rx_parked = true;
	/* ctx.coalesce, not zones_on (the BAR's hook writes that under the
	 * bus's lock, not ours): a drain with no zones is an empty peek. */
	if (d->ctx.coalesce == E1000_COALESCE_OFF || !d->ctx.flush || d->rdt_fd < 0)
		return; /* RDT is never batched: its write kicks RX itself */
	if (!d->rdt_poll_ns)
		d->rdt_poll_ns = E1000_RDT_POLL_MIN_NS;
	rdt_arm(d);
}

void e1000_rdt_event(void *opaque, uint32_t events)
{
	struct e1000 *d = opaque;
	uint64_t n;
	(void)events;
	if (read(d->rdt_fd, &n, sizeof(n)) < 0) {
		/* EAGAIN: a test called us directly */
	}
	pthread_mutex_lock(&d->lock);
	d->rdt_armed = false;
	bool look = d->rx_parked && !d->stopped;
	pthread_mutex_unlock(&d->lock);
	if (!look)
		return;
	/* Outside the lock: the replay takes it (and kicks RX). */
	d->ctx.flush(d->ctx.cm_opaque);
	pthread_mutex_lock(&d->lock);
	counter_add(&d->stats.flushes, 1);
	if (d->rx_parked && !d->stopped) {
		d->rdt_poll_ns *= 2;
		if (d->rdt_poll_ns > E1000_RDT_POLL_MAX_NS)
			d->rdt_poll_ns = E1000_RDT_POLL_MAX_NS;
		rdt_arm(d);
	}
	pthread_mutex_unlock(&d->lock);
}
