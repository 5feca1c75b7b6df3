/* SPDX-License-Identifier: MIT */
/* The commands' half of msg: errors, warnings, usage and version printed. */
#ifndef PALLOC_MSG_CLI_H
#define PALLOC_MSG_CLI_H

#include "common.h"
#include "exitcode.h"
#include "msg.h"

#include <stdio.h>

/* Write s escaped as msg_escape() does to fp: 0, or -1 on a write error. */
int msg_fputs_escaped(const char *s, FILE *fp);

/*
 * Command side: messages are "palloc-X: ...", one line on stderr, per
 * HACKING.md "Errors and exit codes".
 */

/*
 * Remember the program name (basename of argv0) for every message, and
 * register the stdout check at exit: the one place a failed write to
 * standard output is reported ("write error on standard output: why"),
 * exit PALLOC_EXIT_TROUBLE; EPIPE (the reader went away) is not reported.
 */
void msg_init(const char *argv0);
/*
 * Note that a write to stdout failed with ERR, for the check at exit: stdio
 * forgets the reason once it drops the buffer it could not write.
 */
void msg_stdout_failed(int err);
/* The name set by msg_init, e.g. "palloc-run". */
const char *msg_prog(void);
/* "palloc-X: <fmt>\n" on stderr. */
void msg_error(const char *fmt, ...) PALLOC_PRINTF(1, 2);
/* "palloc-X: warning: <fmt>\n" on stderr. */
void msg_warn(const char *fmt, ...) PALLOC_PRINTF(1, 2);
/* msg_error() with the library's last message appended: "<fmt>: <last>". */
void msg_error_last(const char *fmt, ...) PALLOC_PRINTF(1, 2);
/* A usage error: the message, then "Try 'palloc-X --help' for more
 * information.", then exit(code). Nothing goes to stdout. */
PALLOC_NORETURN void msg_usage(int code, const char *fmt, ...)
	PALLOC_PRINTF(2, 3);
/* "palloc-X from palloc VERSION" and the features line on stdout, exit 0. */
PALLOC_NORETURN void msg_version(void);

#endif /* PALLOC_MSG_CLI_H */
