/* SPDX-License-Identifier: MIT */
/* The commands' half of msg: printing errors, usage and version. */
#include "msg_cli.h"

#include <stdarg.h>
#include <unistd.h>

static const char *prog_name = "palloc";

int msg_fputs_escaped(const char *s, FILE *fp)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = 0;

		while (p[n]) {
			size_t k = msg_printable_len(p + n);

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

	snprintf(last, sizeof(last), "%s", msg_last());
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
