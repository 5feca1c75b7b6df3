/* SPDX-License-Identifier: MIT */
/* Reading a /proc file line by line inside the target. */
#ifndef PALLOC_AGENT_LINES_H
#define PALLOC_AGENT_LINES_H

#include "common.h"

/*
 * Call fn(line, len, arg) for each line of the file at path (without its
 * newline; the last line too when it has none), read through a stack
 * buffer of 8192 bytes: no malloc, no stdio, safe to call with the agent's
 * locks held. A line longer than the buffer is not passed. The file is opened
 * O_CLOEXEC and closed before the call returns. Returns 0, or -1 with errno
 * when path cannot be opened; a read error ends the walk early (the lines seen
 * so far were passed). Thread-safe; not async-signal-safe only as far as fn is
 * not.
 */
int agent_lines(const char *path,
		void (*fn)(const char *line, size_t len, void *arg), void *arg);

#endif /* PALLOC_AGENT_LINES_H */
