// SPDX-License-Identifier: Apache-2.0
/* What json-c lets through but Firecracker's serde refuses, found in the
 * raw text after json-c has parsed it: duplicate keys (json-c keeps the
 * last), "\u0000", lone surrogates in \u escapes, invalid UTF-8, NaN,
 * Infinity and numbers such as "1." that RFC 8259 does not allow. The
 * same pass remembers where each object ends and how each number was
 * written, for serde's "at line L column C" and for quoting a number as
 * the client sent it (json-c clamps integers beyond 64 bits). */
#ifndef SKIFF_API_JSCAN_H
#define SKIFF_API_JSCAN_H

#include <json-c/json.h>
#include <stddef.h>

/* Checks text (which json-c parsed into root) and attaches positions and
 * number texts to root's objects and numbers. 0, or -1 with serde-like
 * words (and the place) in err. */
int api_json_scan(const char *text, size_t len, struct json_object *root, char *err, size_t errlen);
/* The line and column of an object's closing brace; 0 if unknown. */
int api_json_end(struct json_object *o, unsigned int *line, unsigned int *col);
/* A number as written ("18446744073709551616"), or NULL if unknown. */
const char *api_json_raw(struct json_object *v);

#endif
