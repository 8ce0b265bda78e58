// SPDX-License-Identifier: Apache-2.0
#include "api/api_jscan.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deeper than json-c lets through (api_json.c's API_JSON_DEPTH). */
#define SCAN_DEPTH 16

struct jkey {
	size_t off, len; /* decoded, in the arena */
	size_t at;	 /* raw offset of the closing quote (ties: the later one) */
	unsigned int line, col;
};

/* An object (its closing brace) or a number (its text), in document order. */
struct jnode {
	bool is_obj;
	unsigned int line, col;
	size_t off, len;
};

struct jscan {
	const char *t;
	size_t len, i, line_start;
	unsigned int line;
	char *arena;
	size_t arena_len;
	struct jkey *keys;
	size_t nkeys, capkeys;
	struct jnode *nodes;
	size_t nnodes, capnodes;
	char *err;
	size_t errlen;
};

struct jpos {
	unsigned int line, col;
	char raw[]; /* numbers: as written */
};

static unsigned int col_of(const struct jscan *s, size_t i)
{
	return (unsigned int)(i - s->line_start + 1);
}

static int fail(struct jscan *s, size_t i, const char *what)
{
	snprintf(s->err, s->errlen, "%s at line %u column %u", what, s->line, col_of(s, i));
	return -1;
}

static int grow(void **arr, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 16;
	void *p = realloc(*arr, c * size);
	if (!p)
		return -1;
	*arr = p;
	*cap = c;
	return 0;
}

/* The length of the valid UTF-8 sequence at p (strict: no overlong forms,
 * no surrogates, nothing above U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	static const struct {
		unsigned char lo, hi, n, lo2, hi2;
	} lead[] = {
	    {0xc2, 0xdf, 2, 0x80, 0xbf}, {0xe0, 0xe0, 3, 0xa0, 0xbf}, {0xe1, 0xec, 3, 0x80, 0xbf},
	    {0xed, 0xed, 3, 0x80, 0x9f}, {0xee, 0xef, 3, 0x80, 0xbf}, {0xf0, 0xf0, 4, 0x90, 0xbf},
	    {0xf1, 0xf3, 4, 0x80, 0xbf}, {0xf4, 0xf4, 4, 0x80, 0x8f},
	};
	for (size_t k = 0; k < sizeof(lead) / sizeof(lead[0]); k++) {
		if (p[0] < lead[k].lo || p[0] > lead[k].hi)
			continue;
		if (n < lead[k].n || p[1] < lead[k].lo2 || p[1] > lead[k].hi2)
			return 0;
		for (size_t j = 2; j < lead[k].n; j++)
			if ((p[j] & 0xc0) != 0x80)
				return 0;
		return lead[k].n;
	}
	return 0;
}

static int hex4(const char *p, unsigned int *out)
{
	*out = 0;
	for (size_t j = 0; j < 4; j++) {
		char c = p[j];
		unsigned int d = c >= '0' && c <= '9'	? (unsigned int)(c - '0')
				 : c >= 'a' && c <= 'f' ? (unsigned int)(c - 'a' + 10)
				 : c >= 'A' && c <= 'F' ? (unsigned int)(c - 'A' + 10)
							: 16u;
		if (d > 15)
			return -1;
		*out = *out << 4 | d;
	}
	return 0;
}

static void put_utf8(struct jscan *s, unsigned int cp)
{
	char *o = s->arena + s->arena_len;
	if (cp < 0x80) {
		o[0] = (char)cp;
		s->arena_len += 1;
	} else if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		s->arena_len += 2;
	} else if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		s->arena_len += 3;
	} else {
		o[0] = (char)(0xf0 | cp >> 18);
		o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[3] = (char)(0x80 | (cp & 0x3f));
		s->arena_len += 4;
	}
}

/* A \u escape at s->i (the backslash): one code point, or a pair. */
static int scan_unicode(struct jscan *s, unsigned int *cp)
{
	const char *t = s->t;
	unsigned int lo;
	if (s->len - s->i < 6 || hex4(t + s->i + 2, cp) < 0)
		return fail(s, s->i, "invalid escape");
	s->i += 6;
	if (*cp == 0)
		return fail(s, s->i - 1, "string contains NUL (\\u0000)");
	if (*cp >= 0xdc00 && *cp <= 0xdfff)
		return fail(s, s->i - 1, "lone trailing surrogate in hex escape");
	if (*cp < 0xd800 || *cp > 0xdbff)
		return 0;
	if (s->len - s->i < 6 || t[s->i] != '\\' || t[s->i + 1] != 'u' ||
	    hex4(t + s->i + 2, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff)
		return fail(s, s->i - 1, "lone leading surrogate in hex escape");
	s->i += 6;
	*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
	return 0;
}

/* A string from its opening quote; a key's decoded text goes to the arena. */
static int scan_string(struct jscan *s, bool key)
{
	static const char esc_from[] = "\"\\/bfnrt", esc_to[] = "\"\\/\b\f\n\r\t";
	size_t start = s->arena_len;
	const unsigned char *t = (const unsigned char *)s->t;
	for (s->i++; s->i < s->len && t[s->i] != '"';) {
		unsigned char c = t[s->i];
		unsigned int cp;
		if (c < 0x20)
			return fail(s, s->i, "control character in a string");
		if (c >= 0x80) {
			size_t n = utf8_len(t + s->i, s->len - s->i);
			if (!n)
				return fail(s, s->i, "invalid unicode code point");
			memcpy(s->arena + s->arena_len, t + s->i, n);
			s->arena_len += n;
			s->i += n;
		} else if (c == '\\' && s->i + 1 < s->len && t[s->i + 1] == 'u') {
			if (scan_unicode(s, &cp) < 0)
				return -1;
			put_utf8(s, cp);
		} else if (c == '\\' && s->i + 1 < s->len && t[s->i + 1] &&
			   strchr(esc_from, t[s->i + 1])) {
			s->arena[s->arena_len++] = esc_to[strchr(esc_from, t[s->i + 1]) - esc_from];
			s->i += 2;
		} else {
			s->arena[s->arena_len++] = (char)c;
			s->i++;
		}
	}
	if (s->i >= s->len)
		return fail(s, s->i, "EOF while parsing a string");
	if (key) {
		if (grow((void **)&s->keys, &s->capkeys, s->nkeys, sizeof(*s->keys)) < 0)
			return fail(s, s->i, "out of memory");
		s->keys[s->nkeys++] =
		    (struct jkey){start, s->arena_len - start, s->i, s->line, col_of(s, s->i)};
	}
	s->arena_len = start; /* values are checked, not kept */
	if (key)
		s->arena_len += s->keys[s->nkeys - 1].len;
	s->i++;
	return 0;
}

static int key_cmp(const void *a, const void *b, void *arena)
{
	const struct jkey *x = a, *y = b;
	const char *key_arena = arena;
	size_t n = x->len < y->len ? x->len : y->len;
	int r = memcmp(key_arena + x->off, key_arena + y->off, n);
	if (r || x->len != y->len)
		return r ? r : (x->len < y->len ? -1 : 1);
	return x->at < y->at ? -1 : x->at > y->at;
}

/* An object's keys (from first on): a key given twice is refused where
 * it comes the second time, as serde does. */
static int check_dups(struct jscan *s, size_t first)
{
	size_t n = s->nkeys - first;
	if (n < 2) { /* (an empty object may have no key array yet: NULL + 0 is UB) */
		s->nkeys = first;
		return 0;
	}
	struct jkey *k = s->keys + first, *dup = NULL;
	qsort_r(k, n, sizeof(*k), key_cmp, s->arena);
	for (size_t j = 1; j < n; j++)
		if (k[j].len == k[j - 1].len &&
		    !memcmp(s->arena + k[j].off, s->arena + k[j - 1].off, k[j].len) &&
		    (!dup || k[j].at < dup->at))
			dup = &k[j];
	if (dup) {
		snprintf(s->err, s->errlen, "duplicate field `%.*s` at line %u column %u",
			 (int)(dup->len > 64 ? 64 : dup->len), s->arena + dup->off, dup->line,
			 dup->col);
		return -1;
	}
	s->nkeys = first; /* (the arena is never reused: keys fit in len) */
	return 0;
}

static int add_node(struct jscan *s, struct jnode n)
{
	if (grow((void **)&s->nodes, &s->capnodes, s->nnodes, sizeof(*s->nodes)) < 0)
		return -1;
	s->nodes[s->nnodes++] = n;
	return 0;
}

static size_t digits(const char *p, size_t i, size_t n)
{
	size_t d = 0;
	while (i + d < n && p[i + d] >= '0' && p[i + d] <= '9')
		d++;
	return d;
}

/* How much of the n bytes at p is a JSON number (RFC 8259: -?(0|[1-9]d*)
 * (.d+)?([eE][+-]?d+)?): the well-formed part, shorter than the token
 * where the grammar breaks (json-c takes "1." and "1.e5"). */
static size_t number_len(const char *p, size_t n)
{
	size_t i = p[0] == '-', d = digits(p, i, n);
	if (!d)
		return 0;
	i += p[i] == '0' ? 1 : d;
	if (i < n && p[i] == '.') {
		if (!(d = digits(p, i + 1, n)))
			return i;
		i += 1 + d;
	}
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		size_t sign = i + 1 < n && (p[i + 1] == '+' || p[i + 1] == '-');
		if (!(d = digits(p, i + 1 + sign, n)))
			return i;
		i += 1 + sign + d;
	}
	return i;
}

/* The length of the literal at p: true, false or null; 0 for anything
 * else (json-c also takes NaN, Infinity and -Infinity: not JSON). */
static size_t literal_len(const char *p, size_t n)
{
	static const char *const words[] = {"true", "false", "null"};
	for (size_t k = 0; k < sizeof(words) / sizeof(words[0]); k++)
		if (n >= strlen(words[k]) && !memcmp(p, words[k], strlen(words[k])))
			return strlen(words[k]);
	return 0;
}

struct jframe {
	bool obj, want_key;
	size_t first_key, node;
};

static int scan(struct jscan *s)
{
	struct jframe st[SCAN_DEPTH];
	int depth = 0;
	while (s->i < s->len) {
		unsigned char c = (unsigned char)s->t[s->i];
		bool in_obj = depth && st[depth - 1].obj;
		if (c == '{' || c == '[') {
			if (depth == SCAN_DEPTH)
				return fail(s, s->i, "recursion limit exceeded");
			st[depth] = (struct jframe){c == '{', c == '{', s->nkeys, s->nnodes};
			if (c == '{' && add_node(s, (struct jnode){.is_obj = true}) < 0)
				return fail(s, s->i, "out of memory");
			depth++;
		} else if ((c == '}' || c == ']') && depth) {
			depth--;
			if (c == '}') {
				s->nodes[st[depth].node].line = s->line;
				s->nodes[st[depth].node].col = col_of(s, s->i);
				if (check_dups(s, st[depth].first_key) < 0)
					return -1;
			}
		} else if (c == ',' && in_obj) {
			st[depth - 1].want_key = true;
		} else if (c == '"') {
			bool key = in_obj && st[depth - 1].want_key;
			if (key)
				st[depth - 1].want_key = false;
			if (scan_string(s, key) < 0)
				return -1;
			continue;
		} else if (c == '-' || (c >= '0' && c <= '9')) {
			size_t n = strspn(s->t + s->i, "+-.eE0123456789");
			if (n > s->len - s->i)
				n = s->len - s->i;
			size_t ok = number_len(s->t + s->i, n);
			if (ok != n)
				return fail(s, s->i + ok, "invalid number");
			if (add_node(s, (struct jnode){false, 0, 0, s->i, n}) < 0)
				return fail(s, s->i, "out of memory");
			s->i += n;
			continue;
		} else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') {
			size_t n = literal_len(s->t + s->i, s->len - s->i);
			if (!n)
				return fail(s, s->i, "expected value");
			s->i += n;
			continue;
		} else if (c == '\n') {
			s->line++;
			s->line_start = s->i + 1;
		} else if (c == 0 || c >= 0x80) {
			return fail(s, s->i, c ? "invalid unicode code point" : "NUL byte");
		}
		s->i++;
	}
	return 0;
}

static void pos_free(struct json_object *o, void *p)
{
	(void)o;
	free(p);
}

/* The nodes onto the tree, in document order (json-c keeps the order of
 * keys, and there are no duplicates now). Stops at any mismatch. */
static void attach(struct jscan *s, struct json_object *o, size_t *k)
{
	enum json_type t = json_object_get_type(o);
	bool num = t == json_type_int || t == json_type_double;
	if ((t == json_type_object || num) &&
	    (*k >= s->nnodes || s->nodes[*k].is_obj != (t == json_type_object)))
		return;
	if (t == json_type_object || num) {
		const struct jnode *n = &s->nodes[(*k)++];
		struct jpos *p = malloc(sizeof(*p) + (num ? n->len + 1 : 1));
		if (!p)
			return;
		*p = (struct jpos){n->line, n->col};
		if (t == json_type_double) /* json-c's own text of it goes */
			json_object_set_serializer(o, NULL, NULL, NULL);
		memcpy(p->raw, s->t + n->off, num ? n->len : 0);
		p->raw[num ? n->len : 0] = '\0';
		json_object_set_userdata(o, p, pos_free);
	}
	if (t == json_type_object) {
		json_object_object_foreach(o, key, v)
		{
			(void)key;
			attach(s, v, k);
		}
	} else if (t == json_type_array) {
		for (size_t j = 0; j < json_object_array_length(o); j++)
			attach(s, json_object_array_get_idx(o, j), k);
	}
}

int api_json_scan(const char *text, size_t len, struct json_object *root, char *err, size_t errlen)
{
	struct jscan s = {.t = text, .len = len, .line = 1, .err = err, .errlen = errlen};
	s.arena = malloc(len + 1);
	if (!s.arena) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int r = scan(&s);
	size_t k = 0;
	if (r == 0)
		attach(&s, root, &k);
	free(s.arena);
	free(s.keys);
	free(s.nodes);
	return r;
}

int api_json_end(struct json_object *o, unsigned int *line, unsigned int *col)
{
	const struct jpos *p =
	    json_object_get_type(o) == json_type_object ? json_object_get_userdata(o) : NULL;
	if (!p || !p->line)
		return 0;
	*line = p->line;
	*col = p->col;
	return 1;
}

const char *api_json_raw(struct json_object *v)
{
	enum json_type t = json_object_get_type(v);
	const struct jpos *p =
	    t == json_type_int || t == json_type_double ? json_object_get_userdata(v) : NULL;
	return p ? p->raw : NULL;
}
