// SPDX-License-Identifier: Apache-2.0
/* Adaptive polling policy for a virtqueue served by an I/O thread: start
 * polling when kicks arrive faster than a threshold, stop after a short idle
 * time or a cap on continuous polling. While polling, guest notifications
 * are suppressed; when polling stops they are re-enabled and the ring
 * re-checked (the caller's job, see iothread_poller). Pure logic on
 * timestamps, so it is unit-tested without threads. */
#ifndef SKIFF_POLL_POLICY_H
#define SKIFF_POLL_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "core/counter.h"

enum poll_mode { POLL_OFF, POLL_ADAPTIVE, POLL_ALWAYS };

/* Defaults. poll-idle: the largest window the poll-idle sweep in
 * docs/bench/2026-11-30-sweep-idle found free for streams (its 1 ms point
 * at the testbed's ~20x slow guest time); longer windows cost CPU and
 * small-packet rate. */
#define POLL_DEFAULT_START_KICKS 4
#define POLL_DEFAULT_WINDOW_NS	 1000000ULL  /* kicks counted within 1 ms */
#define POLL_DEFAULT_IDLE_NS	 50000ULL    /* stop after 50 us without work */
#define POLL_DEFAULT_MAX_NS	 20000000ULL /* yield after 20 ms of continuous polling */

/* Contention: while polling, every POLL_SHARE_WINDOW_NS the share of wall
 * time the poller really ran is sampled. Below POLL_SHARE_MIN_PCT another
 * runnable thread shares its CPU (often the vCPU whose work it waits for),
 * and spinning only takes that CPU away: adaptive polling stops and does
 * not start again for a hold-off that doubles with each such stop. */
#define POLL_SHARE_WINDOW_NS 1000000ULL
#define POLL_SHARE_MIN_PCT   50
#define POLL_HOLDOFF_MIN_NS  10000000ULL   /* 10 ms */
#define POLL_HOLDOFF_MAX_NS  1000000000ULL /* 1 s */

struct poll_policy {
	enum poll_mode mode;
	unsigned int start_kicks; /* poll-start=K */
	uint64_t window_ns;
	uint64_t idle_ns; /* poll-idle=USEC */
	uint64_t max_ns;  /* cap on one continuous polling period (adaptive only) */
};

struct poll_state {
	bool polling;
	uint64_t window_start_ns;
	unsigned int window_kicks;
	uint64_t last_work_ns;
	uint64_t started_ns;
	uint64_t share_wall_ns, share_cpu_ns; /* start of the share sample; 0: none */
	uint64_t holdoff_ns, holdoff_until_ns;
	/* counters, published for exit accounting */
	counter_t kicks, starts, stops_idle, stops_cap, stops_contended, iters_work, iters_empty;
};

void poll_policy_default(struct poll_policy *p);
/* Parses "off", "adaptive", "always"; -1 if none of them. */
int poll_mode_parse(const char *s, enum poll_mode *out);

/* A kick arrived at `now`. Returns true if polling should start. */
bool poll_on_kick(struct poll_state *st, const struct poll_policy *p, uint64_t now);
/* Polling starts (after the caller disabled notifications). */
void poll_start(struct poll_state *st, uint64_t now);
/* One polling iteration ended at `now`, having found work or not. Returns
 * true if polling should stop (the caller then re-enables notifications and
 * re-checks the ring, calling poll_resume if work arrived meanwhile). */
bool poll_after_iteration(struct poll_state *st, const struct poll_policy *p, uint64_t now,
			  bool had_work);
/* Whether a contention sample is due at `now` (adaptive polling only). */
bool poll_share_due(const struct poll_state *st, const struct poll_policy *p, uint64_t now);
/* The sample: cpu_now is the poller thread's CPU time. Returns true if
 * polling should stop because the poller did not get its CPU (the caller
 * then stops as after poll_after_iteration). */
bool poll_share_check(struct poll_state *st, uint64_t now, uint64_t cpu_now);
/* Work arrived between the decision to stop and re-enabling notifications:
 * keep polling. */
void poll_resume(struct poll_state *st, uint64_t now);

#endif
