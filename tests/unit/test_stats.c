// SPDX-License-Identifier: Apache-2.0
/* Exit accounting: per-register counting through the trap table, unclaimed
 * addresses, sorting, published counters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/bus.h"
#include "core/vm.h"
#include "stats/exit_stats.h"
#include "stats/exit_sites.h"

static void nop_handler(void *opaque, struct bus_access *acc)
{
	(void)opaque;
	(void)acc;
}

static const char *regs(void *opaque, uint64_t offset, bool is_write)
{
	(void)opaque;
	(void)is_write;
	return offset == 0 ? "DATA" : "CTRL";
}

static void test_sites_by_register(void **state)
{
	(void)state;
	struct exit_sites *s = malloc(sizeof(*s));
	exit_sites_init(s);
	struct bus bus;
	bus_init(&bus);
	bus.account = exit_sites_bus_account;
	bus.account_opaque = s;
	struct bus_region r = {
	    .base = 0x100, .len = 2, .handler = nop_handler, .reg_name = regs, .name = "dev0"};
	assert_int_equal(bus_register(&bus, BUS_PIO, &r), 0);
	uint8_t d = 0;
	for (int i = 0; i < 5; i++)
		bus_dispatch(&bus, BUS_PIO, 0x100, &d, 1, true, 0);
	for (int i = 0; i < 3; i++)
		bus_dispatch(&bus, BUS_PIO, 0x101, &d, 1, false, 0);
	bus_dispatch(&bus, BUS_PIO, 0x80, &d, 1, true, 0); /* unclaimed */
	bus_dispatch(&bus, BUS_PIO, 0x80, &d, 1, true, 0);
	bus_dispatch(&bus, BUS_MMIO, 0x100, &d, 1, true, 0); /* other space: unclaimed */

	struct exit_site out[EXIT_SITES_MAX];
	unsigned int n = exit_sites_sorted(s, out, EXIT_SITES_MAX);
	assert_int_equal(n, 4);
	assert_string_equal(out[0].dev, "dev0");
	assert_string_equal(out[0].reg, "DATA");
	assert_true(out[0].is_write);
	assert_int_equal(atomic_load(&out[0].count), 5);
	assert_string_equal(out[1].reg, "CTRL");
	assert_int_equal(atomic_load(&out[1].count), 3);
	assert_null(out[2].dev);
	assert_int_equal(out[2].addr, 0x80);
	assert_int_equal(atomic_load(&out[2].count), 2);
	assert_int_equal(out[3].space, BUS_MMIO);
	bus_destroy(&bus);
	free(s);
}

static void test_sites_table_full(void **state)
{
	(void)state;
	struct exit_sites *s = malloc(sizeof(*s));
	exit_sites_init(s);
	/* More distinct unclaimed addresses than slots: the rest is counted
	 * as overflow, nothing is lost silently or written out of bounds. */
	for (uint64_t a = 0; a < EXIT_SITES_MAX + 10; a++)
		exit_sites_count(s, BUS_MMIO, NULL, NULL, a * 4096, false);
	assert_int_equal(atomic_load(&s->overflow), 10);
	free(s);
}

static void fake_counters(void *opaque, counter_emit_fn emit, void *ctx)
{
	const counter_t *kicks = opaque;
	emit(ctx, "dev0", "q1 kicks", counter_get(kicks));
	emit(ctx, "io0", "wakeups", 3);
}

/* Counters come from their owners when stats are taken, and the three
 * renderings (--stats, --stats-json, the socket) show the same ones. */
static void test_counters_rendered(void **state)
{
	(void)state;
	static struct vm vm; /* no vCPUs */
	static struct exit_sites sites;
	exit_sites_init(&sites);
	counter_t kicks = 0;
	counter_add(&kicks, 9);
	struct exit_stats_src src = {.vm = &vm,
				     .sites = &sites,
				     .wall_s = 1,
				     .counters = fake_counters,
				     .counters_opaque = &kicks};
	void (*render[])(FILE *, const struct exit_stats_src *) = {
	    exit_stats_print, exit_stats_json, exit_stats_flat};
	static const char *const want[][2] = {
	    {"dev0 q1 kicks", "io0 wakeups"},
	    {"\"dev0 q1 kicks\": 9", "\"io0 wakeups\": 3"},
	    {"counter dev0 q1 kicks\t9", "counter io0 wakeups\t3"}};
	for (int i = 0; i < 3; i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		render[i](f, &src);
		fclose(f);
		for (int k = 0; k < 2; k++)
			if (!strstr(buf, want[i][k]))
				fail_msg("rendering %d lacks '%s':\n%s", i, want[i][k], buf);
		free(buf);
	}
}

static void odd_counters(void *opaque, counter_emit_fn emit, void *ctx)
{
	(void)opaque;
	emit(ctx, "dev\"0", "q\\1\nkicks", 7);
	emit(ctx, "io0", "wakeups", 3);
}

/* Issue 32.3: --stats-json is JSON whatever the names hold (json-c
 * escapes them), one counter a line as the testbed's scripts read it. */
static void test_json_escaped(void **state)
{
	(void)state;
	static struct vm vm;
	static struct exit_sites sites;
	exit_sites_init(&sites);
	exit_sites_count(&sites, BUS_MMIO, NULL, NULL, 0x1000, true);
	struct exit_stats_src src = {
	    .vm = &vm, .sites = &sites, .wall_s = 2, .counters = odd_counters};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	exit_stats_json(f, &src);
	fclose(f);
	struct json_object *o = json_tokener_parse(buf);
	if (!o)
		fail_msg("not JSON:\n%s", buf);
	struct json_object *c, *v;
	assert_true(json_object_object_get_ex(o, "counters", &c));
	assert_true(json_object_object_get_ex(c, "dev\"0 q\\1\nkicks", &v));
	assert_int_equal(json_object_get_int64(v), 7);
	assert_true(json_object_object_get_ex(o, "sites", &c));
	assert_int_equal(json_object_array_length(c), 1);
	assert_non_null(strstr(buf, "\n    \"io0 wakeups\": 3"));
	assert_non_null(strstr(buf, "\"op\": \"write\", \"count\": 1 }"));
	json_object_put(o);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sites_by_register),
	    cmocka_unit_test(test_sites_table_full),
	    cmocka_unit_test(test_counters_rendered),
	    cmocka_unit_test(test_json_escaped),
	};
	return cmocka_run_group_tests_name("stats", tests, NULL, NULL);
}
