// SPDX-License-Identifier: Apache-2.0
/* Rate limiters: the token bucket (core/ratelimit.c) on an injected clock
 * (burst, refill, a request larger than the bucket, update, off), the
 * spec keys that carry a limiter to a device, and Firecracker's
 * RateLimiter objects in the API model (types, unknown fields, the
 * --disk / --net spec they become, GET /vm/config). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "api/api_fc.h"
#include "api/api_json.h"
#include "api/api_model.h"
#include "core/ratelimit.h"
#include "devices/virtio-blk/virtio_blk_spec.h"
#include "devices/virtio-net/virtio_net_spec.h"

#define MS 1000000ull

/* 1000 bytes per 100 ms, 500 more once; ops off. */
static struct ratelimit_cfg bw(uint64_t size, uint64_t burst, uint64_t refill_ms)
{
	struct ratelimit_cfg c = {0};
	c.b[RL_BYTES] = (struct ratelimit_bucket_cfg){size, burst, refill_ms};
	return c;
}

static void test_burst_then_budget(void **state)
{
	(void)state;
	struct ratelimit rl;
	struct ratelimit_cfg c = bw(1000, 500, 100);
	ratelimit_init(&rl, &c, 0);
	/* The burst first, then the full bucket: 1500 at once, not 1501. */
	assert_int_equal(ratelimit_consume(&rl, 1, 500, 0), 0);
	assert_int_equal(rl.b[RL_BYTES].burst, 0);
	assert_int_equal(rl.b[RL_BYTES].budget, 1000);
	assert_int_equal(ratelimit_consume(&rl, 1, 1000, 0), 0);
	uint64_t w = ratelimit_consume(&rl, 1, 1, 0);
	assert_true(w >= RATELIMIT_MIN_WAIT_NS);
	assert_int_equal(rl.b[RL_BYTES].budget, 0); /* a refusal takes nothing */
	/* The burst never comes back: after a full refill, 1000 again. */
	assert_int_equal(ratelimit_consume(&rl, 1, 1000, 1000 * MS), 0);
	assert_int_not_equal(ratelimit_consume(&rl, 1, 1, 1000 * MS), 0);
}

static void test_refill_rate(void **state)
{
	(void)state;
	struct ratelimit rl;
	struct ratelimit_cfg c = bw(1000, 0, 100);
	ratelimit_init(&rl, &c, 0);
	assert_int_equal(ratelimit_consume(&rl, 0, 1000, 0), 0);
	/* 10 bytes per ms: 250 bytes need 25 ms, said up front. */
	assert_int_equal(ratelimit_consume(&rl, 0, 250, 0), 25 * MS);
	assert_int_not_equal(ratelimit_consume(&rl, 0, 250, 24 * MS), 0);
	assert_int_equal(ratelimit_consume(&rl, 0, 250, 25 * MS), 0);
	/* Fractions are not lost to frequent calls: 100 calls 0.15 ms apart
	 * (1.5 bytes each) earn 150 bytes. */
	uint64_t t = 25 * MS;
	for (int i = 0; i < 100; i++) {
		t += 150000;
		ratelimit_consume(&rl, 0, 0, t);
	}
	assert_int_equal(rl.b[RL_BYTES].budget, 150);
	/* Never more than the size, however long it waits. */
	assert_int_equal(ratelimit_consume(&rl, 0, 0, 3600000 * MS), 0);
	assert_int_equal(rl.b[RL_BYTES].budget, 1000);
}

/* Larger than the bucket: it passes (it could never fit), and its rest
 * is a debt that blocks everything until repaid. */
static void test_oversize(void **state)
{
	(void)state;
	struct ratelimit rl;
	struct ratelimit_cfg c = bw(1000, 0, 100);
	ratelimit_init(&rl, &c, 0);
	assert_int_equal(ratelimit_consume(&rl, 1, 4000, 0), 0);
	assert_int_equal(rl.b[RL_BYTES].debt, 3000);
	assert_int_equal(ratelimit_consume(&rl, 1, 1, 0), 300 * MS);
	assert_int_equal(ratelimit_consume(&rl, 0, 0, 299 * MS), 1 * MS);
	assert_int_equal(ratelimit_consume(&rl, 0, 0, 300 * MS), 0); /* repaid */
	assert_int_not_equal(ratelimit_consume(&rl, 1, 1, 300 * MS), 0);
	assert_int_equal(ratelimit_consume(&rl, 1, 1, 301 * MS), 0);
	/* Even when the bucket is not full, an oversize one passes once no
	 * debt is left. */
	assert_int_equal(ratelimit_consume(&rl, 1, 2000, 301 * MS), 0);
	assert_int_equal(rl.b[RL_BYTES].debt, 2000 - 9);
}

/* Both buckets or neither: an op refused for bytes takes no op. */
static void test_ops_and_bytes(void **state)
{
	(void)state;
	struct ratelimit rl;
	struct ratelimit_cfg c = bw(100, 0, 10);
	c.b[RL_OPS] = (struct ratelimit_bucket_cfg){2, 0, 10};
	ratelimit_init(&rl, &c, 0);
	assert_int_equal(ratelimit_consume(&rl, 1, 60, 0), 0);
	assert_int_not_equal(ratelimit_consume(&rl, 1, 60, 0), 0);
	assert_int_equal(rl.b[RL_OPS].budget, 1);
	assert_int_equal(ratelimit_consume(&rl, 1, 40, 0), 0);
	assert_int_not_equal(ratelimit_consume(&rl, 1, 0, 0), 0); /* out of ops */
}

static void test_update_and_off(void **state)
{
	(void)state;
	struct ratelimit rl;
	ratelimit_init(&rl, NULL, 0);
	assert_false(ratelimit_on(&rl));
	assert_int_equal(ratelimit_consume(&rl, UINT64_MAX, UINT64_MAX, 0), 0);
	struct ratelimit_cfg c = bw(10, 0, 1000);
	ratelimit_update(&rl, &c, 1u << RL_BYTES, 5);
	assert_true(ratelimit_on(&rl));
	assert_int_equal(ratelimit_consume(&rl, 1, 10, 5), 0);
	assert_int_not_equal(ratelimit_consume(&rl, 1, 10, 5), 0);
	/* An update starts the bucket afresh, full; bits not in the mask
	 * keep theirs. */
	struct ratelimit_cfg d = bw(20, 0, 1000);
	ratelimit_update(&rl, &d, 1u << RL_OPS, 5);
	assert_int_not_equal(ratelimit_consume(&rl, 1, 10, 5), 0);
	ratelimit_update(&rl, &d, 1u << RL_BYTES, 5);
	assert_int_equal(ratelimit_consume(&rl, 1, 20, 5), 0);
	/* size 0 or refill 0: off. */
	struct ratelimit_cfg z = bw(0, 0, 1000), r0 = bw(10, 0, 0);
	ratelimit_update(&rl, &z, 1u << RL_BYTES, 5);
	assert_false(ratelimit_on(&rl));
	ratelimit_update(&rl, &r0, 1u << RL_BYTES, 5);
	assert_false(ratelimit_on(&rl));
	assert_int_equal(ratelimit_consume(&rl, 1, 1000, 5), 0);
	assert_int_equal(ratelimit_consume(&rl, 1, 1000, 5), 0);
}

/* Client-sized values: no overflow, waits within bounds, no wedge. */
static void test_huge_values(void **state)
{
	(void)state;
	struct ratelimit rl;
	struct ratelimit_cfg c = bw(INT64_MAX, INT64_MAX, INT64_MAX);
	ratelimit_init(&rl, &c, 0);
	assert_int_equal(ratelimit_consume(&rl, 0, UINT64_MAX, 0), 0);
	assert_int_equal(rl.b[RL_BYTES].debt, 1); /* 2^64-1 - 2 * (2^63-1) */
	assert_int_equal(ratelimit_consume(&rl, 0, 1, 0), RATELIMIT_MIN_WAIT_NS);
	assert_int_equal(ratelimit_consume(&rl, 0, 1, UINT64_MAX), 0);
	struct ratelimit_cfg one = bw(1, 0, INT64_MAX);
	ratelimit_init(&rl, &one, 0);
	ratelimit_charge(&rl, UINT64_MAX, UINT64_MAX, 0);
	ratelimit_charge(&rl, UINT64_MAX, UINT64_MAX, 0); /* debt saturates */
	assert_int_equal(rl.b[RL_BYTES].debt, UINT64_MAX);
	assert_int_equal(ratelimit_consume(&rl, 0, 0, 0), RATELIMIT_MAX_WAIT_NS);
	/* A debt whose wait would wrap 128 bits (2^63 * 2^65 * 15625): the
	 * longest wait, not a short one. */
	struct ratelimit_cfg wrap = bw(1, 0, 1ull << 59);
	ratelimit_init(&rl, &wrap, 0);
	ratelimit_charge(&rl, 0, (1ull << 63) + 1, 0);
	assert_int_equal(ratelimit_consume(&rl, 0, 0, 0), RATELIMIT_MAX_WAIT_NS);
	struct ratelimit_cfg fast = bw(UINT64_MAX, 0, 1);
	ratelimit_init(&rl, &fast, 0);
	ratelimit_charge(&rl, 0, UINT64_MAX, 0);
	assert_int_equal(ratelimit_consume(&rl, 0, 1, 0), RATELIMIT_MIN_WAIT_NS);
	assert_int_equal(ratelimit_consume(&rl, 0, UINT64_MAX, UINT64_MAX / 2), 0);
}

static void test_spec_keys(void **state)
{
	(void)state;
	static struct blk_spec b;
	static struct net_spec n;
	char err[200], buf[96];
	assert_int_equal(blk_spec_parse("/img,bw=1000:100:50,ops=10:1000", &b, err, sizeof(err)),
			 0);
	assert_int_equal(b.rl.b[RL_BYTES].size, 1000);
	assert_int_equal(b.rl.b[RL_BYTES].refill_ms, 100);
	assert_int_equal(b.rl.b[RL_BYTES].one_time_burst, 50);
	assert_int_equal(b.rl.b[RL_OPS].size, 10);
	/* What the API writes, the parser reads back. */
	ratelimit_opt_format("bw", &b.rl.b[RL_BYTES], buf, sizeof(buf));
	assert_string_equal(buf, ",bw=1000:100:50");
	static const char *const bad[] = {"/img,bw=1",
					  "/img,bw=1:2:3:4",
					  "/img,bw=a:1",
					  "/img,bw=1::2",
					  "/img,bw=-1:5",
					  "/img,bw=1:1,bw=1:1",
					  "/img,bw=99999999999999999999:1"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(blk_spec_parse(bad[i], &b, err, sizeof(err)), -1);
	assert_int_equal(net_spec_parse("tap=t0,rx-bw=1:1,tx-ops=2:2", &n, err, sizeof(err)), 0);
	assert_true(net_spec_limited(&n));
	assert_int_equal(n.tx_rl.b[RL_OPS].size, 2);
	struct ratelimit_bucket_cfg off = {0, 5, 5};
	ratelimit_opt_format("bw", &off, buf, sizeof(buf));
	assert_string_equal(buf, "");
}

static int fill(const struct api_object *o, const char *text, void *t, char *err)
{
	return api_json_fill_text(o, text, strlen(text), t, err, 300);
}

/* A drive or an interface (their kinds' rows) from JSON. */
static int fill_entry(const char *section, const char *text, struct dev_api_res *r, char *err)
{
	return fc_res_fill_text(fc_kind_by_section(section), text, strlen(text), r, err, 300);
}

/* The entry's spec, and its kind's own check first (0, or -1). */
static int entry_spec(const char *section, const struct dev_api_res *r, char *spec, char *err)
{
	const struct dm_kind *k = fc_kind_by_section(section);
	struct devmgr_arg a;
	if (k->api->check(r, false, err, 300) < 0)
		return -1;
	assert_int_equal(fc_res_arg(k, r, spec, FC_RES_SPEC_MAX, &a, err, 300), 0);
	return 0;
}

static void test_api_objects(void **state)
{
	(void)state;
	static struct dev_api_res d, n;
	char err[300], spec[FC_RES_SPEC_MAX];
	const char *ok = "{\"drive_id\":\"r\",\"path_on_host\":\"/r\",\"is_root_device\":true,"
			 "\"io_engine\":\"Async\",\"rate_limiter\":{\"bandwidth\":{\"size\":1000,"
			 "\"one_time_burst\":10,\"refill_time\":100},\"ops\":{\"size\":0,"
			 "\"refill_time\":1}}}";
	assert_int_equal(fill_entry("drives", ok, &d, err), 0);
	assert_int_equal(entry_spec("drives", &d, spec, err), 0);
	/* ops of size 0 is given but off: no key. The path goes apart, typed
	 * (issue 32.3). */
	assert_string_equal(spec, "aio=io_uring,bw=1000:100:10");
	struct json_object *o = fc_res_json(fc_kind_by_section("drives"), &d);
	const char *js = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	assert_non_null(strstr(js, "\"rate_limiter\":{\"bandwidth\":{\"size\":1000,"
				   "\"one_time_burst\":10,\"refill_time\":100},\"ops\":{\"size\":0,"
				   "\"one_time_burst\":null,\"refill_time\":1}}"));
	json_object_put(o);
	static const char *const bad[][2] = {
	    {"{\"drive_id\":\"r\",\"is_root_device\":true,\"rate_limiter\":{\"bandwidth\":"
	     "{\"size\":\"1\",\"refill_time\":1}}}",
	     "invalid type: string, expected u64"},
	    {"{\"drive_id\":\"r\",\"is_root_device\":true,\"rate_limiter\":{\"bandwidth\":"
	     "{\"size\":1,\"refill_time\":1,\"rate\":2}}}",
	     "unknown field `rate`, expected one of `size`, `one_time_burst`, `refill_time`"},
	    {"{\"drive_id\":\"r\",\"is_root_device\":true,\"rate_limiter\":{\"bandwidth\":"
	     "{\"size\":1}}}",
	     "missing field `refill_time`"},
	    {"{\"drive_id\":\"r\",\"is_root_device\":true,\"rate_limiter\":{\"bw\":{}}}",
	     "unknown field `bw`, expected one of `bandwidth`, `ops`"},
	    {"{\"drive_id\":\"r\",\"is_root_device\":true,\"rate_limiter\":[]}",
	     "invalid type: sequence, expected struct RateLimiterConfig"},
	    {"{\"drive_id\":\"r\",\"is_root_device\":true,\"rate_limiter\":{\"ops\":"
	     "{\"size\":-1,\"refill_time\":1}}}",
	     "invalid value: integer `-1`, expected u64"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&d, 0, sizeof(d));
		assert_int_equal(fill_entry("drives", bad[i][0], &d, err), -1);
		if (!strstr(err, bad[i][1]))
			fail_msg("'%s' lacks '%s'", err, bad[i][1]);
	}
	memset(&d, 0, sizeof(d));
	assert_int_equal(
	    fill_entry("drives",
		       "{\"drive_id\":\"r\",\"path_on_host\":\"/r\",\"is_root_device\":true,"
		       "\"io_engine\":\"Fast\"}",
		       &d, err),
	    0);
	assert_int_equal(entry_spec("drives", &d, spec, err), -1);
	assert_non_null(strstr(err, "unknown variant `Fast`, expected `Sync` or `Async`"));
	const char *net =
	    "{\"iface_id\":\"e\",\"host_dev_name\":\"t0\",\"rx_rate_limiter\":{\"ops\":"
	    "{\"size\":5,\"refill_time\":10}},\"tx_rate_limiter\":{\"bandwidth\":"
	    "{\"size\":7,\"refill_time\":20,\"one_time_burst\":3}}}";
	assert_int_equal(fill_entry("network-interfaces", net, &n, err), 0);
	assert_int_equal(entry_spec("network-interfaces", &n, spec, err), 0);
	assert_string_equal(spec, "rx-ops=5:10:0,tx-bw=7:20:3"); /* the tap goes apart */
	/* A PATCH replaces the buckets it gives, and only those. */
	struct dev_api_rl p = {0};
	assert_int_equal(
	    fill(&fc_rate_limiter_obj, "{\"bandwidth\":{\"size\":9,\"refill_time\":9}}", &p, err),
	    0);
	struct dev_api_rl *rx = &n.v[4].rl; /* NetworkInterfaceConfig's rx_rate_limiter */
	assert_string_equal(fc_kind_by_section("network-interfaces")->api->fields[4].name,
			    "rx_rate_limiter");
	fc_rate_limiter_merge(rx, &p);
	assert_int_equal(rx->bandwidth.size, 9);
	assert_int_equal(rx->ops.size, 5);
	struct ratelimit_cfg c;
	unsigned int mask;
	fc_rate_limiter_cfg(&p, &c, &mask);
	assert_int_equal(mask, 1u << RL_BYTES);
	assert_int_equal(c.b[RL_BYTES].refill_ms, 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_burst_then_budget), cmocka_unit_test(test_refill_rate),
	    cmocka_unit_test(test_oversize),	      cmocka_unit_test(test_ops_and_bytes),
	    cmocka_unit_test(test_update_and_off),    cmocka_unit_test(test_huge_values),
	    cmocka_unit_test(test_spec_keys),	      cmocka_unit_test(test_api_objects),
	};
	return cmocka_run_group_tests_name("ratelimit", tests, NULL, NULL);
}
