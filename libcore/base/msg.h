/* SPDX-License-Identifier: MIT */
/* Errors: library code records them per thread; commands print them. */
#ifndef PALLOC_MSG_H
#define PALLOC_MSG_H

#include "common.h"
#include "exitcode.h"

/*
 * Library side. Library code never prints and never exits: it returns -1
 * or NULL after msg_set() has recorded why, in a per-thread buffer of
 * MSG_MAX bytes (longer messages are truncated). msg_set() formats with
 * vsnprintf, which does not allocate for %s, %d, %u, %x, %zu and the like;
 * it is async-signal-unsafe but may run inside the agent outside its hooks.
 */
#define MSG_MAX 512

/* Record "what 'subject': why" for this thread. Always returns -1. */
int msg_set(const char *fmt, ...) PALLOC_PRINTF(1, 2);
/* Same, then appends ": strerror(errnum)". Always returns -1. */
int msg_set_errno(int errnum, const char *fmt, ...) PALLOC_PRINTF(2, 3);
/* This thread's last recorded message ("" if none). Valid until the next
 * msg_set on this thread. */
const char *msg_last(void);

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if invalid. */
size_t msg_utf8_len(const unsigned char *s);

/*
 * Text received from elsewhere (another process, a file) printed for a
 * person: C0 controls (newline and tab included), DEL, the C1 controls
 * U+0080..U+009F and bytes that are not valid UTF-8 become "\xNN", so that
 * no escape sequence reaches the terminal and one item stays one line.
 * msg_escape() copies s escaped into out (outsz bytes, NUL included;
 * truncated at a character boundary) and returns out; no allocation.
 * msg_fputs_escaped() writes it to fp, 0 or -1 on a write error.
 * msg_error() and msg_warn() escape their whole message this way.
 */
char *msg_escape(const char *s, char *out, size_t outsz);
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

#endif /* PALLOC_MSG_H */
