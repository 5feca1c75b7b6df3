/* SPDX-License-Identifier: MIT */
/* The agent's own descriptors, out of the program's way. */
#ifndef PALLOC_AGENT_FDHIGH_H
#define PALLOC_AGENT_FDHIGH_H

#include "common.h"

/*
 * The kernel gives every new descriptor the lowest free number, and the
 * program owns all of them: it closes them (daemons close every one at
 * start), dup2()s onto numbers it chose, and may open up to its
 * RLIMIT_NOFILE. A descriptor the agent keeps must not take a number the
 * program is about to get, and must not count against a tight limit. So
 * the agent keeps one only while the soft limit is at least
 * AGENT_FD_MIN_LIMIT, and only at a high number: just below the smaller of
 * that limit and FD_SETSIZE (1024, which keeps the kernel's descriptor
 * table small and select(2) users' numbers free), close-on-exec.
 */
#define AGENT_FD_MIN_LIMIT 64

/* Whether the descriptor limit leaves room for one of the agent's. */
bool agent_fd_room(void);

/*
 * Move fd (made by the agent a moment ago) to a high number, close-on-exec,
 * and close fd. Returns the new descriptor; -1 with errno set (EMFILE when
 * the limit is too tight or the high numbers are all taken), fd closed,
 * when it cannot; fd itself when fd < 0.
 */
int agent_fd_high(int fd);

#endif /* PALLOC_AGENT_FDHIGH_H */
