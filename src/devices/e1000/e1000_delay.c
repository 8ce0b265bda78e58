// SPDX-License-Identifier: Apache-2.0
/* e1000: the interrupt delay timers (8254x manual, "Receive Interrupt
 * Delay" and "Transmit Interrupt Delay"), in 1.024 us units:
 *  - RDTR restarts on every received packet, RADV bounds the wait from the
 *    first one (RADV applies only while RDTR is not 0); RXT0 when either
 *    runs out. RDTR 0: RXT0 at once.
 *  - TIDV restarts on every written-back descriptor with IDE, TADV bounds
 *    the wait from the first one (0: no bound); TXDW when either runs out.
 *    A descriptor without IDE: TXDW at once.
 *  - RDTR or TIDV written with FPD (bit 31): the waiting cause at once.
 * The cause is set when its timer runs out, and ITR applies from there.
 * The delays only time the line: a cause that is masked, or that ITR would
 * hold past its due time anyway, is set at once (the guest polling in NAPI
 * with interrupts masked costs no timer). One timerfd on the I/O thread,
 * armed for the earliest due time; without one, causes are set at once
 * (never lost). */
#include <sys/timerfd.h>
#include <unistd.h>

#include "core/clock.h"
#include "devices/e1000/e1000_priv.h"

#define E1000_DELAY_UNIT_NS 1024

/* When a delayed cause is due: the restarting timer, bounded by the
 * absolute one if that runs. */
static uint64_t delay_due(const struct e1000_delay *t)
{
	return t->abs_ns && t->abs_ns < t->due_ns ? t->abs_ns : t->due_ns;
}

static bool delay_arm(struct e1000 *d, uint64_t at)
{
	if (d->delay_fd < 0)
		return false;
	if (d->delay_at && d->delay_at <= at)
		return true; /* it fires sooner; the handler re-arms for the rest */
	if (clock_timerfd_set(d->delay_fd, TFD_TIMER_ABSTIME, at) < 0)
		return false;
	d->delay_at = at;
	return true;
}

/* One more event for timer t: restart it (and start its bound), or set the
 * cause now if the delay is 0 or no timer can wait. */
static void delay_start(struct e1000 *d, struct e1000_delay *t, uint32_t cause, uint32_t delay,
			uint32_t bound)
{
	uint64_t now = d->clock_ns();
	if (delay) {
		t->due_ns = now + (uint64_t)delay * E1000_DELAY_UNIT_NS;
		if (!t->abs_ns && bound)
			t->abs_ns = now + (uint64_t)bound * E1000_DELAY_UNIT_NS;
		uint64_t at = delay_due(t);
		if (!e1000_irq_held(d, cause, at) && delay_arm(d, at))
			return;
	}
	t->due_ns = t->abs_ns = 0;
	e1000_set_ics(d, cause);
}

void e1000_delay_rx(struct e1000 *d)
{
	uint32_t rdtr = e1000_reg(d, E1000_RDTR) & 0xffff;
	delay_start(d, &d->rx_delay, E1000_ICR_RXT0, rdtr,
		    rdtr ? e1000_reg(d, E1000_RADV) & 0xffff : 0);
}

void e1000_delay_tx(struct e1000 *d, bool ide)
{
	delay_start(d, &d->tx_delay, E1000_ICR_TXDW, ide ? e1000_reg(d, E1000_TIDV) & 0xffff : 0,
		    e1000_reg(d, E1000_TADV) & 0xffff);
}

/* Sets the causes that are due at `now` (all waiting ones if `all`
 * includes them) and re-arms for the rest. Caller holds lock. */
static void delay_expire(struct e1000 *d, uint64_t now, uint32_t flush)
{
	struct {
		struct e1000_delay *t;
		uint32_t cause;
	} ts[2] = {{&d->rx_delay, E1000_ICR_RXT0}, {&d->tx_delay, E1000_ICR_TXDW}};
	uint32_t causes = 0;
	uint64_t next = 0;
	d->delay_at = 0;
	for (int i = 0; i < 2; i++) {
		struct e1000_delay *t = ts[i].t;
		if (!t->due_ns)
			continue;
		uint64_t due = delay_due(t);
		if (due <= now || (flush & ts[i].cause)) {
			causes |= ts[i].cause;
			t->due_ns = t->abs_ns = 0;
		} else if (!next || due < next) {
			next = due;
		}
	}
	if (next && !delay_arm(d, next)) {
		/* cannot wait any more: the rest now */
		causes |= d->rx_delay.due_ns ? E1000_ICR_RXT0 : 0;
		causes |= d->tx_delay.due_ns ? E1000_ICR_TXDW : 0;
		d->rx_delay = d->tx_delay = (struct e1000_delay){0, 0};
	}
	if (causes)
		e1000_set_ics(d, causes);
}

void e1000_delay_flush(struct e1000 *d, uint32_t causes)
{
	delay_expire(d, d->clock_ns(), causes);
}

void e1000_delay_event(void *opaque, uint32_t events)
{
	struct e1000 *d = opaque;
	uint64_t n;
	(void)events;
	if (read(d->delay_fd, &n, sizeof(n)) < 0) {
		/* EAGAIN: a test called us directly */
	}
	pthread_mutex_lock(&d->lock);
	if (!d->stopped)
		delay_expire(d, d->clock_ns(), 0);
	pthread_mutex_unlock(&d->lock);
}

void e1000_delay_reset(struct e1000 *d)
{
	d->rx_delay = d->tx_delay = (struct e1000_delay){0, 0};
	/* An armed timer may still fire: it finds nothing due. */
	d->delay_at = 0;
}
