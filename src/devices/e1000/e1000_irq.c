// SPDX-License-Identifier: Apache-2.0
/* e1000: interrupt causes (ICR, IMS/IMC, ICS) on PCI INTx, with the
 * throttling interval (ITR) kept by a timerfd on the I/O thread. */
#include <sys/timerfd.h>
#include <unistd.h>

#include "core/clock.h"
#include "devices/e1000/e1000_priv.h"

/* Interrupt throttling: ITR (in 256 ns units, 0 = off) is the least time
 * between two interrupts. Returns whether one may be raised now; if not,
 * the timer raises it when the interval is over. */
static bool e1000_itr_allows(struct e1000 *d)
{
	uint32_t itr = d->regs[E1000_ITR / 4] & 0xffff;
	if (!itr || d->itr_fd < 0)
		return true;
	uint64_t now = d->clock_ns();
	if (now >= d->itr_next_ns) {
		d->itr_next_ns = now + (uint64_t)itr * 256;
		return true;
	}
	if (!d->itr_armed) {
		if (clock_timerfd_set(d->itr_fd, TFD_TIMER_ABSTIME, d->itr_next_ns) < 0)
			return true; /* cannot wait: do not lose the interrupt */
		d->itr_armed = true;
	}
	counter_add(&d->stats.irqs_deferred, 1);
	return false;
}

bool e1000_irq_held(const struct e1000 *d, uint32_t cause, uint64_t until_ns)
{
	if (!(d->regs[E1000_IMS / 4] & cause))
		return true;
	return (d->regs[E1000_ITR / 4] & 0xffff) && d->itr_fd >= 0 && d->itr_next_ns >= until_ns;
}

void e1000_itr_event(void *opaque, uint32_t events)
{
	struct e1000 *d = opaque;
	uint64_t n;
	(void)events;
	if (read(d->itr_fd, &n, sizeof(n)) < 0) {
		/* EAGAIN: a test called us directly */
	}
	pthread_mutex_lock(&d->lock);
	d->itr_armed = false;
	e1000_irq_update(d);
	pthread_mutex_unlock(&d->lock);
}

void e1000_irq_update(struct e1000 *d)
{
	bool level = (d->regs[E1000_ICR / 4] & d->regs[E1000_IMS / 4]) != 0;
	if (level == d->irq_level)
		return;
	if (level && !e1000_itr_allows(d))
		return;
	d->irq_level = level;
	if (level)
		counter_add(&d->stats.irqs, 1);
	pci_intx_set(&d->pci, level);
}

void e1000_set_ics(struct e1000 *d, uint32_t causes)
{
	d->regs[E1000_ICR / 4] |= causes & E1000_ICR_VALID;
	e1000_irq_update(d);
}

/* Reading ICR returns the causes and clears them all (82540: always). */
uint32_t e1000_icr_read(struct e1000 *d)
{
	uint32_t icr = d->regs[E1000_ICR / 4];
	if (icr & d->regs[E1000_IMS / 4])
		icr |= E1000_ICR_ASSERTED;
	d->regs[E1000_ICR / 4] = 0;
	e1000_irq_update(d);
	return icr;
}
