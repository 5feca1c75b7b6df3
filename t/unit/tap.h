/* SPDX-License-Identifier: MIT */
/* A tiny TAP emitter for the C unit tests in t/unit/. */
#ifndef PALLOC_TAP_H
#define PALLOC_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int tap_n, tap_failed;

/* Print "ok N - desc" or "not ok N - desc"; returns cond. */
static inline int tap_ok(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond)
		tap_failed++;
	return cond;
}

/* What fn(fp, ctx) writes to a memory stream, as a string to free (NULL:
 * no stream); fn's return value in *rc (unchanged without a stream). */
static inline char *tap_capture(int (*fn)(FILE *fp, void *ctx), void *ctx,
				int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	if (!fp)
		return NULL;
	*rc = fn(fp, ctx);
	fclose(fp);
	return buf;
}

/* Print the plan after the tests ("1..N") and return the exit status. */
static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif /* PALLOC_TAP_H */
