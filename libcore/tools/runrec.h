/* SPDX-License-Identifier: MIT */
/* palloc-run's records: the run's directory and the profiles made from them. */
#ifndef PALLOC_RUNREC_H
#define PALLOC_RUNREC_H

#include "common.h"
#include "collect.h"
#include "num.h"

#include <sys/types.h>

/*
 * palloc-run gives its processes' agents a private record directory
 * (PALLOC_RECORD_DIR, wire/record.h) and a token (PALLOC_RUN_TOKEN, 16
 * random bytes as 32 hex digits that the agent copies into
 * header.token), and makes profiles from the records itself: every
 * interval and at a new peak while the processes run, and at the end for
 * every process that left a record but no profile (killed by SIGKILL or
 * the OOM killer: its record is exact up to the kill). Only records
 * carrying the run's token are read (another user may create files in a
 * directory shared with the program's users, below; a record is also
 * checked in full by record_check()). The profiles are written through
 * collect_add() (collect.h), which names, numbers and lists them. The
 * agents write none of their own (agent.c: a token and a record file),
 * and nothing else passes between them and palloc-run.
 *
 * The directory: "palloc-run.<32 hex digits>" (128 random bits) in
 * $XDG_RUNTIME_DIR (a directory of the user's), else /tmp; mode 0700.
 * Run as root, the program may drop privileges (a daemon, su, sudo -u):
 * then in /tmp, mode 1777 (as /tmp itself), so that a process of any user
 * can create its record there (the agent creates "PID.START.rec" 0600,
 * O_EXCL), and cannot remove or replace another user's file (sticky);
 * records planted there by others do not carry the token (and a record is
 * read from a copy, checked in full). runrec_free() removes the directory
 * and everything in it (never following a symbolic link).
 *
 * Not async-signal-safe (malloc, stdio on /proc, a thread). Errors: NULL
 * or -1 with msg_set().
 */

struct runrec;

struct runrec_config {
	uint64_t interval_ns; /* a profile of each live process every this
			       * many ns (%n numbered); 0: none */
	bool peak;	      /* a "peak" profile when a record's peak grew */
	/* memory pressure: an "atNN" profile when the usage of a process's
	 * memory cgroup crosses each of these percents of its limit
	 * (ascending; n_dump_at 0: none) */
	unsigned dump_at[NUM_PERCENTS_MAX];
	size_t n_dump_at;
	/* The watcher's first problem, one line (called from its thread;
	 * NULL: not said) */
	void (*warn)(const char *line);
};

/*
 * Make the run's directory and token (above), for profiles written
 * through col (not NULL). Nothing runs until runrec_watch().
 */
struct runrec *runrec_start(struct collect *col,
			    const struct runrec_config *cfg);

/* The directory (PALLOC_RECORD_DIR) and the token in hex
 * (PALLOC_RUN_TOKEN), valid until runrec_free(). */
const char *runrec_dir(const struct runrec *r);
const char *runrec_token(const struct runrec *r);

/*
 * Start the thread that, every 100 ms, reads the directory and writes the
 * interval, peak and pressure profiles of the live processes (nothing
 * when cfg asked for none). Its signals are blocked. 0, or -1.
 */
int runrec_watch(struct runrec *r);

/* Stop that thread (a profile being written is finished first). */
void runrec_stop(struct runrec *r);

/*
 * The wait status of process pid as palloc-run reaped it, or -1 when it
 * did not reap it (a descendant whose parent did).
 */
typedef int (*runrec_status_fn)(void *ctx, pid_t pid);

/*
 * After the run (runrec_stop() done, the processes ended or the grace
 * over): write the exit profile of every record of the run whose process
 * ended (EXITED; or RUNNING and the process gone: killed, crashed),
 * numbered as its next profile, and
 * with cfg.peak its peak profile too when the peak grew since the last
 * one. Not for a record whose image exec'd another program (a later
 * record of the same process, the same process still running another
 * program, or a status from status_fn saying it exited: exec'd into a
 * program without the agent), nor for a process still running. Problems are
 * warnings through warn. Returns how many profiles were written.
 */
size_t runrec_finish(struct runrec *r, runrec_status_fn status_fn, void *ctx,
		     void (*warn)(const char *line));

/* Stop, remove the directory and what is in it, free. NULL-safe. */
void runrec_free(struct runrec *r);

struct record_view;
struct record_profile_opts;
struct record_stats;

/*
 * The profile of the record V made with O (record_profile.h), COMMENT
 * added unless NULL, written through collect_add() to COL as process
 * PID's of UID, named by ST's program and title (or command line) and
 * numbered SEQ (NULL: the next number). palloc-run and palloc-run -p
 * write every profile this way. Returns 0, 1 when discarded (/dev/null),
 * or -1 with msg_set().
 */
int runrec_collect(struct collect *col, const struct record_view *v,
		   const struct record_profile_opts *o,
		   const struct record_stats *st, pid_t pid, uid_t uid,
		   const char *seq, const char *comment);

#endif /* PALLOC_RUNREC_H */
