// SPDX-License-Identifier: Apache-2.0
/* Declarative options. One table per command or device kind gives each
 * option's name, type, range, default and help; one parser reads both
 * command lines (`--name VALUE`) and device specs (`key=value,...`), and
 * `--help` and the synopsis in docs/CLI.md are printed from the same table,
 * so the three cannot drift apart.
 *
 * Errors are one line: on a command line "invalid --NAME 'VALUE': HINT",
 * in a spec "invalid KEY=VALUE (HINT)", where HINT is the option's own. */
#ifndef SKIFF_OPT_H
#define SKIFF_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum opt_type {
	OPT_FLAG,   /* no value: sets a bool */
	OPT_ONOFF,  /* on|off: a bool */
	OPT_STR,    /* const char *, borrowed from argv (command lines only) */
	OPT_INT,    /* int in [min, max] */
	OPT_UINT,   /* unsigned int in [min, max] */
	OPT_U64,    /* uint64_t in [min, max], stored times `scale` (us -> ns) */
	OPT_SIZE,   /* uint64_t with K/M/G/T suffix in [min, max] bytes */
	OPT_ENUM,   /* int: index into choices */
	OPT_CUSTOM, /* parse() does it */
};

#define OPT_ONCE       1u  /* given twice is an error ("mac= given twice") */
#define OPT_REQUIRED   2u  /* missing is an error (hint is the message) */
#define OPT_POSITIONAL 4u  /* spec only: the first item, before any key */
#define OPT_REPEAT     8u  /* command line only: each use calls parse() */
#define OPT_OPTVAL     16u /* command line only: "--name" alone means value "" */
/* A device spec's key that names something of the host the device opens:
 * its value is a char array at off (a custom parser fills it). A
 * migration's target checks these against its skiff_allow
 * (vmm/vmm_mig_allow.h) before it builds anything. */
#define OPT_HOST_PATH  32u /* a file or socket path */
#define OPT_HOST_IFACE 64u /* a network interface (a tap) */

struct opt {
	const char *name;
	enum opt_type type;
	size_t off; /* of the field in the target struct */
	unsigned int flags;
	uint64_t min, max, scale;
	const char *const *choices; /* OPT_ENUM, NULL-terminated */
	/* OPT_CUSTOM (and OPT_REPEAT): 0, or -1 with a complete one-line
	 * message in err. val is NUL-terminated, "" when empty. */
	int (*parse)(const struct opt *o, const char *val, void *target, char *err, size_t errlen);
	const char *hint;    /* what a valid value is, for errors */
	const char *metavar; /* for help: "SIZE", "N"; NULL for flags */
	const char *help;    /* one line; NULL hides the option from help */
};

struct opt_table {
	const struct opt *opts;
	size_t n;
	const char *what; /* "option", "disk option": unknown-key errors */
	const char *see;  /* appended to unknown-key errors, or NULL */
};

#define OPT_TABLE(arr, w, s)                                                                       \
	{                                                                                          \
		.opts = (arr), .n = sizeof(arr) / sizeof((arr)[0]), .what = (w), .see = (s)        \
	}

/* Parses argv[1..argc) of a command ("--name value", "--name=value" and
 * "--flag") into target. 0, or -1 with one line in err. */
int opt_parse_argv(const struct opt_table *t, int argc, char **argv, void *target, char *err,
		   size_t errlen);
/* Parses "item,key=value,flag" into target (which the caller set to its
 * defaults). 0, or -1 with one line in err. */
int opt_parse_spec(const struct opt_table *t, const char *spec, void *target, char *err,
		   size_t errlen);
/* As opt_parse_spec, with the option key given apart as a typed value:
 * val is taken whole (a path with a comma in it stays one path), and spec
 * holds the other options only (no positional item if key is the
 * positional option; key again in spec is "given twice" if OPT_ONCE). */
int opt_parse_spec_with(const struct opt_table *t, const char *key, const char *val,
			const char *spec, void *target, char *err, size_t errlen);
/* Prints one help line per visible option (a help text), for --help:
 * "--name METAVAR" or, for a spec, "key=METAVAR". */
void opt_print_help(FILE *out, const struct opt_table *t, bool spec);
/* Prints the options as a synopsis, "[--name METAVAR]" or "[,key=METAVAR]",
 * starting at column col, wrapping at width to indent. */
void opt_print_synopsis(FILE *out, const struct opt_table *t, bool spec, int col, int indent,
			int width);

/* Value parsers shared with other commands. */
int parse_size(const char *s, uint64_t *out);
int parse_int(const char *s, long min, long max, long *out);

#endif
