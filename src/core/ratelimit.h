// SPDX-License-Identifier: Apache-2.0
/* Token buckets, as Firecracker's rate limiters: one for bytes and one
 * for operations, each with a size (the capacity, refilled at size per
 * refill_ms milliseconds), a one_time_burst (spent first, never
 * refilled) and the budget, full at the start. A bucket of size 0 or
 * refill_ms 0 is off: it limits nothing.
 *
 * A request that fits in the bucket waits until the tokens exist. One
 * larger than the bucket could never fit: as Firecracker does, it passes
 * at once, emptying the bucket, and the rest becomes a debt that blocks
 * every request until refills have paid it (so nothing wedges and the
 * long-run rate still holds). ratelimit_charge takes tokens the same way
 * for data already moved (a received frame, whose length only its read
 * tells).
 *
 * Pure arithmetic on a clock the caller passes in (nanoseconds, monotonic:
 * tests inject time), 64-bit with 128-bit intermediates and saturation, so
 * no input overflows. Not locked: its owner serializes (devices/throttle.h). */
#ifndef SKIFF_RATELIMIT_H
#define SKIFF_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/opt.h"

enum { RL_BYTES, RL_OPS, RL_NR };

/* Waits are at least this long: with refill_ms >= 1, a bucket cannot
 * overflow in 1 ms, so the floor costs no tokens and bounds timer rate. */
#define RATELIMIT_MIN_WAIT_NS 1000000ull
/* And at most this long: the caller asks again then (no overflow of
 * absolute times for huge refill times). */
#define RATELIMIT_MAX_WAIT_NS 3600000000000ull

struct ratelimit_bucket_cfg {
	uint64_t size, one_time_burst, refill_ms;
};

struct ratelimit_cfg {
	struct ratelimit_bucket_cfg b[RL_NR]; /* RL_BYTES, RL_OPS */
};

struct ratelimit_bucket {
	struct ratelimit_bucket_cfg cfg;
	uint64_t budget, burst, debt;
	uint64_t last_ns; /* refills are counted from here */
};

struct ratelimit {
	struct ratelimit_bucket b[RL_NR];
};

static inline bool ratelimit_bucket_on(const struct ratelimit_bucket_cfg *c)
{
	return c->size && c->refill_ms;
}

/* Every bucket as cfg says (cfg NULL: all off), full at now. */
void ratelimit_init(struct ratelimit *rl, const struct ratelimit_cfg *cfg, uint64_t now);
/* Replaces the buckets whose bit (1 << RL_*) is in mask with new ones,
 * full (Firecracker's update); the others keep their state. */
void ratelimit_update(struct ratelimit *rl, const struct ratelimit_cfg *cfg, unsigned int mask,
		      uint64_t now);
/* Takes ops operations and bytes bytes if both buckets allow now: 0. Else
 * takes nothing and returns how long (ns, within the bounds above) until
 * they might. ops and bytes 0: only whether a debt blocks. */
uint64_t ratelimit_consume(struct ratelimit *rl, uint64_t ops, uint64_t bytes, uint64_t now);
/* The same answer, taking nothing. */
uint64_t ratelimit_check(struct ratelimit *rl, uint64_t ops, uint64_t bytes, uint64_t now);
/* Takes them whatever the budget: what is missing becomes debt. */
void ratelimit_charge(struct ratelimit *rl, uint64_t ops, uint64_t bytes, uint64_t now);
/* True if any bucket is on. */
bool ratelimit_on(const struct ratelimit *rl);

/* A spec key's value "SIZE:REFILL_MS[:ONE_TIME_BURST]" (decimal) into the
 * struct ratelimit_bucket_cfg at o->off: an OPT_CUSTOM parser. */
int ratelimit_opt_parse(const struct opt *o, const char *val, void *target, char *err,
			size_t errlen);
/* The row of such a key for a device's option table. */
#define RATELIMIT_OPT(key, offset, what)                                                           \
	{                                                                                          \
		.name = key, .type = OPT_CUSTOM, .off = (offset), .flags = OPT_ONCE,               \
		.parse = ratelimit_opt_parse, .metavar = "SIZE:MS[:BURST]", .help = what           \
	}
/* ",KEY=SIZE:MS:BURST" for an enabled bucket, "" for one that is off:
 * the spec text ratelimit_opt_parse reads back. */
void ratelimit_opt_format(const char *key, const struct ratelimit_bucket_cfg *c, char *out,
			  size_t len);

#endif
