// SPDX-License-Identifier: Apache-2.0
#include "iothread/poll_policy.h"

#include <string.h>

void poll_policy_default(struct poll_policy *p)
{
	p->mode = POLL_OFF;
	p->start_kicks = POLL_DEFAULT_START_KICKS;
	p->window_ns = POLL_DEFAULT_WINDOW_NS;
	p->idle_ns = POLL_DEFAULT_IDLE_NS;
	p->max_ns = POLL_DEFAULT_MAX_NS;
}

int poll_mode_parse(const char *s, enum poll_mode *out)
{
	if (!strcmp(s, "off"))
		*out = POLL_OFF;
	else if (!strcmp(s, "adaptive"))
		*out = POLL_ADAPTIVE;
	else if (!strcmp(s, "always"))
		*out = POLL_ALWAYS;
	else
		return -1;
	return 0;
}

bool poll_on_kick(struct poll_state *st, const struct poll_policy *p, uint64_t now)
{
	counter_add(&st->kicks, 1);
	if (st->polling || p->mode == POLL_OFF)
		return false;
	if (p->mode == POLL_ALWAYS)
		return true;
	if (now < st->holdoff_until_ns)
		return false;
	if (now - st->window_start_ns > p->window_ns) {
		st->window_start_ns = now;
		st->window_kicks = 0;
	}
	return ++st->window_kicks >= p->start_kicks;
}

void poll_start(struct poll_state *st, uint64_t now)
{
	st->polling = true;
	st->started_ns = now;
	st->last_work_ns = now;
	st->window_kicks = 0;
	st->share_wall_ns = 0;
	counter_add(&st->starts, 1);
}

bool poll_after_iteration(struct poll_state *st, const struct poll_policy *p, uint64_t now,
			  bool had_work)
{
	if (had_work) {
		counter_add(&st->iters_work, 1);
		st->last_work_ns = now;
	} else {
		counter_add(&st->iters_empty, 1);
	}
	if (p->mode == POLL_ALWAYS)
		return false;
	if (now - st->last_work_ns >= p->idle_ns) {
		counter_add(&st->stops_idle, 1);
		st->polling = false;
		return true;
	}
	if (now - st->started_ns >= p->max_ns) {
		counter_add(&st->stops_cap, 1);
		st->polling = false;
		return true;
	}
	return false;
}

bool poll_share_due(const struct poll_state *st, const struct poll_policy *p, uint64_t now)
{
	return p->mode == POLL_ADAPTIVE && st->polling &&
	       (!st->share_wall_ns || now - st->share_wall_ns >= POLL_SHARE_WINDOW_NS);
}

bool poll_share_check(struct poll_state *st, uint64_t now, uint64_t cpu_now)
{
	uint64_t wall = now - st->share_wall_ns, cpu = cpu_now - st->share_cpu_ns;
	bool first = !st->share_wall_ns;
	st->share_wall_ns = now;
	st->share_cpu_ns = cpu_now;
	if (first || !wall)
		return false;
	if (cpu * 100 >= wall * POLL_SHARE_MIN_PCT) {
		st->holdoff_ns = 0; /* a full window with its CPU: forgiven */
		return false;
	}
	st->holdoff_ns = st->holdoff_ns ? st->holdoff_ns * 2 : POLL_HOLDOFF_MIN_NS;
	if (st->holdoff_ns > POLL_HOLDOFF_MAX_NS)
		st->holdoff_ns = POLL_HOLDOFF_MAX_NS;
	st->holdoff_until_ns = now + st->holdoff_ns;
	counter_add(&st->stops_contended, 1);
	st->polling = false;
	return true;
}

void poll_resume(struct poll_state *st, uint64_t now)
{
	st->polling = true;
	st->last_work_ns = now;
	/* The cap restarts: this is a new polling period that found work. */
	st->started_ns = now;
}
