// SPDX-License-Identifier: Apache-2.0
/* The console's output filter (core/console_filter.h): what a guest's
 * shell and full-screen programs need reaches the terminal, what attacks
 * it does not, whole or split across writes, whatever the guest sends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/console_filter.h"

#define BIG (2 * CONSOLE_STRING_MAX)

/* Filters in (len bytes) in safe mode, in one write and byte by byte; both
 * must give the same; returns the length, output in out. */
static size_t filter_safe(const void *in, size_t len, uint8_t *out)
{
	static uint8_t one[CONSOLE_FILTER_OUT(BIG)];
	struct console_filter f;
	console_filter_init(&f, CONSOLE_FILTER_SAFE);
	size_t n = console_filter_feed(&f, in, len, out);
	assert_true(n <= CONSOLE_FILTER_OUT(len));
	console_filter_init(&f, CONSOLE_FILTER_SAFE);
	size_t m = 0;
	for (size_t i = 0; i < len; i++)
		m += console_filter_feed(&f, (const uint8_t *)in + i, 1, one + m);
	assert_int_equal(m, n);
	assert_memory_equal(one, out, n);
	return n;
}

/* In safe mode, in gives want (both C strings). */
static void expect_safe(const char *in, const char *want)
{
	static uint8_t out[CONSOLE_FILTER_OUT(BIG)];
	size_t n = filter_safe(in, strlen(in), out);
	if (n != strlen(want) || memcmp(out, want, n)) {
		print_error("in:   '%s'\nwant: '%s'\ngot:  '%.*s'\n", in, want, (int)n, out);
		fail();
	}
}

/* What a shell, ls --color, vi and top send, and the cursor-position
 * query (its answer comes back as input): unchanged. */
static void test_safe_keeps_csi(void **state)
{
	(void)state;
	static const char *const kept[] = {
	    "plain text\r\n\tcol\bX\a",
	    "\x1b[0m\x1b[01;34mdir\x1b[0m",
	    "\x1b[6n",
	    "\x1b[?1049h\x1b[H\x1b[2J\x1b[3J\x1b[?25l\x1b[?1049l",
	    "\x1b[38;2;255;0;0mred\x1b[m",
	    "\x1b[1;24r\x1b[5;10H\x1b[K\x1b[2 q",
	    "\x1b"
	    "7\x1b"
	    "8\x1b=\x1b>\x1bM\x1b"
	    "D\x1b"
	    "E\x1bH\x1b"
	    "c",
	    "\x1b(0lqk\x1b(B\x0e\x0f",
	    "\xc3\xa9t\xc3\xa9 \xce\x9b \xe2\x82\xac \xf0\x9f\x98\x80",
	};
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		expect_safe(kept[i], kept[i]);
}

/* String sequences, whatever their terminator, vanish with their body. */
static void test_safe_drops_strings(void **state)
{
	(void)state;
	expect_safe("a\x1b]0;pwned\x07"
		    "b",
		    "ab");
	expect_safe("a\x1b]2;pwned\x1b\\b", "ab");
	expect_safe("a\x1b]52;c;cHduZWQ=\x07"
		    "b",
		    "ab");						     /* clipboard */
	expect_safe("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b", "alinkb"); /* hyperlink */
	expect_safe("a\x1bP$q\"p\x1b\\b", "ab");			     /* DCS */
	expect_safe("a\x1b_apc\x1b\\b\x1b^pm\x1b\\c\x1bXsos\x1b\\d", "abcd");
	expect_safe("a\x1b]0;x\x18"
		    "b\x1b]0;y\x1a"
		    "c",
		    "abc"); /* CAN, SUB cancel */
}

/* ESC inside a sequence starts a new one, as in a terminal. */
static void test_safe_nested_esc(void **state)
{
	(void)state;
	expect_safe("\x1b\x1b[31mr", "\x1b[31mr");
	expect_safe("\x1b]0;title\x1b[31mr", "\x1b[31mr");
	expect_safe("\x1b[31\x1b]0;t\x07x", "x");
	expect_safe("\x1b[1;\x1b[32mg", "\x1b[32mg");
	expect_safe("\x1b(\x1b[1mb", "\x1b[1mb");
}

/* Sequences a guest could use against the terminal or its own input, and
 * malformed ones: dropped whole, nothing left over as text. */
static void test_safe_drops_hostile(void **state)
{
	(void)state;
	expect_safe("a\x1b[21tb\x1b[8;100;100tc", "abc"); /* title report, resize */
	expect_safe("a\x1b%@b\x1b%Gc\x1b#8d\x1b G", "abcd");
	expect_safe("a\x1b(%5b\x1b(Zc", "abc");
	expect_safe("a\x1b[3 1mb", "ab"); /* a parameter after an intermediate */
	expect_safe("a\x1b[3\r1mb", "a\r1mb");
	expect_safe("a\x01\x05\x7f\x1b\x10\x1b\x9b-", "a-");
	uint8_t nul[CONSOLE_FILTER_OUT(3)];
	assert_int_equal(filter_safe("a\0b", 3, nul), 2);
	expect_safe("a\x1bNb\x1bOc", "abc"); /* SS2, SS3: b and c as text */
}

/* 8-bit C1 controls, raw or UTF-8 encoded, and bytes outside well-formed
 * UTF-8 are dropped; UTF-8 text whose bytes include 0x9b passes. */
static void test_safe_c1(void **state)
{
	(void)state;
	expect_safe("a\x9b"
		    "31mb",
		    "a31mb");
	expect_safe("a\x9d"
		    "0;t\x07"
		    "b",
		    "a0;t\x07"
		    "b");
	expect_safe("a\x90\x9c\x9e\x9f\x80"
		    "b",
		    "ab");
	expect_safe("a\xc2\x9b"
		    "31mb",
		    "a31mb");
	expect_safe("a\xe0\x82\x9b"
		    "b",
		    "ab"); /* overlong U+009B */
	expect_safe("a\xc0\xaf\xf5\xff"
		    "b",
		    "ab"); /* never in UTF-8 */
	expect_safe("a\xc3"
		    "b\xe2\x82"
		    "c",
		    "abc"); /* cut short */
	expect_safe("\xce\x9b\xc2\xa0", "\xce\x9b\xc2\xa0");
}

/* An unterminated string is dropped up to the bound, then the filter
 * reads text again; an overlong CSI is dropped up to its final byte. */
static void test_safe_bounds(void **state)
{
	(void)state;
	static uint8_t in[BIG], out[CONSOLE_FILTER_OUT(BIG)];
	memcpy(in, "\x1b]0;", 4);
	memset(in + 4, 'x', BIG - 4);
	size_t n = filter_safe(in, BIG, out);
	assert_int_equal(n, BIG - 2 - CONSOLE_STRING_MAX); /* "0;" is the string's */
	assert_null(memchr(out, 0x1b, n));

	size_t len = 0;
	len += (size_t)sprintf((char *)in, "\x1b[");
	memset(in + len, '1', 2 * CONSOLE_CSI_MAX);
	len += 2 * CONSOLE_CSI_MAX;
	len += (size_t)sprintf((char *)in + len, "mok\x1b[");
	memset(in + len, ';', CONSOLE_CSI_MAX - 3);
	len += CONSOLE_CSI_MAX - 3;
	in[len++] = 'm';
	n = filter_safe(in, len, out);
	assert_int_equal(n, 2 + CONSOLE_CSI_MAX - 3 + 1 + 2);
	assert_memory_equal(out, "ok\x1b[;;", 6);
	assert_int_equal(out[n - 1], 'm');
}

/* Whatever the guest writes, however split: no string sequence, no raw C1
 * control reaches the terminal, and the output fits its bound. */
static void test_safe_random(void **state)
{
	(void)state;
	static const uint8_t alphabet[] = {0x1b, '[',  ']',  'P',  '_', '^',  'X', '\\', 0x07,
					   '0',	 ';',  '1',  'm',  't', ' ',  '(', 0x9b, 0x9d,
					   0xc2, 0xe0, 0x82, 0xa9, 'a', 0x18, '%', '#'};
	static uint8_t in[4096], out[CONSOLE_FILTER_OUT(4096)];
	srand(35);
	for (int round = 0; round < 200; round++) {
		for (size_t i = 0; i < sizeof(in); i++)
			in[i] = alphabet[(size_t)rand() % sizeof(alphabet)];
		size_t n = filter_safe(in, sizeof(in), out);
		for (size_t i = 0; i < n; i++) {
			/* A byte 80-BF only continues a UTF-8 character. */
			bool cont = out[i] >= 0x80 && out[i] <= 0xbf;
			assert_false(cont && (i == 0 || out[i - 1] < 0x80));
			assert_false(cont && out[i] <= 0x9f && out[i - 1] == 0xc2);
			if (out[i] != 0x1b)
				continue;
			assert_true(i + 1 < n);
			assert_non_null(memchr("[78=>DEMHc(", out[i + 1], 11));
		}
	}
}

static void test_off_and_caret(void **state)
{
	(void)state;
	static const uint8_t in[] = "a\x1b]0;t\x07\x9b\x00";
	uint8_t out[CONSOLE_FILTER_OUT(sizeof(in))];
	struct console_filter f;
	console_filter_init(&f, CONSOLE_FILTER_OFF);
	assert_int_equal(console_filter_feed(&f, in, sizeof(in) - 1, out), sizeof(in) - 1);
	assert_memory_equal(out, in, sizeof(in) - 1);
	console_filter_init(&f, CONSOLE_FILTER_CARET);
	size_t n = console_filter_feed(&f, in, sizeof(in) - 1, out);
	static const uint8_t want[] = "a^[]0;t^G\x9b^@";
	assert_int_equal(n, sizeof(want) - 1);
	assert_memory_equal(out, want, n);
}

/* Safe by default, whatever stdout is: the zero mode, the option's first. */
static void test_default_safe(void **state)
{
	(void)state;
	assert_int_equal(CONSOLE_FILTER_SAFE, 0);
	assert_string_equal(console_filter_names[0], "safe");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_safe_keeps_csi),  cmocka_unit_test(test_safe_drops_strings),
	    cmocka_unit_test(test_safe_nested_esc), cmocka_unit_test(test_safe_drops_hostile),
	    cmocka_unit_test(test_safe_c1),	    cmocka_unit_test(test_safe_bounds),
	    cmocka_unit_test(test_safe_random),	    cmocka_unit_test(test_off_and_caret),
	    cmocka_unit_test(test_default_safe),
	};
	return cmocka_run_group_tests_name("console_filter", tests, NULL, NULL);
}
