/* SPDX-License-Identifier: MIT */
/* Parsing numbers from users and files, with overflow and junk rejected. */
#ifndef PALLOC_NUM_H
#define PALLOC_NUM_H

#include "common.h"

/*
 * Parse a decimal integer in [0, UINT64_MAX]. With allow_suffix, one of the
 * binary suffixes k K KiB M MiB G GiB T TiB (powers of 1024) may follow.
 * Leading/trailing spaces, signs, empty strings, junk and overflow are
 * rejected. Returns 0 and sets *out, or -1 with msg_set() saying why.
 * Thread-safe; does not allocate.
 */
int num_parse_u64(const char *s, bool allow_suffix, uint64_t *out);

/* Same for a signed decimal in [INT64_MIN, INT64_MAX], no suffix. */
int num_parse_i64(const char *s, int64_t *out);

/*
 * Parse a non-negative decimal number of seconds ("2", "0.5") into
 * nanoseconds. Returns 0 and sets *ns, or -1 with msg_set() saying why.
 */
int num_parse_seconds(const char *s, uint64_t *ns);

/*
 * Parse a list of percents, "80,90,95" (each 1 to 100, at most
 * NUM_PERCENTS_MAX, in any order, repeats once), or "0" (none), as
 * PALLOC_DUMP_AT and palloc-run --dump-at take it. Sets out[0..*n) in
 * ascending order without repeats. Returns 0, or -1 with msg_set() saying
 * why ("" and a trailing comma are invalid; "0" is not "").
 * Thread-safe; does not allocate.
 */
#define NUM_PERCENTS_MAX 8
int num_parse_percents(const char *s, unsigned out[NUM_PERCENTS_MAX],
		       size_t *n);

/* The value of the hex digit c (0-9, a-f, A-F), or -1. */
int num_hex_digit(int c);

/*
 * Parse exactly 2 * n hex digits (either case, nothing else) into
 * out[0..n). Returns 0, or -1 with msg_set() saying why (out then
 * unchanged). Thread-safe; does not allocate.
 */
int num_parse_hex_bytes(const char *s, uint8_t *out, size_t n);

#endif /* PALLOC_NUM_H */
