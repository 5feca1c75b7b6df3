/* SPDX-License-Identifier: MIT */
/* Per-thread error recording for libcore, and escaping for people. */
#include "msg.h"

#include <stdarg.h>
#include <unistd.h>

static __thread char last_msg[MSG_MAX];

PALLOC_PRINTF(1, 0) static void vset(const char *fmt, va_list ap)
{
	int n = vsnprintf(last_msg, sizeof(last_msg), fmt, ap);

	if (n < 0)
		last_msg[0] = '\0';
}

int msg_set(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset(fmt, ap);
	va_end(ap);
	return -1;
}

int msg_set_errno(int errnum, const char *fmt, ...)
{
	va_list ap;
	size_t len;

	va_start(ap, fmt);
	vset(fmt, ap);
	va_end(ap);
	len = strlen(last_msg);
	if (len < sizeof(last_msg))
		snprintf(last_msg + len, sizeof(last_msg) - len, ": %s",
			 strerror(errnum));
	return -1;
}

const char *msg_last(void)
{
	return last_msg;
}

size_t msg_utf8_len(const unsigned char *s)
{
	size_t n, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past U+10FFFF are invalid. */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
	    (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

size_t msg_printable_len(const unsigned char *s)
{
	size_t n;

	if (s[0] < 0x20 || s[0] == 0x7f)
		return 0;
	n = msg_utf8_len(s);
	if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)
		return 0;
	return n;
}

char *msg_escape(const char *s, char *out, size_t outsz)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	if (!outsz)
		return out;
	while (*p) {
		size_t n = msg_printable_len(p);

		if (n == 0) {
			if (o + 5 > outsz)
				break;
			snprintf(out + o, 5, "\\x%02x", *p);
			o += 4;
			p++;
			continue;
		}
		if (o + n + 1 > outsz)
			break;
		memcpy(out + o, p, n);
		o += n;
		p += n;
	}
	out[o] = '\0';
	return out;
}
