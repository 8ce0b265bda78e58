// SPDX-License-Identifier: Apache-2.0
/* JSON bodies (json-c) into typed C structs, strictly: a table per object
 * names each field, its type and range; unknown fields, wrong types and
 * missing required fields are refused with serde's wording, as
 * Firecracker's API refuses them. */
#ifndef SKIFF_API_JSON_H
#define SKIFF_API_JSON_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum api_ftype {
	AF_STR,	 /* char[size] */
	AF_BOOL, /* bool */
	AF_INT,	 /* int64_t in [min, max] */
	AF_OBJ,	 /* a nested object (sub's table) at off, size bytes */
	AF_ARR,	 /* an array of at most max sub objects of size bytes at off,
		  * their count in the uint32_t at count_off */
	AF_STRS, /* an array of at most max strings, not empty, each a
		  * char[size] at off + i * size; the count as AF_ARR's */
};

#define AF_REQUIRED 1u
#define AF_HIDDEN   2u /* never written back (GET) */
#define AF_IF_SEEN  4u /* written back only if it was given (skiff's own) */
#define AF_OPTIONAL 8u /* an integer written back as null if not given */
/* A bound below the type's own (skiff's, not serde's): a value over it says it. */
#define AF_SAY_MAX 16u

struct api_field {
	const char *name;
	enum api_ftype type;
	size_t off, size;
	int64_t min, max;
	unsigned int flags;
	const char *expect;	      /* serde's name of the type: "u8", "a string" */
	const struct api_object *sub; /* AF_OBJ, AF_ARR */
	size_t count_off;	      /* AF_ARR */
};

struct api_object {
	const char *name; /* for messages */
	const struct api_field *fields;
	size_t n;	 /* at most 32: fields given go in a 32-bit mask */
	size_t seen_off; /* of the uint32_t mask in the struct */
};

#define API_FIELD_SEEN(obj, target, i)                                                             \
	((*(const uint32_t *)((const char *)(target) + (obj)->seen_off) >> (i)) & 1u)

/* Parses text into *out (an object or any value). 0, or -1 with serde-like
 * words in err. The caller puts the result. */
int api_json_parse(const char *text, size_t len, struct json_object **out, char *err,
		   size_t errlen);
/* Fills target from the JSON object o by the table (fields absent keep
 * their values; null is absent for optional fields). 0 or -1 with err. */
int api_json_fill(const struct api_object *obj, struct json_object *o, void *target, char *err,
		  size_t errlen);
/* Parses text and fills target: api_json_parse + api_json_fill. */
int api_json_fill_text(const struct api_object *obj, const char *text, size_t len, void *target,
		       char *err, size_t errlen);
/* Copies the fields src's mask marks into dst (a PATCH), and the mask. */
void api_json_merge(const struct api_object *obj, void *dst, const void *src);
/* The object as JSON, as Firecracker's serde writes its Options: strings
 * if given or not empty (else null), booleans always, integers always (but
 * AF_OPTIONAL ones null if not given), objects if any of their fields was
 * given (else null); AF_IF_SEEN fields only if given, hidden ones never.
 * A new json-c object. */
struct json_object *api_json_from(const struct api_object *obj, const void *src);

#endif
