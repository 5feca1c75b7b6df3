/* SPDX-License-Identifier: MIT */
/* Errors: library code records them per thread (msg_cli.h prints them). */
#ifndef PALLOC_MSG_H
#define PALLOC_MSG_H

#include "common.h"

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
 * msg_fputs_escaped() (msg_cli.h) writes it to a stream, and msg_error()
 * and msg_warn() escape their whole message this way.
 */
char *msg_escape(const char *s, char *out, size_t outsz);

/*
 * The length of the printable run at s (a whole UTF-8 character, at
 * least 1 byte), or 0 when s[0] must be escaped: C0 controls, DEL, the
 * C1 controls U+0080..U+009F (U+009B is CSI to some terminals) and bytes
 * that are not valid UTF-8.
 */
size_t msg_printable_len(const unsigned char *s);

#endif /* PALLOC_MSG_H */
