// SPDX-License-Identifier: Apache-2.0
/* Hostile review of the console filter (src/core/console_filter.c): what
 * a guest writing to its UART can make reach the user's terminal. */
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

/* Whether out holds a C1 control encoded in UTF-8 (C2 80-9F). */
static bool has_utf8_c1(const uint8_t *out, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++)
		if (out[i] == 0xc2 && out[i + 1] >= 0x80 && out[i + 1] <= 0x9f)
			return true;
	return false;
}

/* Caret mode: OSC as the C1 control U+009D, encoded in UTF-8, ended by
 * U+009C (ST). Terminals that decode UTF-8 before they parse (VTE, GNU
 * screen, mosh) obey it as OSC: a title (or a clipboard write) from the
 * guest. Shown in caret notation (cat -v's M-^X) instead, whether it comes
 * in one write or split between two; other UTF-8 passes. */
static void test_caret_utf8_c1(void **state)
{
	(void)state;
	static const uint8_t in[] = "a\xc2\x9d"
				    "0;pwned\xc2\x9c\xc3\xa9\xc2\xa0\xc2";
	uint8_t out[CONSOLE_FILTER_OUT(sizeof(in))];
	static const uint8_t want[] = "aM-^]0;pwnedM-^\\\xc3\xa9\xc2\xa0";
	for (size_t cut = 0; cut < sizeof(in); cut++) {
		struct console_filter f;
		console_filter_init(&f, CONSOLE_FILTER_CARET);
		size_t n = console_filter_feed(&f, in, cut, out);
		assert_true(n <= CONSOLE_FILTER_OUT(cut));
		size_t m = console_filter_feed(&f, in + cut, sizeof(in) - 1 - cut, out + n);
		assert_true(m <= CONSOLE_FILTER_OUT(sizeof(in) - 1 - cut));
		n += m;
		assert_false(has_utf8_c1(out, n));
		/* the last C2 waits for the byte after it */
		assert_int_equal(n, sizeof(want) - 1);
		assert_memory_equal(out, want, n);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_caret_utf8_c1),
	};
	return cmocka_run_group_tests_name("review_console", tests, NULL, NULL);
}
