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

/*
 * At exit, stdout must have reached its destination: a write error is
 * exit 1 with a message, except EPIPE (the reader went away on purpose).
 */
static void close_stdout(void)
{
	bool failed = ferror(stdout) != 0;

	if (fflush(stdout) != 0)
		failed = true;
	if (fclose(stdout) != 0)
		failed = true;
	if (failed && errno != EPIPE) {
		msg_error("write error: %s", strerror(errno));
		_exit(1);
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

PALLOC_PRINTF(2, 0)
static void vprint(const char *prefix, const char *fmt, va_list ap,
		   const char *suffix)
{
	fflush(stdout);
	fprintf(stderr, "%s: %s", prog_name, prefix);
	vfprintf(stderr, fmt, ap);
	if (suffix)
		fprintf(stderr, ": %s", suffix);
	fputc('\n', stderr);
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
