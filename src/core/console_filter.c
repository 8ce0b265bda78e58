// SPDX-License-Identifier: Apache-2.0
/* The console's output filter (console_filter.h): a byte-at-a-time state
 * machine after the VT500 parser's shape (vt100.net/emu/dec_ansi_parser),
 * reduced to what it must tell apart. It never emits part of a sequence:
 * a CSI or UTF-8 character is held until complete, then passed or dropped
 * whole, so the terminal never sees a sequence the filter did not judge. */
#include "core/console_filter.h"

#include <stdbool.h>
#include <string.h>

const char *const console_filter_names[] = {"safe", "off", "caret", NULL};

#define ESC 0x1b
#define BEL 0x07

enum state {
	ST_GROUND,
	ST_UTF8,     /* a UTF-8 character, held */
	ST_ESC,	     /* ESC, held */
	ST_CHARSET,  /* ESC ( or ESC ), held */
	ST_ESC_DROP, /* ESC and intermediates: dropped up to the final byte */
	ST_CSI,	     /* ESC [ ..., held */
	ST_CSI_DROP, /* an overlong or malformed CSI: dropped up to its final */
	ST_STRING,   /* OSC, DCS, SOS, PM, APC: dropped up to BEL or ESC \ */
	ST_STR_ESC,  /* ESC inside a string: ST if '\' follows */
};

/* What a handler did with its byte: AGAIN hands it to the (new) state. */
enum step { DONE, AGAIN };

struct sink {
	uint8_t *out;
	size_t n;
};

/* Controls a shell needs: newline, return, tab, backspace, the bell, and
 * SO/SI, which vt100-style terminfo entries use for line drawing. */
static const bool c0_pass[0x20] = {
    [BEL] = true,  ['\b'] = true, ['\t'] = true, ['\n'] = true,
    ['\r'] = true, [0x0e] = true, [0x0f] = true,
};

enum esc_kind { ESC_DROP = 0, ESC_PASS, ESC_CSI, ESC_STRING, ESC_CHARSET };

/* The byte after ESC (ECMA-48, xterm's ctlseqs). Passed: DECSC/DECRC
 * (7, 8: save and restore the cursor), DECKPAM/DECKPNM (=, >: keypad
 * modes vi sets), IND, NEL, RI (D, E, M: scrolling, as less and vi use),
 * HTS (H: tab stops, set by tset) and RIS (c: the reset `reset` sends to
 * undo what a program left behind). Not passed, among others: ESC % (the
 * terminal's encoding: leaving UTF-8 would make 8-bit C1 controls live),
 * ESC SP F/G (8-bit replies), ESC # 8 (fills the screen), SS2/SS3. */
static const uint8_t esc_kinds[0x80] = {
    ['['] = ESC_CSI,	 [']'] = ESC_STRING, ['P'] = ESC_STRING, ['X'] = ESC_STRING,
    ['^'] = ESC_STRING,	 ['_'] = ESC_STRING, ['7'] = ESC_PASS,	 ['8'] = ESC_PASS,
    ['='] = ESC_PASS,	 ['>'] = ESC_PASS,   ['D'] = ESC_PASS,	 ['E'] = ESC_PASS,
    ['M'] = ESC_PASS,	 ['H'] = ESC_PASS,   ['c'] = ESC_PASS,	 ['('] = ESC_CHARSET,
    [')'] = ESC_CHARSET,
};

/* Character sets ESC ( and ESC ) may pick: ASCII, DEC line drawing and
 * UK, what terminfo's enacs/smacs/rmacs use. */
static bool charset_ok(uint8_t c)
{
	return c == 'B' || c == '0' || c == 'A';
}

/* CSI final bytes not passed: XTWINOPS ('t') moves, resizes and iconifies
 * the window and reports its title into the guest's input (a title the
 * user's shell may have set). Programs work without it. */
static bool csi_final_ok(uint8_t c)
{
	return c != 't';
}

/* UTF-8's well-formed sequences (Unicode table 3-7) by lead byte: the
 * range of the second byte and the length. C2's range leaves out
 * 80-9F: U+0080-U+009F are the C1 controls. */
static const struct utf8_lead {
	uint8_t first, last, lo, hi, len;
} utf8_leads[] = {
    {0xc2, 0xc2, 0xa0, 0xbf, 2}, {0xc3, 0xdf, 0x80, 0xbf, 2}, {0xe0, 0xe0, 0xa0, 0xbf, 3},
    {0xe1, 0xec, 0x80, 0xbf, 3}, {0xed, 0xed, 0x80, 0x9f, 3}, {0xee, 0xef, 0x80, 0xbf, 3},
    {0xf0, 0xf0, 0x90, 0xbf, 4}, {0xf1, 0xf3, 0x80, 0xbf, 4}, {0xf4, 0xf4, 0x80, 0x8f, 4},
};

static const struct utf8_lead *utf8_lead(uint8_t c)
{
	for (size_t i = 0; i < sizeof(utf8_leads) / sizeof(utf8_leads[0]); i++)
		if (c >= utf8_leads[i].first && c <= utf8_leads[i].last)
			return &utf8_leads[i];
	return NULL;
}

static void emit(struct sink *s, uint8_t c)
{
	s->out[s->n++] = c;
}

/* Passes what is held, then c; the sequence is complete. */
static void emit_held(struct console_filter *f, struct sink *s, uint8_t c)
{
	memcpy(s->out + s->n, f->seq, f->held);
	s->n += f->held;
	emit(s, c);
	f->held = 0;
	f->state = ST_GROUND;
}

static void hold(struct console_filter *f, uint8_t c)
{
	f->seq[f->held++] = c;
}

/* Drops what is held and starts an escape sequence at this ESC. */
static void start_esc(struct console_filter *f)
{
	f->held = 0;
	hold(f, ESC);
	f->state = ST_ESC;
}

/* Drops what is held; the byte goes to the ground state (where an ESC
 * starts a new sequence, as in a terminal). */
static enum step abort_seq(struct console_filter *f)
{
	f->held = 0;
	f->state = ST_GROUND;
	return AGAIN;
}

static enum step on_ground(struct console_filter *f, struct sink *s, uint8_t c)
{
	const struct utf8_lead *u;
	if (c >= 0x20 && c < 0x7f)
		emit(s, c);
	else if (c == ESC)
		start_esc(f);
	else if (c < 0x20 && c0_pass[c])
		emit(s, c);
	else if ((u = utf8_lead(c))) {
		f->held = 0;
		hold(f, c);
		f->want = u->len;
		f->state = ST_UTF8;
	}
	/* Other C0 controls, DEL, 8-bit C1 controls and bytes outside
	 * well-formed UTF-8: dropped. */
	return DONE;
}

static enum step on_utf8(struct console_filter *f, struct sink *s, uint8_t c)
{
	const struct utf8_lead *u = utf8_lead(f->seq[0]);
	bool ok = f->held == 1 ? c >= u->lo && c <= u->hi : c >= 0x80 && c <= 0xbf;
	if (!ok)
		return abort_seq(f); /* c may start something new */
	if (f->held + 1u == f->want)
		emit_held(f, s, c);
	else
		hold(f, c);
	return DONE;
}

static enum step on_esc(struct console_filter *f, struct sink *s, uint8_t c)
{
	if (c < 0x20 || c >= 0x7f)
		return abort_seq(f);
	switch (esc_kinds[c]) {
	case ESC_PASS:
		emit_held(f, s, c);
		break;
	case ESC_CSI:
		hold(f, c);
		f->inter = 0;
		f->state = ST_CSI;
		break;
	case ESC_STRING:
		f->held = 0;
		f->string = 0;
		f->state = ST_STRING;
		break;
	case ESC_CHARSET:
		hold(f, c);
		f->state = ST_CHARSET;
		break;
	default:
		f->held = 0;
		/* An intermediate byte: the sequence goes on to a final. */
		f->state = c < 0x30 ? ST_ESC_DROP : ST_GROUND;
	}
	return DONE;
}

static enum step on_charset(struct console_filter *f, struct sink *s, uint8_t c)
{
	if (c < 0x20 || c >= 0x7f)
		return abort_seq(f);
	if (charset_ok(c)) {
		emit_held(f, s, c);
		return DONE;
	}
	f->held = 0;
	f->state = c < 0x30 ? ST_ESC_DROP : ST_GROUND;
	return DONE;
}

static enum step on_esc_drop(struct console_filter *f, struct sink *s, uint8_t c)
{
	(void)s;
	if (c < 0x20 || c >= 0x7f)
		return abort_seq(f);
	if (c >= 0x30)
		f->state = ST_GROUND; /* the final byte */
	return DONE;
}

/* ESC [ parameters (0x30-0x3f), intermediates (0x20-0x2f), a final byte
 * (0x40-0x7e). Any other byte ends the sequence unpassed; a terminal would
 * run a C0 control inside it, dropping it loses only that sequence. */
static enum step on_csi(struct console_filter *f, struct sink *s, uint8_t c)
{
	if (c < 0x20 || c >= 0x7f)
		return abort_seq(f);
	if (c >= 0x40) {
		if (csi_final_ok(c)) {
			emit_held(f, s, c);
		} else {
			f->held = 0;
			f->state = ST_GROUND;
		}
		return DONE;
	}
	bool param_after_inter = c >= 0x30 && f->inter;
	if (param_after_inter || f->held + 1u >= CONSOLE_CSI_MAX) {
		f->held = 0;
		f->state = ST_CSI_DROP;
		return DONE;
	}
	f->inter |= c < 0x30;
	hold(f, c);
	return DONE;
}

static enum step on_csi_drop(struct console_filter *f, struct sink *s, uint8_t c)
{
	(void)s;
	if (c < 0x20 || c >= 0x7f)
		return abort_seq(f);
	if (c >= 0x40)
		f->state = ST_GROUND;
	return DONE;
}

/* A string ends at BEL, at ESC (ST is ESC \; any other ESC starts a new
 * sequence, as in a terminal), at CAN or SUB (which cancel it), or, left
 * unterminated, after CONSOLE_STRING_MAX bytes: the rest is text again,
 * filtered as such. */
static enum step on_string(struct console_filter *f, struct sink *s, uint8_t c)
{
	(void)s;
	if (c == ESC)
		f->state = ST_STR_ESC;
	else if (c == BEL || c == 0x18 || c == 0x1a || ++f->string >= CONSOLE_STRING_MAX)
		f->state = ST_GROUND;
	return DONE;
}

static enum step on_str_esc(struct console_filter *f, struct sink *s, uint8_t c)
{
	(void)s;
	if (c == '\\') {
		f->state = ST_GROUND;
		return DONE;
	}
	start_esc(f);
	return AGAIN;
}

static enum step (*const handlers[])(struct console_filter *, struct sink *, uint8_t) = {
    [ST_GROUND] = on_ground,	 [ST_UTF8] = on_utf8,	      [ST_ESC] = on_esc,
    [ST_CHARSET] = on_charset,	 [ST_ESC_DROP] = on_esc_drop, [ST_CSI] = on_csi,
    [ST_CSI_DROP] = on_csi_drop, [ST_STRING] = on_string,     [ST_STR_ESC] = on_str_esc,
};

void console_filter_init(struct console_filter *f, enum console_filter_mode mode)
{
	memset(f, 0, sizeof(*f));
	f->mode = mode;
	f->state = ST_GROUND;
}

/* The caret mode shows every other control byte, the bell too. */
static bool caret_control_ok(uint8_t c)
{
	return c == '\n' || c == '\r' || c == '\t' || c == '\b';
}

size_t console_sanitize(const uint8_t *in, size_t len, uint8_t *out)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++) {
		uint8_t c = in[i];
		if ((c >= 0x20 && c != 0x7f) || caret_control_ok(c)) {
			out[n++] = c;
			continue;
		}
		/* Caret notation: ESC shows as "^[", DEL as "^?". */
		out[n++] = '^';
		out[n++] = c == 0x7f ? '?' : (uint8_t)(c + 0x40);
	}
	return n;
}

/* Caret mode's one state: a C2 byte held until the next byte shows
 * whether the two encode a C1 control (U+0080-U+009F). Terminals that
 * decode UTF-8 before they parse (VTE, GNU screen, mosh) obey those as
 * raw C1 controls: CSI, OSC, DCS. Shown in cat -v's notation, M-^X, as
 * 4 bytes for 2. (Raw bytes 80-9F are not UTF-8: they pass, as before.) */
static size_t caret_feed(struct console_filter *f, const uint8_t *in, size_t len, uint8_t *out)
{
	size_t n = 0;
	for (size_t i = 0; i < len; i++) {
		uint8_t c = in[i];
		if (f->held) {
			f->held = 0;
			if (c >= 0x80 && c <= 0x9f) {
				memcpy(out + n, "M-^", 3);
				out[n + 3] = (uint8_t)(c - 0x80 + 0x40);
				n += 4;
				continue;
			}
			out[n++] = 0xc2;
		}
		if (c == 0xc2)
			f->held = 1;
		else
			n += console_sanitize(&c, 1, out + n);
	}
	return n;
}

size_t console_filter_feed(struct console_filter *f, const uint8_t *in, size_t len, uint8_t *out)
{
	if (f->mode == CONSOLE_FILTER_OFF) {
		memcpy(out, in, len);
		return len;
	}
	if (f->mode == CONSOLE_FILTER_CARET)
		return caret_feed(f, in, len, out);
	struct sink s = {.out = out};
	for (size_t i = 0; i < len; i++)
		while (handlers[f->state](f, &s, in[i]) == AGAIN)
			;
	return s.n;
}
