/* SPDX-License-Identifier: MIT */
/* A command's background thread, told to stop through a pipe. */
#ifndef PALLOC_BGTHREAD_H
#define PALLOC_BGTHREAD_H

#include "common.h"

#include <pthread.h>

/*
 * palloc-run's watcher of the records (runrec.c) and its timeline
 * (timeline.c) each run a thread that looks at the processes now and
 * then until the program is over. The thread starts with every signal
 * blocked, so that the program's signals (SIGINT, SIGTERM, SIGCHLD...)
 * reach the command's main thread; it sleeps in bgthread_sleep(), which
 * returns early when bgthread_stop() writes to the pipe.
 */
struct bgthread {
	pthread_t th;
	int wake[2]; /* the pipe; -1 when not running */
	bool running;
};

/* A bgthread that is not running (wake -1): to call before any other. */
void bgthread_init(struct bgthread *b);

/*
 * Start fn(arg) on a new thread of B (from bgthread_init or stopped).
 * Returns 0, or -1 with msg_set_errno("cannot WHAT") when the pipe or
 * the thread cannot be made (B then not running). The caller's signal
 * mask is as it was. Not thread-safe against other calls on B.
 */
int bgthread_start(struct bgthread *b, void *(*fn)(void *), void *arg,
		   const char *what);

/*
 * On B's thread: wait up to timeout_ms (>= 0). Returns true when the
 * thread is to end (bgthread_stop was called, or poll(2) failed other
 * than EINTR), false when the time is up or a signal interrupted.
 */
bool bgthread_sleep(const struct bgthread *b, int timeout_ms);

/* Tell B's thread to end, join it and close the pipe; nothing when B is
 * not running. Not from B's own thread. */
void bgthread_stop(struct bgthread *b);

#endif /* PALLOC_BGTHREAD_H */
