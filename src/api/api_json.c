// SPDX-License-Identifier: Apache-2.0
#include "api/api_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_jscan.h"

/* Nesting deeper than Firecracker's objects go is refused. */
#define API_JSON_DEPTH 8

static const char *json_kind(struct json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null:
		return "null";
	case json_type_boolean:
		return "boolean";
	case json_type_double:
		return "floating point";
	case json_type_int:
		return "integer";
	case json_type_object:
		return "map";
	case json_type_array:
		return "sequence";
	default:
		return "string";
	}
}

int api_json_parse(const char *text, size_t len, struct json_object **out, char *err, size_t errlen)
{
	*out = NULL;
	struct json_tokener *tok = json_tokener_new_ex(API_JSON_DEPTH);
	if (!tok) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	struct json_object *o = json_tokener_parse_ex(tok, text, (int)len);
	enum json_tokener_error e = json_tokener_get_error(tok);
	size_t used = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (e == json_tokener_continue) {
		snprintf(err, errlen, "EOF while parsing a value");
		return -1;
	}
	if (e != json_tokener_success || !o) {
		snprintf(err, errlen, "%s", json_tokener_error_desc(e));
		return -1;
	}
	for (; used < len; used++) {
		if (!strchr(" \t\r\n", text[used])) {
			json_object_put(o);
			snprintf(err, errlen, "trailing characters");
			return -1;
		}
	}
	if (api_json_scan(text, len, o, err, errlen) < 0) {
		json_object_put(o);
		return -1;
	}
	*out = o;
	return 0;
}

static int field_index(const struct api_object *obj, const char *key)
{
	for (size_t i = 0; i < obj->n; i++)
		if (!strcmp(obj->fields[i].name, key))
			return (int)i;
	return -1;
}

static void unknown_field(const struct api_object *obj, const char *key, char *err, size_t errlen)
{
	/* serde's words: "expected `a`" for one field, "one of `a`, `b`" else. */
	size_t n = (size_t)snprintf(err, errlen, "unknown field `%s`, expected %s", key,
				    obj->n == 1 ? "" : "one of ");
	for (size_t i = 0; i < obj->n && n < errlen; i++)
		n += (size_t)snprintf(err + n, errlen - n, "%s`%s`", i ? ", " : "",
				      obj->fields[i].name);
}

/* An integer beyond i64 (negative) or u64: serde takes it as a float. */
static bool beyond_64(const char *raw)
{
	errno = 0;
	if (*raw == '-')
		(void)strtoll(raw, NULL, 10);
	else
		(void)strtoull(raw, NULL, 10);
	return errno == ERANGE;
}

/* An array field's length against its bound, its slots cleared: the
 * slots, or NULL with the reason. */
static char *arr_slots(const struct api_field *f, struct json_object *v, void *target, size_t *n,
		       char *err, size_t errlen)
{
	*n = json_object_array_length(v);
	if (*n > (size_t)f->max) {
		snprintf(err, errlen, "invalid length %zu for `%s`, expected at most %lld elements",
			 *n, f->name, (long long)f->max);
		return NULL;
	}
	char *arr = (char *)target + f->off;
	memset(arr, 0, f->size * (size_t)f->max);
	return arr;
}

/* Each element through the sub object's table, at most max of them
 * (serde has no bound: skiff's is the device count). */
static int arr_set(const struct api_field *f, struct json_object *v, void *target, char *err,
		   size_t errlen)
{
	size_t n;
	char *arr = arr_slots(f, v, target, &n, err, errlen);
	if (!arr)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (api_json_fill(f->sub, json_object_array_get_idx(v, i), arr + i * f->size, err,
				  errlen) < 0)
			return -1;
	*(uint32_t *)((char *)target + f->count_off) = (uint32_t)n;
	return 0;
}

/* Strings, each as AF_STR's, none empty (a skiff_allow entry that is ""
 * would be a mistake, never a wish). */
static int strs_set(const struct api_field *f, struct json_object *v, void *target, char *err,
		    size_t errlen)
{
	size_t n;
	char *arr = arr_slots(f, v, target, &n, err, errlen);
	if (!arr)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct json_object *s = json_object_array_get_idx(v, i);
		if (json_object_get_type(s) != json_type_string) {
			snprintf(err, errlen, "invalid type: %s, expected a string in `%s`",
				 json_kind(s), f->name);
			return -1;
		}
		size_t len = (size_t)json_object_get_string_len(s);
		if (!len || len >= f->size) {
			snprintf(
			    err, errlen,
			    "invalid length %zu for an element of `%s`, expected 1 to %zu bytes",
			    len, f->name, f->size - 1);
			return -1;
		}
		memcpy(arr + i * f->size, json_object_get_string(s), len + 1);
	}
	*(uint32_t *)((char *)target + f->count_off) = (uint32_t)n;
	return 0;
}

static int field_set(const struct api_field *f, struct json_object *v, void *target, char *err,
		     size_t errlen)
{
	char *dst = (char *)target + f->off;
	enum json_type t = json_object_get_type(v);
	switch (f->type) {
	case AF_STR:
		if (t != json_type_string)
			break;
		if ((size_t)json_object_get_string_len(v) >= f->size) {
			snprintf(err, errlen,
				 "invalid length %d for `%s`, expected at most %zu bytes",
				 json_object_get_string_len(v), f->name, f->size - 1);
			return -1;
		}
		memcpy(dst, json_object_get_string(v), (size_t)json_object_get_string_len(v) + 1);
		return 0;
	case AF_BOOL:
		if (t != json_type_boolean)
			break;
		*(bool *)dst = json_object_get_boolean(v);
		return 0;
	case AF_INT: {
		if (t != json_type_int)
			break;
		/* The number as the client wrote it: json-c clamps what does not
		 * fit 64 bits, which serde reads as a floating point. */
		char sent[32];
		const char *raw = api_json_raw(v);
		snprintf(sent, sizeof(sent), "%.24s", raw ? raw : "");
		if (!raw)
			snprintf(sent, sizeof(sent), "%lld", (long long)json_object_get_int64(v));
		if (raw && beyond_64(raw)) {
			snprintf(err, errlen, "invalid type: floating point `%s`, expected %s",
				 sent, f->expect);
			return -1;
		}
		int64_t x = json_object_get_int64(v);
		if (x < f->min || x > f->max) {
			snprintf(err, errlen, "invalid value: integer `%s`, expected %s", sent,
				 f->expect);
			if (x > f->max && f->flags & AF_SAY_MAX) {
				size_t n = strlen(err);
				snprintf(err + n, errlen - n, " up to %lld", (long long)f->max);
			}
			return -1;
		}
		*(int64_t *)dst = x;
		return 0;
	}
	case AF_OBJ:
		if (t != json_type_object)
			break;
		return api_json_fill(f->sub, v, dst, err, errlen);
	case AF_ARR:
		if (t != json_type_array)
			break;
		return arr_set(f, v, target, err, errlen);
	case AF_STRS:
		if (t != json_type_array)
			break;
		return strs_set(f, v, target, err, errlen);
	}
	if (t == json_type_double && api_json_raw(v))
		snprintf(err, errlen, "invalid type: floating point `%.24s`, expected %s",
			 api_json_raw(v), f->expect);
	else
		snprintf(err, errlen, "invalid type: %s, expected %s", json_kind(v), f->expect);
	return -1;
}

int api_json_fill(const struct api_object *obj, struct json_object *o, void *target, char *err,
		  size_t errlen)
{
	uint32_t *seen = (uint32_t *)((char *)target + obj->seen_off), got = 0;
	if (json_object_get_type(o) != json_type_object) {
		snprintf(err, errlen, "invalid type: %s, expected struct %s", json_kind(o),
			 obj->name);
		return -1;
	}
	json_object_object_foreach(o, key, v)
	{
		int i = field_index(obj, key);
		if (i < 0) {
			unknown_field(obj, key, err, errlen);
			return -1;
		}
		const struct api_field *f = &obj->fields[i];
		if (json_object_get_type(v) == json_type_null && !(f->flags & AF_REQUIRED))
			continue;
		if (field_set(f, v, target, err, errlen) < 0)
			return -1;
		got |= 1u << i;
	}
	*seen |= got;
	for (size_t i = 0; i < obj->n; i++) {
		if ((obj->fields[i].flags & AF_REQUIRED) && !(got & (1u << i))) {
			unsigned int line, col;
			int n = snprintf(err, errlen, "missing field `%s`", obj->fields[i].name);
			if (api_json_end(o, &line, &col) && n > 0 && (size_t)n < errlen)
				snprintf(err + n, errlen - (size_t)n, " at line %u column %u", line,
					 col);
			return -1;
		}
	}
	return 0;
}

int api_json_fill_text(const struct api_object *obj, const char *text, size_t len, void *target,
		       char *err, size_t errlen)
{
	struct json_object *o;
	if (api_json_parse(text, len, &o, err, errlen) < 0)
		return -1;
	int r = api_json_fill(obj, o, target, err, errlen);
	json_object_put(o);
	return r;
}

void api_json_merge(const struct api_object *obj, void *dst, const void *src)
{
	uint32_t seen = *(const uint32_t *)((const char *)src + obj->seen_off);
	for (size_t i = 0; i < obj->n; i++) {
		const struct api_field *f = &obj->fields[i];
		size_t size = f->type == AF_BOOL  ? sizeof(bool)
			      : f->type == AF_INT ? sizeof(int64_t)
			      : f->type == AF_ARR || f->type == AF_STRS
				  ? f->size * (size_t)f->max
				  : f->size; /* AF_STR, AF_OBJ */
		if ((seen >> i) & 1u)
			memcpy((char *)dst + f->off, (const char *)src + f->off, size);
		if ((seen >> i) & 1u && (f->type == AF_ARR || f->type == AF_STRS))
			memcpy((char *)dst + f->count_off, (const char *)src + f->count_off,
			       sizeof(uint32_t));
	}
	*(uint32_t *)((char *)dst + obj->seen_off) |= seen;
}

struct json_object *api_json_from(const struct api_object *obj, const void *src)
{
	struct json_object *o = json_object_new_object();
	for (size_t i = 0; o && i < obj->n; i++) {
		const struct api_field *f = &obj->fields[i];
		const char *p = (const char *)src + f->off;
		bool seen = API_FIELD_SEEN(obj, src, i);
		struct json_object *v = NULL;
		if (f->flags & AF_HIDDEN || (f->flags & AF_IF_SEEN && !seen))
			continue;
		if (f->type == AF_STR && (*p || seen))
			v = json_object_new_string(p);
		else if (f->type == AF_BOOL)
			v = json_object_new_boolean(*(const bool *)p);
		else if (f->type == AF_INT && (seen || !(f->flags & AF_OPTIONAL)))
			v = json_object_new_int64(*(const int64_t *)p);
		else if (f->type == AF_OBJ && *(const uint32_t *)(p + f->sub->seen_off))
			v = api_json_from(f->sub, p);
		else if (f->type == AF_ARR && seen && (v = json_object_new_array()))
			for (uint32_t k = 0;
			     k < *(const uint32_t *)((const char *)src + f->count_off); k++)
				json_object_array_add(v, api_json_from(f->sub, p + k * f->size));
		else if (f->type == AF_STRS && seen && (v = json_object_new_array()))
			for (uint32_t k = 0;
			     k < *(const uint32_t *)((const char *)src + f->count_off); k++)
				json_object_array_add(v, json_object_new_string(p + k * f->size));
		json_object_object_add(o, f->name, v); /* NULL: null */
	}
	return o;
}
