/* SPDX-License-Identifier: MIT */
/* Small jansson helpers so every command's JSON follows HACKING.md "JSON". */
#ifndef PALLOC_JSON_H
#define PALLOC_JSON_H

#include "common.h"

#include <jansson.h>

/*
 * How a command writes JSON (HACKING.md "JSON", palloc(7) JSON):
 *
 *	json_t *top = json_top_new("palloc-x"), *arr = json_array();
 *
 *	json_set(top, "size_bytes", json_u64(n));
 *	json_set(top, "peak_bytes", json_u64_or_null(have_peak, peak));
 *	json_push(arr, json_hex(addr));
 *	json_set(top, "addresses", arr);
 *	if (json_failed())
 *		... out of memory: msg_last() says so, print nothing ...
 *	else if (json_print(stdout, top, JSON_INDENT(2)) < 0)
 *		... write error, msg_last() says why ...
 *	json_decref(top);
 *
 * (json_top_new() may return NULL; json_set() on a NULL object only
 * records the failure, so the single json_failed() test covers it.)
 *
 * The whole value is built first and written in one go, so an error found
 * while collecting prints nothing on stdout. Keys come out in insertion
 * order (jansson >= 2.8), which is the order the man page documents.
 *
 * Integers: jansson stores json_int_t (long long). Byte counts from the
 * kernel are uint64_t; a value above INT64_MAX cannot be represented and
 * becomes null (the kernel's "unlimited" sentinels are handled by the
 * readers before they get here, never by a silent wrap to a negative).
 *
 * None of these functions print or exit. On allocation failure they return
 * NULL (or -1) after msg_set(); jansson's json_object_set_new() accepts a
 * NULL value and fails, so callers may nest them with json_set() without
 * checks and ask json_failed() once at the end.
 * Thread-safety: as jansson (separate values may be used from separate
 * threads; one value from one thread at a time).
 */

/*
 * A new object whose first keys are "format": FORMAT and
 * "format_version": 1. The caller owns the reference (json_decref).
 * Returns NULL with msg_set() on allocation failure.
 */
json_t *json_top_new(const char *format);

/*
 * The same with a given format_version, for a future incompatible change
 * (HACKING.md: a removed or renamed key means format_version + 1).
 */
json_t *json_top_new_version(const char *format, int version);

/*
 * An integer from an unsigned 64-bit value; null when V > INT64_MAX.
 * Returns a new reference, or NULL on allocation failure.
 */
json_t *json_u64(uint64_t v);

/* An integer when HAVE is true, else null. New reference or NULL. */
json_t *json_u64_or_null(bool have, uint64_t v);

/* A signed integer when HAVE is true, else null. New reference or NULL. */
json_t *json_i64_or_null(bool have, int64_t v);

/*
 * Figures that are -1 when unknown: "key": v, or "key": null when v < 0,
 * set in o. json_set_i64_fields() sets one for each of the n fields of a
 * table, in its order: the int64_t at base + off (a struct of figures,
 * the table made with offsetof). Allocation failures as json_set().
 */
void json_set_i64(json_t *o, const char *key, int64_t v);
struct json_i64_field {
	const char *key;
	size_t off;
};
void json_set_i64_fields(json_t *o, const void *base,
			 const struct json_i64_field *f, size_t n);

/* A real number when HAVE is true, else null (ratios, averages). */
json_t *json_real_or_null(bool have, double v);

/* A string, or null when S is NULL. The string is copied; each byte of
 * invalid UTF-8 (file names and command lines are arbitrary bytes) becomes
 * '?', so a hostile process name cannot make the output unprintable. */
json_t *json_str_or_null(const char *s);

/* An address as HACKING.md wants it: the string "0x<lower-case hex>". */
json_t *json_hex(uint64_t addr);

/*
 * Set KEY in OBJ to VALUE, stealing the reference (json_object_set_new).
 * A NULL OBJ or VALUE (an allocation failure upstream) or a failed set is
 * remembered for this thread, for json_failed(). Returns 0 or -1.
 */
int json_set(json_t *obj, const char *key, json_t *value);

/* Append VALUE to the array ARR, stealing the reference; failures are
 * remembered as in json_set(). Returns 0 or -1. */
int json_push(json_t *arr, json_t *value);

/*
 * Whether a json_set() or json_push() on this thread failed since the last
 * call; clears the flag. When true, msg_last() says "out of memory" and the
 * value being built must not be printed.
 */
bool json_failed(void);

/*
 * Write VALUE to FP with jansson's FLAGS (JSON_INDENT(2) for people,
 * JSON_COMPACT for one line of NDJSON), then a newline, and flush. Returns 0,
 * or -1 with msg_set() saying "write error" and errno's reason. Does not take
 * the reference. Keys keep their insertion order (JSON_PRESERVE_ORDER is
 * implied by jansson >= 2.8 and passed anyway for older documentation).
 */
int json_print(FILE *fp, const json_t *value, size_t flags);

#endif /* PALLOC_JSON_H */
