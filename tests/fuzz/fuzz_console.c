// SPDX-License-Identifier: Apache-2.0
/* The console's output filter (src/core/console_filter.c) on what a guest
 * writes to its UART: any bytes, cut into writes of any size as the UART
 * hands them over. The first byte picks the mode (safe or caret) and the
 * write sizes.
 *
 * Checked on everything the terminal would get, across the writes: in
 * safe mode, well-formed UTF-8 without the C1 controls U+0080-U+009F (raw
 * or encoded), no C0 control but the few passed and ESC, and every ESC the
 * start of a sequence the filter passes (a complete CSI without XTWINOPS,
 * a charset, a short ESC sequence), so never ESC ] / P / _ / ^ / X; in
 * caret mode, no ESC, no C0 control but \n \r \t \b, and no C1 control
 * encoded in UTF-8. Each write's output fits the room
 * the header promises, the held state stays bounded, and CAN then a
 * letter always brings the letter out: nothing is held for ever. */
#include <string.h>

#include "core/console_filter.h"
#include "fuzz_common.h"

#define MAXIN 4096

static uint8_t out[CONSOLE_FILTER_OUT(MAXIN) + CONSOLE_FILTER_OUT(2)];

/* Length of the well-formed UTF-8 character at p (n bytes left) that is
 * not a C1 control, or 0. */
static size_t utf8_ok(const uint8_t *p, size_t n)
{
	uint8_t c = p[0];
	size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
	uint8_t lo = 0x80, hi = 0xbf;
	if (c < 0xc2 || c > 0xf4 || n < len)
		return 0;
	if (c == 0xc2)
		lo = 0xa0; /* C2 80-9F: U+0080-U+009F */
	else if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return len;
}

/* Length of the passed escape sequence at p (ESC first), or 0. */
static size_t esc_ok(const uint8_t *p, size_t n)
{
	if (n < 2)
		return 0;
	if (strchr("78=>DEMHc", p[1]) && p[1])
		return 2;
	if (p[1] == '(' || p[1] == ')')
		return n >= 3 && p[2] && strchr("B0A", p[2]) ? 3 : 0;
	if (p[1] != '[')
		return 0;
	size_t i = 2;
	while (i < n && p[i] >= 0x30 && p[i] <= 0x3f)
		i++;
	while (i < n && p[i] >= 0x20 && p[i] <= 0x2f)
		i++;
	if (i >= n || i + 1 > CONSOLE_CSI_MAX || p[i] < 0x40 || p[i] > 0x7e || p[i] == 't')
		return 0;
	return i + 1;
}

static void check_safe(const uint8_t *p, size_t n)
{
	static const char c0[] = "\a\b\t\n\r\x0e\x0f";
	for (size_t i = 0, k; i < n; i += k) {
		uint8_t c = p[i];
		if (c == 0x1b)
			k = esc_ok(p + i, n - i);
		else if (c >= 0x80)
			k = utf8_ok(p + i, n - i);
		else
			k = (c >= 0x20 && c < 0x7f) || (c && memchr(c0, c, sizeof(c0) - 1));
		FZ_CHECK(k != 0);
	}
}

/* Caret mode keeps bytes 80-FF as they come (raw C1 bytes are not UTF-8,
 * which the filter assumes the terminal speaks), but never a C1 control
 * encoded in UTF-8 (C2 80-9F), which terminals that decode before they
 * parse (VTE, screen, mosh) obey. */
static void check_caret(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t c = p[i];
		FZ_CHECK(c >= 0x20 || c == '\n' || c == '\r' || c == '\t' || c == '\b');
		FZ_CHECK(c != 0x7f);
		FZ_CHECK(c != 0xc2 || i + 1 == n || p[i + 1] < 0x80 || p[i + 1] > 0x9f);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > MAXIN + 1)
		return 0;
	uint8_t sel = data[0];
	enum console_filter_mode mode = sel & 0x80 ? CONSOLE_FILTER_CARET : CONSOLE_FILTER_SAFE;
	size_t step = (sel & 0x7f) % 64 + 1, n = 0;
	struct console_filter f;
	console_filter_init(&f, mode);
	data++, size--;
	for (size_t i = 0; i < size; i += step) {
		size_t len = size - i < step ? size - i : step;
		size_t m = console_filter_feed(&f, data + i, len, out + n);
		FZ_CHECK(m <= CONSOLE_FILTER_OUT(len));
		FZ_CHECK(f.held < CONSOLE_CSI_MAX && f.string <= CONSOLE_STRING_MAX);
		n += m;
	}
	/* CAN ends any sequence; the letter after it is text. */
	size_t m = console_filter_feed(&f, (const uint8_t *)"\x18Z", 2, out + n);
	FZ_CHECK(mode != CONSOLE_FILTER_SAFE || (m == 1 && out[n] == 'Z'));
	n += m;
	if (mode == CONSOLE_FILTER_SAFE)
		check_safe(out, n);
	else
		check_caret(out, n);
	return 0;
}
