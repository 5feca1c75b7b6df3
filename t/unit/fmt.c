/* SPDX-License-Identifier: MIT */
/* Unit test of the allocation-free formatter. */
#include "fmt.h"
#include "tap.h"

static int same(const char *want, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int same(const char *want, const char *fmt, ...)
{
	char buf[128], ref[128];
	struct fmt_buf b;
	va_list ap, ap2;

	va_start(ap, fmt);
	va_copy(ap2, ap);
	fmt_init(&b, buf, sizeof(buf));
	fmt_vappend(&b, fmt, ap);
	vsnprintf(ref, sizeof(ref), fmt, ap2);
	va_end(ap2);
	va_end(ap);
	return tap_ok(strcmp(buf, want) == 0 && strcmp(ref, want) == 0 &&
			      b.len == strlen(want),
		      "'%s' gives '%s' (got '%s')", fmt, want, buf);
}

int main(void)
{
	char small[8];
	struct fmt_buf b;

	same("x=42", "x=%d", 42);
	same("-7 7", "%d %u", -7, 7u);
	same("ff 00ff", "%x %04x", 255u, 255u);
	same("18446744073709551615", "%llu", (unsigned long long)UINT64_MAX);
	same("-9223372036854775808", "%lld", (long long)INT64_MIN);
	same("123 abc", "%zu %s", (size_t)123, "abc");
	same("   42|-0042", "%5d|%05d", 42, -42);
	same("ab 100%", "%s 100%%", "ab");
	same("c=z", "c=%c", 'z');
	same("0x1f", "%p", (void *)0x1f);

	{
		const char *volatile nul = NULL;

		fmt_init(&b, small, sizeof(small));
		fmt_append(&b, "%s", nul);
		tap_ok(strcmp(small, "(null)") == 0, "NULL string");
	}
	fmt_init(&b, small, sizeof(small));
	fmt_append(&b, "%s", "0123456789");
	tap_ok(strcmp(small, "0123456") == 0 && b.truncated && b.len == 7,
	       "truncates to the buffer and says so");
	fmt_init(&b, small, sizeof(small));
	fmt_append(&b, "ab");
	fmt_append(&b, "%d", 12);
	tap_ok(strcmp(small, "ab12") == 0 && !b.truncated, "appends");
	errno = 99;
	fmt_warn("unit test message %d (expected on stderr)", 1);
	tap_ok(errno == 99, "fmt_warn keeps errno");
	return tap_done();
}
