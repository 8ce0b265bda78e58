/* Exit accounting: per-register counting through the trap table, unclaimed
 * addresses, sorting, published counters. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "core/bus.h"
#include "stats/counters.h"
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

static void test_counters_registry(void **state)
{
	(void)state;
	static uint64_t kicks = 7;
	unsigned int before = counters_count();
	counters_register("dev0 q1 kicks", &kicks);
	assert_int_equal(counters_count(), before + 1);
	assert_string_equal(counters_name(before), "dev0 q1 kicks");
	kicks = 9;
	assert_int_equal(counters_value(before), 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sites_by_register),
	    cmocka_unit_test(test_sites_table_full),
	    cmocka_unit_test(test_counters_registry),
	};
	return cmocka_run_group_tests_name("stats", tests, NULL, NULL);
}
