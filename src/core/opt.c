// SPDX-License-Identifier: Apache-2.0
#include "core/opt.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int parse_size(const char *s, uint64_t *out)
{
	if (!s || !isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	unsigned int shift;
	switch (toupper((unsigned char)*end)) {
	case '\0':
	case 'M':
		shift = 20;
		break;
	case 'K':
		shift = 10;
		break;
	case 'G':
		shift = 30;
		break;
	case 'T':
		shift = 40;
		break;
	default:
		return -1;
	}
	if (*end && end[1] != '\0' && strcasecmp(end + 1, "iB") != 0 && strcasecmp(end + 1, "B"))
		return -1;
	if (v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

int parse_int(const char *s, long min, long max, long *out)
{
	if (!s || !*s)
		return -1;
	errno = 0;
	char *end;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Digits only (no sign, no spaces), in [min, max]. */
static int parse_dec(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	if (!isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Stores val into the option's field; -1 if val is not valid for it. A
 * custom parser writes its own message; for the rest the caller does. */
static int opt_store(const struct opt *o, const char *val, void *target, char *err, size_t errlen,
		     bool *own_msg)
{
	void *f = (char *)target + o->off;
	uint64_t v;
	*own_msg = false;
	switch (o->type) {
	case OPT_FLAG:
		*(bool *)f = true;
		return 0;
	case OPT_ONOFF:
		if (strcmp(val, "on") && strcmp(val, "off"))
			return -1;
		*(bool *)f = !strcmp(val, "on");
		return 0;
	case OPT_STR:
		*(const char **)f = val;
		return 0;
	case OPT_INT:
	case OPT_UINT:
	case OPT_U64:
		if (parse_dec(val, o->min, o->max, &v) < 0)
			return -1;
		if (o->type == OPT_INT)
			*(int *)f = (int)v;
		else if (o->type == OPT_UINT)
			*(unsigned int *)f = (unsigned int)v;
		else
			*(uint64_t *)f = v * (o->scale ? o->scale : 1);
		return 0;
	case OPT_SIZE:
		if (parse_size(val, &v) < 0 || v < o->min || v > o->max)
			return -1;
		*(uint64_t *)f = v;
		return 0;
	case OPT_ENUM:
		for (int i = 0; o->choices[i]; i++) {
			if (!strcmp(val, o->choices[i])) {
				*(int *)f = i;
				return 0;
			}
		}
		return -1;
	case OPT_CUSTOM:
		*own_msg = true;
		return o->parse(o, val, target, err, errlen);
	}
	return -1;
}

static const struct opt *opt_find(const struct opt_table *t, const char *name, size_t len)
{
	for (size_t i = 0; i < t->n; i++)
		if (strlen(t->opts[i].name) == len && !strncmp(t->opts[i].name, name, len))
			return &t->opts[i];
	return NULL;
}

/* Once-only options and required ones are tracked by their table index. */
static int opt_seen(const struct opt_table *t, const struct opt *o, uint64_t *seen, bool cli,
		    char *err, size_t errlen)
{
	uint64_t bit = 1ULL << (o - t->opts);
	if ((o->flags & OPT_ONCE) && (*seen & bit)) {
		snprintf(err, errlen, cli ? "--%s given twice" : "%s= given twice", o->name);
		return -1;
	}
	*seen |= bit;
	return 0;
}

static int opt_required(const struct opt_table *t, uint64_t seen, bool cli, char *err,
			size_t errlen)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct opt *o = &t->opts[i];
		if (!(o->flags & OPT_REQUIRED) || (seen & (1ULL << i)))
			continue;
		if (o->hint && cli)
			snprintf(err, errlen, "%s", o->hint);
		else
			snprintf(err, errlen, "%s=%s is required", o->name, o->metavar);
		return -1;
	}
	return 0;
}

int opt_parse_argv(const struct opt_table *t, int argc, char **argv, void *target, char *err,
		   size_t errlen)
{
	uint64_t seen = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strncmp(a, "--", 2) || !a[2]) {
			snprintf(err, errlen, "unexpected argument '%s'", a);
			return -1;
		}
		const char *eq = strchr(a + 2, '=');
		size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
		const struct opt *o = opt_find(t, a + 2, len);
		if (!o) {
			snprintf(err, errlen, "unknown option '%.*s'%s%s%s", (int)len + 2, a,
				 t->see ? " (" : "", t->see ? t->see : "", t->see ? ")" : "");
			return -1;
		}
		if (!strcmp(o->name, "help"))
			return 1;
		const char *val = "";
		if (o->type == OPT_FLAG && eq) {
			snprintf(err, errlen, "option '--%s' takes no value", o->name);
			return -1;
		} else if (o->type != OPT_FLAG && !eq && (o->flags & OPT_OPTVAL) &&
			   (i + 1 >= argc || !strncmp(argv[i + 1], "--", 2))) {
			val = ""; /* "--rng" alone: a value never starts with "--" */
		} else if (o->type != OPT_FLAG) {
			if (!eq && i + 1 >= argc) {
				snprintf(err, errlen, "option '%s' needs a value", a);
				return -1;
			}
			val = eq ? eq + 1 : argv[++i];
		}
		if (opt_seen(t, o, &seen, true, err, errlen) < 0)
			return -1;
		bool own;
		if (opt_store(o, val, target, err, errlen, &own) < 0) {
			if (!own)
				snprintf(err, errlen, "invalid --%s '%s': %s", o->name, val,
					 o->hint ? o->hint : "bad value");
			return -1;
		}
	}
	return opt_required(t, seen, true, err, errlen);
}

/* One item of a spec, NUL-terminated. */
static int opt_spec_item(const struct opt_table *t, char *item, bool first, void *target,
			 uint64_t *seen, char *err, size_t errlen)
{
	const struct opt *o = NULL;
	char *val = NULL;
	if (first && t->n && (t->opts[0].flags & OPT_POSITIONAL)) {
		o = &t->opts[0];
		val = item;
	} else {
		char *eq = strchr(item, '=');
		size_t klen = eq ? (size_t)(eq - item) : strlen(item);
		o = opt_find(t, item, klen);
		if (!o || (o->flags & OPT_POSITIONAL)) {
			char known[256] = "";
			size_t k = 0;
			for (size_t i = 0; i < t->n && k < sizeof(known); i++)
				if (!(t->opts[i].flags & OPT_POSITIONAL) && t->opts[i].help)
					k += (size_t)snprintf(known + k, sizeof(known) - k, "%s%s",
							      k ? ", " : "", t->opts[i].name);
			snprintf(err, errlen, "unknown %s '%.*s' (%s%s)", t->what, (int)klen, item,
				 t->see ? "" : "known: ", t->see ? t->see : known);
			return -1;
		}
		if (o->type == OPT_FLAG && eq) {
			snprintf(err, errlen, "invalid %s (%s takes no value)", item, o->name);
			return -1;
		}
		if (o->type != OPT_FLAG && !eq) {
			snprintf(err, errlen, "invalid %s= (needs a value)", o->name);
			return -1;
		}
		val = eq ? eq + 1 : item + klen;
	}
	if (opt_seen(t, o, seen, false, err, errlen) < 0)
		return -1;
	bool own;
	if (opt_store(o, val, target, err, errlen, &own) < 0) {
		if (!own)
			snprintf(err, errlen, "invalid %s=%s (%s)", o->name, val,
				 o->hint ? o->hint : "bad value");
		return -1;
	}
	return 0;
}

/* The items of spec; positional: the positional option was given apart
 * (opt_parse_spec_with), so the first item is a key like the others. */
static int spec_items(const struct opt_table *t, const char *spec, bool positional, void *target,
		      uint64_t seen, char *err, size_t errlen)
{
	char *copy = strdup(spec ? spec : "");
	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int r = 0;
	bool first = !positional;
	/* An empty spec is no item at all, unless the first item is positional. */
	if (copy[0] || (first && t->n && (t->opts[0].flags & OPT_POSITIONAL))) {
		for (char *p = copy;; first = false) {
			char *comma = strchr(p, ',');
			if (comma)
				*comma = '\0';
			r = opt_spec_item(t, p, first, target, &seen, err, errlen);
			if (r < 0 || !comma)
				break;
			p = comma + 1;
		}
	}
	free(copy);
	return r < 0 ? r : opt_required(t, seen, false, err, errlen);
}

int opt_parse_spec(const struct opt_table *t, const char *spec, void *target, char *err,
		   size_t errlen)
{
	return spec_items(t, spec, false, target, 0, err, errlen);
}

int opt_parse_spec_with(const struct opt_table *t, const char *key, const char *val,
			const char *spec, void *target, char *err, size_t errlen)
{
	const struct opt *o = opt_find(t, key, strlen(key));
	uint64_t seen = 0;
	bool own;
	if (!o) {
		snprintf(err, errlen, "unknown %s '%s'", t->what, key);
		return -1;
	}
	if (opt_seen(t, o, &seen, false, err, errlen) < 0)
		return -1;
	if (opt_store(o, val, target, err, errlen, &own) < 0) {
		if (!own)
			snprintf(err, errlen, "invalid %s=%s (%s)", o->name, val,
				 o->hint ? o->hint : "bad value");
		return -1;
	}
	return spec_items(t, spec, o->flags & OPT_POSITIONAL, target, seen, err, errlen);
}

void opt_print_help(FILE *out, const struct opt_table *t, bool spec)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct opt *o = &t->opts[i];
		if (!o->help)
			continue;
		char left[64];
		if (spec)
			snprintf(left, sizeof(left), "%s%s%s", o->name, o->metavar ? "=" : "",
				 o->metavar ? o->metavar : "");
		else
			snprintf(left, sizeof(left), "--%s%s%s", o->name, o->metavar ? " " : "",
				 o->metavar ? o->metavar : "");
		if (strlen(left) <= 16)
			fprintf(out, "  %-16s %s\n", left, o->help);
		else
			fprintf(out, "  %s\n  %-16s %s\n", left, "", o->help);
	}
}

void opt_print_synopsis(FILE *out, const struct opt_table *t, bool spec, int col, int indent,
			int width)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct opt *o = &t->opts[i];
		if (!o->help)
			continue;
		bool req = o->flags & OPT_REQUIRED, rep = o->flags & OPT_REPEAT;
		const char *mv = o->metavar ? o->metavar : "";
		char item[128];
		if (spec && (o->flags & OPT_POSITIONAL))
			snprintf(item, sizeof(item), "%s", mv);
		else if (spec)
			snprintf(item, sizeof(item), "%s%s%s%s%s%s", req ? "" : "[", i ? "," : "",
				 o->name, *mv ? "=" : "", mv, req ? "" : "]");
		else
			snprintf(item, sizeof(item), "%s--%s%s%s%s%s", req ? "" : "[", o->name,
				 *mv ? " " : "", mv, req ? "" : "]", rep ? "..." : "");
		int len = (int)strlen(item) + (spec ? 0 : 1);
		if (col + len > width && col > indent) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
		}
		fprintf(out, "%s%s", spec || col == indent ? "" : " ", item);
		col += len;
	}
}
