/* SPDX-License-Identifier: MIT */
/* A formatter that never allocates: printf-like text into a caller's buffer. */
#ifndef PALLOC_FMT_H
#define PALLOC_FMT_H

#include "common.h"

#include <stdarg.h>

/*
 * The agent cannot use stdio inside its hooks (stdio allocates and locks),
 * so its messages, file names and profile comments are built with this
 * module into stack buffers and written with write(2). Nothing here calls
 * malloc, takes a lock or touches errno; every function is
 * async-signal-safe and thread-safe (state lives in the caller's struct).
 *
 * Output is always NUL-terminated; text that does not fit is cut and
 * fmt_buf.truncated is set.
 */
struct fmt_buf {
	char *buf;
	size_t len; /* characters written, without the NUL */
	size_t cap; /* size of buf, including room for the NUL */
	bool truncated;
};

/* Start an empty string in buf[cap] (cap >= 1). */
void fmt_init(struct fmt_buf *b, char *buf, size_t cap);

/*
 * Append formatted text. Understands %s (NULL prints "(null)"), %c, %%,
 * %d %i %u %x with the length modifiers l, ll, z and j, %p, and a minimum
 * field width with '0' or space padding (e.g. %08x, %5u). Anything else is
 * copied verbatim.
 */
void fmt_append(struct fmt_buf *b, const char *fmt, ...) PALLOC_PRINTF(2, 3);
void fmt_vappend(struct fmt_buf *b, const char *fmt, va_list ap)
	PALLOC_PRINTF(2, 0);

/* Append n bytes of s (which need not be NUL-terminated). */
void fmt_mem(struct fmt_buf *b, const char *s, size_t n);

/* Copy src, up to its NUL or its max bytes (a fixed field of a record,
 * whatever it holds), into dst[cap] (cap >= 1): cut, NUL-terminated. */
void fmt_copy(char *dst, size_t cap, const char *src, size_t max);

/* Write "palloc: <text>\n" to fd 2 in one write(2); errno is preserved.
 * Long messages are cut at 1024 bytes. */
void fmt_warn(const char *fmt, ...) PALLOC_PRINTF(1, 2);

#endif /* PALLOC_FMT_H */
