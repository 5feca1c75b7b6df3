/* SPDX-License-Identifier: MIT */
/* Per-thread error recording for libcore, and message printing for commands. */
#include "msg.h"

#include <stdarg.h>
#include <unistd.h>

static __thread char last_msg[MSG_MAX];
static const char *prog_name = "palloc";

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

/*
 * The length of the printable run at s (a whole UTF-8 character, at
 * least 1 byte), or 0 when s[0] must be escaped: C0 controls, DEL, the
 * C1 controls U+0080..U+009F (U+009B is CSI to some terminals) and bytes
 * that are not valid UTF-8.
 */
static size_t printable_len(const unsigned char *s)
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
		size_t n = printable_len(p);

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

int msg_fputs_escaped(const char *s, FILE *fp)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = 0;

		while (p[n]) {
			size_t k = printable_len(p + n);

			if (k == 0)
				break;
			n += k;
		}
		if (n && fwrite(p, 1, n, fp) != n)
			return -1;
		p += n;
		if (*p && fprintf(fp, "\\x%02x", *p++) < 0)
			return -1;
	}
	return 0;
}

static int stdout_err; /* the first failed write to stdout, if known */

void msg_stdout_failed(int err)
{
	if (!stdout_err)
		stdout_err = err;
}

/*
 * At exit, stdout must have reached its destination: a write error is one
 * message and exit 2, except EPIPE (the reader went away on purpose). The
 * commands leave the report to this.
 */
static void close_stdout(void)
{
	bool failed = ferror(stdout) != 0;
	int e = stdout_err;

	if (fflush(stdout) != 0) {
		failed = true;
		e = e ? e : errno;
	}
	if (fclose(stdout) != 0) {
		failed = true;
		e = e ? e : errno;
	}
	if (failed && !e)
		e = EIO;
	if (failed && e != EPIPE) {
		msg_error("write error on standard output: %s", strerror(e));
		_exit(PALLOC_EXIT_TROUBLE);
	}
}

void msg_init(const char *argv0)
{
	const char *slash = argv0 ? strrchr(argv0, '/') : NULL;

	if (argv0)
		prog_name = slash ? slash + 1 : argv0;
	/* libtool may run the real binary as lt-palloc-X. */
	if (strncmp(prog_name, "lt-", 3) == 0)
		prog_name += 3;
	atexit(close_stdout);
}

const char *msg_prog(void)
{
	return prog_name;
}

/*
 * One line on stderr. The subjects and reasons in messages come from
 * files, profiles and other processes (an agent's answer, a mapping's file
 * name): whatever a terminal could take as a command is escaped, and a
 * message stays one line.
 */
PALLOC_PRINTF(2, 0)
static void vprint(const char *prefix, const char *fmt, va_list ap,
		   const char *suffix)
{
	char small[1024], *buf = small;
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n >= (int)sizeof(small)) {
		buf = malloc((size_t)n + 1);
		if (buf)
			vsnprintf(buf, (size_t)n + 1, fmt, aq);
		else
			buf = small;
	}
	va_end(aq);
	if (n < 0)
		small[0] = '\0';
	if (fflush(stdout) != 0)
		msg_stdout_failed(errno); /* for the report at exit */
	fprintf(stderr, "%s: %s", prog_name, prefix);
	msg_fputs_escaped(buf, stderr);
	if (suffix) {
		fputs(": ", stderr);
		msg_fputs_escaped(suffix, stderr);
	}
	fputc('\n', stderr);
	if (buf != small)
		free(buf);
}

void msg_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint("", fmt, ap, NULL);
	va_end(ap);
}

void msg_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint("warning: ", fmt, ap, NULL);
	va_end(ap);
}

void msg_error_last(const char *fmt, ...)
{
	va_list ap;
	char last[MSG_MAX];

	snprintf(last, sizeof(last), "%s", last_msg);
	va_start(ap, fmt);
	vprint("", fmt, ap, last[0] ? last : NULL);
	va_end(ap);
}

void msg_usage(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint("", fmt, ap, NULL);
	va_end(ap);
	fprintf(stderr, "Try '%s --help' for more information.\n", prog_name);
	exit(code);
}

void msg_version(void)
{
	printf("%s from palloc %s\n", prog_name, PACKAGE_VERSION);
	printf("features: pprof protobuf-c zlib libelf libdw libunwind jansson "
	       "libmicrohttpd\n");
	exit(0);
}
