/* Core helpers: size and option parsing, the I/O thread a device gets, the
 * guest-address helper, the trap table, the console escape. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/opts.h"
#include "core/bus.h"
#include "core/console.h"
#include "core/guest_mem.h"
#include "core/machine.h"
#include "iothread/iothread.h"

static void test_parse_size(void **state)
{
	(void)state;
	uint64_t v;
	assert_int_equal(parse_size("256M", &v), 0);
	assert_int_equal(v, 256ULL << 20);
	assert_int_equal(parse_size("2G", &v), 0);
	assert_int_equal(v, 2ULL << 30);
	assert_int_equal(parse_size("2g", &v), 0);
	assert_int_equal(parse_size("512", &v), 0); /* bare number: MiB */
	assert_int_equal(v, 512ULL << 20);
	assert_int_equal(parse_size("64K", &v), 0);
	assert_int_equal(v, 64ULL << 10);
	assert_int_equal(parse_size("1GiB", &v), 0);
	assert_int_equal(v, 1ULL << 30);
	assert_int_equal(parse_size("12Q", &v), -1);
	assert_int_equal(parse_size("", &v), -1);
	assert_int_equal(parse_size("-1G", &v), -1);
	assert_int_equal(parse_size("G", &v), -1);
	assert_int_equal(parse_size("1GG", &v), -1);
	assert_int_equal(parse_size("99999999999999999999", &v), -1);
	assert_int_equal(parse_size("17179869184T", &v), -1); /* overflows 64 bits */
	assert_int_equal(parse_size(NULL, &v), -1);
}

static int parse(const char *const *args, int n, struct run_opts *o, char *err)
{
	char *argv[16];
	for (int i = 0; i < n; i++)
		argv[i] = (char *)args[i];
	return run_opts_parse(n, argv, o, err, 256);
}

static void test_run_opts(void **state)
{
	(void)state;
	struct run_opts o;
	char err[256];
	const char *ok[] = {"run", "--kernel", "k", "--mem", "1G", "--cpus", "4", "--initrd", "i"};
	assert_int_equal(parse(ok, 9, &o, err), 0);
	assert_string_equal(o.kernel, "k");
	assert_int_equal(o.mem, 1ULL << 30);
	assert_int_equal(o.cpus, 4);
	assert_string_equal(o.cmdline, OPTS_DEFAULT_CMDLINE);

	const char *mem0[] = {"run", "--kernel", "k", "--mem", "0"};
	assert_int_equal(parse(mem0, 5, &o, err), -1);
	assert_non_null(strstr(err, "--mem"));
	const char *memq[] = {"run", "--kernel", "k", "--mem", "12Q"};
	assert_int_equal(parse(memq, 5, &o, err), -1);
	const char *cpus0[] = {"run", "--kernel", "k", "--cpus", "0"};
	assert_int_equal(parse(cpus0, 5, &o, err), -1);
	assert_non_null(strstr(err, "--cpus"));
	const char *cpusx[] = {"run", "--kernel", "k", "--cpus", "2x"};
	assert_int_equal(parse(cpusx, 5, &o, err), -1);
	const char *unknown[] = {"run", "--kernel", "k", "--frobnicate"};
	assert_int_equal(parse(unknown, 4, &o, err), -1);
	assert_non_null(strstr(err, "--frobnicate"));
	const char *nokernel[] = {"run", "--mem", "1G"};
	assert_int_equal(parse(nokernel, 3, &o, err), -1);
	assert_non_null(strstr(err, "kernel"));
	const char *noval[] = {"run", "--kernel"};
	assert_int_equal(parse(noval, 2, &o, err), -1);
	assert_non_null(strstr(err, "needs a value"));
	const char *extra[] = {"run", "--kernel", "k", "stray"};
	assert_int_equal(parse(extra, 4, &o, err), -1);
}

static void test_run_opts_iothreads(void **state)
{
	(void)state;
	struct run_opts o;
	char err[256];
	const char *dflt[] = {"run", "--kernel", "k"};
	assert_int_equal(parse(dflt, 3, &o, err), 0);
	assert_int_equal(o.iothreads, 1);
	const char *four[] = {"run", "--kernel", "k", "--iothreads", "4"};
	assert_int_equal(parse(four, 5, &o, err), 0);
	assert_int_equal(o.iothreads, 4);
	const char *max[] = {"run", "--kernel", "k", "--iothreads", "8"};
	assert_int_equal(parse(max, 5, &o, err), 0);
	assert_int_equal(o.iothreads, IOTHREAD_MAX);
	static const char *const bad[] = {"0", "9", "abc", "", "-1", "2x", "99999999999999999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *args[] = {"run", "--kernel", "k", "--iothreads", bad[i]};
		err[0] = '\0';
		assert_int_equal(parse(args, 5, &o, err), -1);
		assert_non_null(strstr(err, "invalid --iothreads"));
		assert_non_null(strstr(err, "use 1 to 8"));
		assert_null(strchr(err, '\n'));
	}
}

/* Whole devices go round-robin over the I/O threads in the order they are
 * added, disks and network cards alike. */
static void test_machine_iothread_round_robin(void **state)
{
	(void)state;
	struct iothread io[3];
	struct machine m = {.io = io, .nr_io = 3};
	struct iothread *want[] = {&io[0], &io[1], &io[2], &io[0], &io[1]};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		assert_ptr_equal(machine_iothread(&m), want[i]);
		if (i % 2)
			m.nr_nets++;
		else
			m.nr_disks++;
	}
	m.nr_io = 1;
	assert_ptr_equal(machine_iothread(&m), &io[0]);
	struct machine none = {0};
	assert_null(machine_iothread(&none));
}

static void test_guest_mem_ptr_bounds(void **state)
{
	(void)state;
	struct guest_mem gm;
	uint8_t *buf = malloc(1 << 20);
	guest_mem_init(&gm, buf, 1 << 20);
	assert_ptr_equal(guest_mem_ptr(&gm, 0, 1 << 20), buf);
	assert_ptr_equal(guest_mem_ptr(&gm, (1 << 20) - 1, 1), buf + (1 << 20) - 1);
	assert_ptr_equal(guest_mem_ptr(&gm, 1 << 20, 0), buf + (1 << 20));
	assert_null(guest_mem_ptr(&gm, (1 << 20) - 1, 2));
	assert_null(guest_mem_ptr(&gm, 1 << 20, 1));
	assert_null(guest_mem_ptr(&gm, UINT64_MAX, 2)); /* wraps */
	assert_null(guest_mem_ptr(&gm, 16, UINT64_MAX));
	assert_null(guest_mem_ptr(&gm, GUEST_MEM_HIGH_BASE, 1)); /* no high RAM */
	free(buf);
}

static void test_guest_mem_high_region(void **state)
{
	(void)state;
	/* Bookkeeping only: a 4 GiB guest has 3 GiB low and 1 GiB at 4 GiB. */
	struct guest_mem gm;
	guest_mem_init(&gm, (void *)0x10000, 4ULL << 30);
	assert_int_equal(gm.low_size, GUEST_MEM_LOW_MAX);
	assert_non_null(guest_mem_ptr(&gm, GUEST_MEM_LOW_MAX - 8, 8));
	assert_null(guest_mem_ptr(&gm, GUEST_MEM_LOW_MAX - 8, 16)); /* into the hole */
	assert_null(guest_mem_ptr(&gm, 0xfee00000, 4));		    /* LAPIC */
	assert_ptr_equal(guest_mem_ptr(&gm, GUEST_MEM_HIGH_BASE, 8),
			 (uint8_t *)0x10000 + GUEST_MEM_LOW_MAX);
	assert_non_null(guest_mem_ptr(&gm, (5ULL << 30) - 8, 8));
	assert_null(guest_mem_ptr(&gm, (5ULL << 30) - 8, 9));
}

static int hits;
static void count_handler(void *opaque, struct bus_access *acc)
{
	(void)opaque;
	hits++;
	if (!acc->is_write)
		acc->data[0] = (uint8_t)acc->offset;
}

static void test_bus_dispatch(void **state)
{
	(void)state;
	struct bus bus;
	bus_init(&bus);
	struct bus_region a = {.base = 0x3f8, .len = 8, .handler = count_handler, .name = "a"};
	struct bus_region b = {.base = 0x100, .len = 4, .handler = count_handler, .name = "b"};
	struct bus_region overlap = {.base = 0x3fc, .len = 8, .handler = count_handler};
	struct bus_region empty = {.base = 0x10, .len = 0, .handler = count_handler};
	struct bus_region wrap = {.base = UINT64_MAX, .len = 2, .handler = count_handler};
	assert_int_equal(bus_register(&bus, BUS_PIO, &a), 0);
	assert_int_equal(bus_register(&bus, BUS_PIO, &b), 0);
	assert_int_equal(bus_register(&bus, BUS_PIO, &overlap), -EEXIST);
	assert_int_equal(bus_register(&bus, BUS_PIO, &empty), -EINVAL);
	assert_int_equal(bus_register(&bus, BUS_MMIO, &wrap), -EINVAL);
	uint8_t d = 0;
	hits = 0;
	assert_true(bus_dispatch(&bus, BUS_PIO, 0x3fd, &d, 1, false, 0));
	assert_int_equal(d, 5);
	assert_true(bus_dispatch(&bus, BUS_PIO, 0x100, &d, 1, true, 0));
	assert_int_equal(hits, 2);
	uint32_t w = 0;
	assert_false(bus_dispatch(&bus, BUS_PIO, 0x400, &w, 4, false, 0));
	assert_int_equal(w, 0xffffffff); /* unclaimed reads are all ones */
	assert_false(bus_dispatch(&bus, BUS_PIO, 0x80, &d, 1, true, 0));
	assert_int_equal(bus.space[BUS_PIO].unclaimed_reads, 1);
	assert_int_equal(bus.space[BUS_PIO].unclaimed_writes, 1);
	assert_false(bus_dispatch(&bus, BUS_MMIO, 0x3f8, &d, 1, true, 0)); /* other space */
	struct bus_region found;
	assert_true(bus_find(&bus, BUS_PIO, 0x3ff, &found));
	assert_string_equal(found.name, "a");
	assert_int_equal(bus_unregister(&bus, BUS_PIO, 0x3f8, NULL), 0);
	assert_false(bus_find(&bus, BUS_PIO, 0x3ff, &found));
	assert_int_equal(bus_unregister(&bus, BUS_PIO, 0x3f8, NULL), -ENOENT);
	bus_destroy(&bus);
}

static void test_bus_many_regions_sorted(void **state)
{
	(void)state;
	struct bus bus;
	bus_init(&bus);
	/* registered out of order, more than the initial capacity */
	for (int i = 40; i >= 0; i--) {
		struct bus_region r = {
		    .base = (uint64_t)i * 0x10, .len = 8, .handler = count_handler};
		assert_int_equal(bus_register(&bus, BUS_MMIO, &r), 0);
	}
	for (int i = 0; i <= 40; i++) {
		uint8_t d;
		assert_true(bus_dispatch(&bus, BUS_MMIO, (uint64_t)i * 0x10 + 7, &d, 1, false, 0));
		assert_false(bus_dispatch(&bus, BUS_MMIO, (uint64_t)i * 0x10 + 8, &d, 1, false, 0));
	}
	bus_destroy(&bus);
}

static void test_console_escape(void **state)
{
	(void)state;
	int st = 0;
	uint8_t out[2];
	size_t n;
	assert_int_equal(console_escape_feed(&st, 'a', out, &n), CONSOLE_PASS);
	assert_int_equal(n, 1);
	assert_int_equal(out[0], 'a');
	assert_int_equal(console_escape_feed(&st, CONSOLE_ESCAPE, out, &n), CONSOLE_PASS);
	assert_int_equal(n, 0);
	assert_int_equal(console_escape_feed(&st, CONSOLE_ESCAPE, out, &n), CONSOLE_PASS);
	assert_int_equal(n, 1);
	assert_int_equal(out[0], CONSOLE_ESCAPE);
	console_escape_feed(&st, CONSOLE_ESCAPE, out, &n);
	assert_int_equal(console_escape_feed(&st, 'q', out, &n), CONSOLE_PASS);
	assert_int_equal(n, 2);
	console_escape_feed(&st, CONSOLE_ESCAPE, out, &n);
	assert_int_equal(console_escape_feed(&st, 'x', out, &n), CONSOLE_QUIT);
	assert_int_equal(console_escape_feed(&st, 'x', out, &n), CONSOLE_PASS); /* plain x */
	assert_int_equal(n, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_size),
	    cmocka_unit_test(test_run_opts),
	    cmocka_unit_test(test_run_opts_iothreads),
	    cmocka_unit_test(test_machine_iothread_round_robin),
	    cmocka_unit_test(test_guest_mem_ptr_bounds),
	    cmocka_unit_test(test_guest_mem_high_region),
	    cmocka_unit_test(test_bus_dispatch),
	    cmocka_unit_test(test_bus_many_regions_sorted),
	    cmocka_unit_test(test_console_escape),
	};
	return cmocka_run_group_tests_name("core", tests, NULL, NULL);
}
