/* SPDX-License-Identifier: MIT */
/* A formatter that never allocates, for the agent's messages and names. */
#include "fmt.h"

#include <unistd.h>

void fmt_init(struct fmt_buf *b, char *buf, size_t cap)
{
	b->buf = buf;
	b->len = 0;
	b->cap = cap;
	b->truncated = false;
	if (cap)
		buf[0] = '\0';
}

static void put(struct fmt_buf *b, char c)
{
	if (b->len + 1 < b->cap) {
		b->buf[b->len++] = c;
		b->buf[b->len] = '\0';
	} else {
		b->truncated = true;
	}
}

void fmt_mem(struct fmt_buf *b, const char *s, size_t n)
{
	/* As put() for each byte, in one copy: what fits before the
	 * terminating NUL, the rest cut. */
	size_t room = b->len + 1 < b->cap ? b->cap - 1 - b->len : 0;

	if (n > room) {
		n = room;
		b->truncated = true;
	}
	if (!n)
		return;
	memcpy(b->buf + b->len, s, n);
	b->len += n;
	b->buf[b->len] = '\0';
}

/* Digits of v in base (10 or 16), right-aligned in width with pad. */
static void put_num(struct fmt_buf *b, unsigned long long v, unsigned base,
		    bool neg, unsigned width, char pad)
{
	char tmp[24];
	size_t n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (neg && pad == '0')
		put(b, '-');
	for (size_t w = n + (neg ? 1 : 0); w < width; w++)
		put(b, pad);
	if (neg && pad != '0')
		put(b, '-');
	while (n)
		put(b, tmp[--n]);
}

void fmt_vappend(struct fmt_buf *b, const char *fmt, va_list ap)
{
	for (const char *f = fmt; *f; f++) {
		const char *start = f;
		unsigned width = 0;
		char pad = ' ';
		int lng =
			0; /* 0 int, 1 long, 2 long long, 3 size_t, 4 intmax */

		if (*f != '%') {
			/* The text up to the next conversion in one copy. */
			const char *e = strchrnul(f, '%');

			fmt_mem(b, f, (size_t)(e - f));
			f = e - 1;
			continue;
		}
		f++;
		if (*f == '0') {
			pad = '0';
			f++;
		}
		while (*f >= '0' && *f <= '9')
			width = width * 10 + (unsigned)(*f++ - '0');
		if (*f == 'l') {
			lng = 1;
			if (*++f == 'l') {
				lng = 2;
				f++;
			}
		} else if (*f == 'z') {
			lng = 3;
			f++;
		} else if (*f == 'j') {
			lng = 4;
			f++;
		}
		switch (*f) {
		case 'd':
		case 'i': {
			long long v;

			if (lng == 1)
				v = va_arg(ap, long);
			else if (lng == 2)
				v = va_arg(ap, long long);
			else if (lng == 3)
				v = va_arg(ap, ssize_t);
			else if (lng == 4)
				v = va_arg(ap, intmax_t);
			else
				v = va_arg(ap, int);
			put_num(b,
				v < 0 ? 0ULL - (unsigned long long)v
				      : (unsigned long long)v,
				10, v < 0, width, pad);
			break;
		}
		case 'u':
		case 'x': {
			unsigned long long v;

			if (lng == 1)
				v = va_arg(ap, unsigned long);
			else if (lng == 2)
				v = va_arg(ap, unsigned long long);
			else if (lng == 3)
				v = va_arg(ap, size_t);
			else if (lng == 4)
				v = va_arg(ap, uintmax_t);
			else
				v = va_arg(ap, unsigned int);
			put_num(b, v, *f == 'x' ? 16 : 10, false, width, pad);
			break;
		}
		case 'p':
			put(b, '0');
			put(b, 'x');
			put_num(b, (uintptr_t)va_arg(ap, void *), 16, false,
				width, pad);
			break;
		case 's': {
			const char *s = va_arg(ap, const char *);
			size_t n;

			if (!s)
				s = "(null)";
			n = strlen(s);
			for (size_t w = n; w < width; w++)
				put(b, ' ');
			fmt_mem(b, s, n);
			break;
		}
		case 'c':
			put(b, (char)va_arg(ap, int));
			break;
		case '%':
			put(b, '%');
			break;
		case '\0':
			fmt_mem(b, start, (size_t)(f - start));
			return;
		default:
			fmt_mem(b, start, (size_t)(f - start) + 1);
			break;
		}
	}
}

void fmt_append(struct fmt_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fmt_vappend(b, fmt, ap);
	va_end(ap);
}

void fmt_warn(const char *fmt, ...)
{
	char buf[1024];
	struct fmt_buf b;
	va_list ap;
	int saved = errno;
	size_t off = 0;

	fmt_init(&b, buf, sizeof(buf) - 1);
	fmt_append(&b, "palloc: ");
	va_start(ap, fmt);
	fmt_vappend(&b, fmt, ap);
	va_end(ap);
	buf[b.len++] = '\n';
	while (off < b.len) {
		ssize_t w = write(2, buf + off, b.len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	errno = saved;
}

void fmt_copy(char *dst, size_t cap, const char *src, size_t max)
{
	size_t n = strnlen(src, max);

	if (n >= cap)
		n = cap - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}
