// SPDX-License-Identifier: Apache-2.0
#include "core/ratelimit.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

typedef unsigned __int128 u128;

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static u128 refill_ns(const struct ratelimit_bucket *b)
{
	return (u128)b->cfg.refill_ms * 1000000u;
}

static void bucket_reset(struct ratelimit_bucket *b, const struct ratelimit_bucket_cfg *c,
			 uint64_t now)
{
	b->cfg = c ? *c : (struct ratelimit_bucket_cfg){0, 0, 0};
	b->budget = b->cfg.size;
	b->burst = b->cfg.one_time_burst;
	b->debt = 0;
	b->last_ns = now;
}

/* Adds the tokens earned since last_ns, debt first. last_ns moves only by
 * the time those whole tokens took, so fractions are not lost between
 * frequent calls. elapsed * size < 2^128, and tok * refill_ns is at most
 * that: no intermediate overflows. */
static void bucket_refill(struct ratelimit_bucket *b, uint64_t now)
{
	if (!ratelimit_bucket_on(&b->cfg) || now <= b->last_ns)
		return;
	u128 tok = (u128)(now - b->last_ns) * b->cfg.size / refill_ns(b);
	uint64_t room = sat_add(b->debt, b->cfg.size - b->budget);
	if (tok >= room) {
		b->debt = 0;
		b->budget = b->cfg.size;
		b->last_ns = now; /* full: time spent full earns nothing */
		return;
	}
	b->last_ns += (uint64_t)(tok * refill_ns(b) / b->cfg.size);
	uint64_t t = (uint64_t)tok, pay = t < b->debt ? t : b->debt;
	b->debt -= pay;
	b->budget += t - pay;
}

/* How long until deficit more tokens exist, rounded up, within bounds. */
static uint64_t bucket_wait(const struct ratelimit_bucket *b, uint64_t deficit)
{
	u128 r = refill_ns(b), ns;
	if (deficit > ((u128)-1) / r)
		return RATELIMIT_MAX_WAIT_NS;
	ns = ((u128)deficit * r + b->cfg.size - 1) / b->cfg.size;
	if (ns < RATELIMIT_MIN_WAIT_NS)
		return RATELIMIT_MIN_WAIT_NS;
	return ns > RATELIMIT_MAX_WAIT_NS ? RATELIMIT_MAX_WAIT_NS : (uint64_t)ns;
}

/* 0 if n tokens may be taken now (fitting, or larger than the bucket and
 * no debt; n 0: no debt), else the wait. */
static uint64_t bucket_check(struct ratelimit_bucket *b, uint64_t n, uint64_t now)
{
	if (!ratelimit_bucket_on(&b->cfg))
		return 0;
	bucket_refill(b, now);
	if (b->debt)
		return bucket_wait(b, b->debt);
	if (!n)
		return 0;
	uint64_t rem = n - (n < b->burst ? n : b->burst);
	if (rem <= b->budget || rem > b->cfg.size)
		return 0;
	return bucket_wait(b, rem - b->budget);
}

static void bucket_take(struct ratelimit_bucket *b, uint64_t n, uint64_t now)
{
	if (!ratelimit_bucket_on(&b->cfg) || !n)
		return;
	bucket_refill(b, now);
	uint64_t from_burst = n < b->burst ? n : b->burst;
	b->burst -= from_burst;
	n -= from_burst;
	uint64_t from_budget = n < b->budget ? n : b->budget;
	b->budget -= from_budget;
	b->debt = sat_add(b->debt, n - from_budget);
}

void ratelimit_init(struct ratelimit *rl, const struct ratelimit_cfg *cfg, uint64_t now)
{
	for (int i = 0; i < RL_NR; i++)
		bucket_reset(&rl->b[i], cfg ? &cfg->b[i] : NULL, now);
}

void ratelimit_update(struct ratelimit *rl, const struct ratelimit_cfg *cfg, unsigned int mask,
		      uint64_t now)
{
	for (int i = 0; i < RL_NR; i++)
		if (mask & (1u << i))
			bucket_reset(&rl->b[i], &cfg->b[i], now);
}

uint64_t ratelimit_check(struct ratelimit *rl, uint64_t ops, uint64_t bytes, uint64_t now)
{
	uint64_t w_ops = bucket_check(&rl->b[RL_OPS], ops, now);
	uint64_t w_bytes = bucket_check(&rl->b[RL_BYTES], bytes, now);
	return w_ops > w_bytes ? w_ops : w_bytes;
}

uint64_t ratelimit_consume(struct ratelimit *rl, uint64_t ops, uint64_t bytes, uint64_t now)
{
	uint64_t w = ratelimit_check(rl, ops, bytes, now);
	if (!w)
		ratelimit_charge(rl, ops, bytes, now);
	return w;
}

void ratelimit_charge(struct ratelimit *rl, uint64_t ops, uint64_t bytes, uint64_t now)
{
	bucket_take(&rl->b[RL_OPS], ops, now);
	bucket_take(&rl->b[RL_BYTES], bytes, now);
}

bool ratelimit_on(const struct ratelimit *rl)
{
	for (int i = 0; i < RL_NR; i++)
		if (ratelimit_bucket_on(&rl->b[i].cfg))
			return true;
	return false;
}

int ratelimit_opt_parse(const struct opt *o, const char *val, void *target, char *err,
			size_t errlen)
{
	struct ratelimit_bucket_cfg *c = (void *)((char *)target + o->off);
	long v[3] = {0, 0, 0};
	int n = 0;
	for (const char *p = val;;) {
		const char *end = strchr(p, ':');
		size_t l = end ? (size_t)(end - p) : strlen(p);
		char num[24];
		if (n == 3 || l >= sizeof(num))
			goto bad;
		memcpy(num, p, l);
		num[l] = '\0';
		if (parse_int(num, 0, LONG_MAX, &v[n++]) < 0)
			goto bad;
		if (!end)
			break;
		p = end + 1;
	}
	if (n < 2)
		goto bad;
	*c = (struct ratelimit_bucket_cfg){(uint64_t)v[0], (uint64_t)v[2], (uint64_t)v[1]};
	return 0;
bad:
	snprintf(err, errlen, "invalid %s=%s (SIZE:REFILL_MS[:ONE_TIME_BURST], decimal)", o->name,
		 val);
	return -1;
}

void ratelimit_opt_format(const char *key, const struct ratelimit_bucket_cfg *c, char *out,
			  size_t len)
{
	if (!ratelimit_bucket_on(c)) {
		snprintf(out, len, "%s", "");
		return;
	}
	snprintf(out, len, ",%s=%llu:%llu:%llu", key, (unsigned long long)c->size,
		 (unsigned long long)c->refill_ms, (unsigned long long)c->one_time_burst);
}
