// SPDX-License-Identifier: Apache-2.0
/* What of the guest's console output reaches the user's terminal.
 *
 * A guest's shell and full-screen programs need CSI sequences (colours,
 * cursor movement, erase, the cursor-position query CSI 6n, whose answer
 * the terminal types back as the guest's input); string sequences (OSC:
 * titles, clipboard, hyperlinks; DCS, APC, PM, SOS) are how a guest could
 * attack the terminal: retitle it, write the clipboard, or read state back
 * into its own input. Modes:
 *
 *   safe   printable ASCII; \n \r \t \b, BEL, SO and SI; well-formed UTF-8
 *          other than the C1 controls (U+0080-U+009F); complete CSI
 *          sequences of at most CONSOLE_CSI_MAX bytes except XTWINOPS
 *          (final 't'); a few harmless ESC sequences (console_filter.c).
 *          String sequences are dropped up to their terminator (BEL,
 *          ESC \) or CONSOLE_STRING_MAX bytes; every other byte is dropped.
 *          C1 controls in 8 bits (0x9b CSI, 0x9d OSC, ...) are not CSI or
 *          OSC in a UTF-8 terminal, but some terminals honour them: raw or
 *          UTF-8 encoded, they are dropped. The filter assumes a UTF-8
 *          terminal: a Latin-1 guest's accented letters are dropped too.
 *   caret  every control byte but \n \r \t \b, and DEL, in caret notation;
 *          a C1 control encoded in UTF-8 (C2 80-9F) as M-^X.
 *   off    the guest's bytes, unchanged.
 *
 * A filter keeps its state across calls: a sequence may be split between
 * two writes. */
#ifndef SKIFF_CONSOLE_FILTER_H
#define SKIFF_CONSOLE_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* SAFE is the default (0), for a terminal and for a file or pipe alike:
 * `skiff | tee` still ends on a terminal. */
enum console_filter_mode {
	CONSOLE_FILTER_SAFE,
	CONSOLE_FILTER_OFF,
	CONSOLE_FILTER_CARET,
};

/* Indexed by the mode, NULL-terminated (for an OPT_ENUM). */
extern const char *const console_filter_names[];

#define CONSOLE_CSI_MAX	   64u	 /* bytes of a CSI sequence, ESC [ and final included */
#define CONSOLE_STRING_MAX 4096u /* bytes of a string sequence dropped before giving up */
/* Room console_filter_feed needs for len input bytes. */
#define CONSOLE_FILTER_OUT(len) (2 * (len) + CONSOLE_CSI_MAX)

struct console_filter {
	enum console_filter_mode mode;
	uint8_t state;
	uint8_t want;	 /* a UTF-8 character's length */
	uint8_t inter;	 /* a CSI intermediate byte was seen */
	uint8_t held;	 /* bytes in seq: a sequence not yet complete */
	uint32_t string; /* bytes of a string sequence dropped so far */
	uint8_t seq[CONSOLE_CSI_MAX];
};

void console_filter_init(struct console_filter *f, enum console_filter_mode mode);
/* Filters len bytes into out (room for CONSOLE_FILTER_OUT(len) bytes);
 * returns the bytes written. */
size_t console_filter_feed(struct console_filter *f, const uint8_t *in, size_t len, uint8_t *out);

/* The C0 controls and DEL in caret notation, stateless (the caret mode
 * without its UTF-8 C1 check): out has room for 2 * len bytes. */
size_t console_sanitize(const uint8_t *in, size_t len, uint8_t *out);

#endif
