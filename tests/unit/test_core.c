// SPDX-License-Identifier: Apache-2.0
/* Core helpers: the guest-address helper, the trap table, the console
 * escape. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/bus.h"
#include "core/console.h"
#include "core/guest_mem.h"

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

/* Whether the page at p is mapped (mincore fails with ENOMEM if not). */
static bool page_mapped(const void *p)
{
	unsigned char v;
	return mincore((void *)((uintptr_t)p & ~(uintptr_t)4095), 4096, &v) == 0;
}

static void test_guest_mem_alloc_aligned(void **state)
{
	(void)state;
	/* Sizes that are no multiple of 2 MiB, which no kernel aligns by
	 * itself: KVM could give such a guest no 2 MiB page at all. */
	static const uint64_t sizes[] = {(3ULL << 20) + 4096, 129ULL << 20, (1ULL << 20) + 8192};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct guest_mem gm;
		assert_int_equal(guest_mem_alloc(&gm, sizes[i]), 0);
		assert_int_equal((uintptr_t)gm.host % GUEST_MEM_ALIGN, 0);
		assert_int_equal(gm.size, sizes[i]);
		gm.host[0] = 1;
		gm.host[sizes[i] - 1] = 2;
		/* The head and tail it mapped to get there are given back. */
		assert_true(page_mapped(gm.host) && page_mapped(gm.host + sizes[i] - 1));
		assert_false(page_mapped(gm.host - 1));
		assert_false(page_mapped(gm.host + ((sizes[i] + 4095) & ~4095ULL)));
		guest_mem_free(&gm);
	}
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

static uint32_t seen_len;
static void len_handler(void *opaque, struct bus_access *acc)
{
	(void)opaque;
	seen_len = acc->len;
	if (!acc->is_write)
		memset(acc->data, 0x11, acc->len);
}

/* An access straddling a region's end never reaches the handler: reads
 * are all ones, writes go nowhere. */
static void test_bus_straddling_access(void **state)
{
	(void)state;
	struct bus bus;
	bus_init(&bus);
	struct bus_region a = {.base = 0x3f8, .len = 8, .handler = len_handler};
	assert_int_equal(bus_register(&bus, BUS_PIO, &a), 0);
	uint8_t d[4] = {0};
	seen_len = 0;
	assert_true(bus_dispatch(&bus, BUS_PIO, 0x3fe, d, 4, false, 0));
	assert_int_equal(seen_len, 0);
	assert_memory_equal(d, "\xff\xff\xff\xff", 4);
	assert_true(bus_dispatch(&bus, BUS_PIO, 0x3ff, d, 2, true, 0));
	assert_int_equal(seen_len, 0);
	assert_true(bus_dispatch(&bus, BUS_PIO, 0x3fc, d, 4, false, 0)); /* ends at the end */
	assert_int_equal(seen_len, 4);
	assert_memory_equal(d, "\x11\x11\x11\x11", 4);
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

/* Guest output to a terminal: escape sequences and other controls become
 * visible text; newline, return, tab, backspace and UTF-8 pass. */
static void test_console_sanitize(void **state)
{
	(void)state;
	uint8_t out[64];
	static const uint8_t in[] = "a\x1b]0;pwned\x07"
				    "b\r\n\t\bc\x7f\x9b\xc3\xa9\x00";
	size_t n = console_sanitize(in, sizeof(in) - 1, out);
	static const uint8_t want[] = "a^[]0;pwned^Gb\r\n\t\bc^?\x9b\xc3\xa9^@";
	assert_int_equal(n, sizeof(want) - 1);
	assert_memory_equal(out, want, n);
	assert_null(memchr(out, 0x1b, n));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_guest_mem_ptr_bounds),
	    cmocka_unit_test(test_guest_mem_high_region),
	    cmocka_unit_test(test_guest_mem_alloc_aligned),
	    cmocka_unit_test(test_bus_dispatch),
	    cmocka_unit_test(test_bus_straddling_access),
	    cmocka_unit_test(test_bus_many_regions_sorted),
	    cmocka_unit_test(test_console_escape),
	    cmocka_unit_test(test_console_sanitize),
	};
	return cmocka_run_group_tests_name("core", tests, NULL, NULL);
}
