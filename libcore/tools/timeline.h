/* SPDX-License-Identifier: MIT */
/* palloc-run --timeline: the processes' memory over time, as NDJSON lines. */
#ifndef PALLOC_TIMELINE_H
#define PALLOC_TIMELINE_H

#include "common.h"
#include "collect.h"
#include "num.h"

#include <sys/types.h>

/*
 * A timeline is a file of JSON lines (palloc(7) "Timeline" documents every
 * key), written while the program runs so that `tail -f FILE | jq` follows
 * it: each line is written whole with one write(2), no buffering.
 *
 *   {"type":"sample","time_ns":T,"pid":P,"heap_inuse_bytes":…,
 *    "heap_alloc_bytes":…,"allocator_resident_bytes":…,
 *    "allocator_free_bytes":…,"rss_bytes":…,"anon_bytes":…,"file_bytes":…,
 *    "shmem_bytes":…,"swap_bytes":…,"cgroup_usage_bytes":…,
 *    "cgroup_limit_bytes":…}
 *   {"type":"event","time_ns":T,"pid":P,"event":E,…}
 *
 * One sample per profiled process (a live record) every period; a value
 * that cannot be read is null, its key kept. time_ns is CLOCK_REALTIME in
 * nanoseconds (the clock of logs). Everything is read from outside the
 * processes: their records (the heap: the sampled estimates, exact at
 * rate 1, heap_alloc_bytes null while a large record is not copied
 * again, timeline.c; the allocator's figures as the agent last took them),
 * /proc/PID/status (RSS and its parts, swap) and the memory cgroup's
 * files (usage and effective limit), so the program runs as without it.
 *
 * Events, with their extra keys: "profile" (path, kind: interval, peak,
 * pressure or exit), "exec" (exe, cmdline), "fork" (parent_pid, null when
 * unknown), "exit" (status: the shell's $?, 128+N for signal N, null when
 * unknown; signal: N or null), "oom_kill" (limit_bytes: the cgroup's
 * limit, or null), "threshold" (percent,
 * usage_bytes, limit_bytes). An event's time_ns is when it happened when
 * the record says so (a fork or exec: the agent's start; an exit: the
 * record's end), else when it was seen: lines are in the order written,
 * which for events may be up to a period behind their time_ns.
 *
 * Not async-signal-safe (malloc, a thread). Errors: -1 or NULL with
 * msg_set().
 */

#define TIMELINE_PERIOD_DEFAULT_MS 100
#define TIMELINE_PERIOD_MIN_MS 10
#define TIMELINE_PERIOD_MAX_MS 3600000

struct timeline;

/*
 * Open path for the timeline, before the program starts: created (mode
 * 0644 less umask) or truncated, never through a symbolic link (O_NOFOLLOW)
 * and only when it is a regular file (opened O_NONBLOCK, then fstat: a
 * FIFO, socket, device or directory is refused without blocking). NULL
 * with msg_set() ("cannot write timeline 'PATH': not a regular file").
 */
struct timeline *timeline_open(const char *path);

struct timeline_config {
	uint64_t period_ns; /* between samples of a process */
	/*
	 * The processes: the records in dir carrying token (32 hex digits:
	 * palloc-run's run, runrec.h), the first of pid being the program
	 * it ran (an exec event, no fork); or, dir NULL, the one process pid
	 * (palloc-run -p) and its live record (record_find_live()).
	 */
	const char *dir;
	const char *token;
	pid_t pid;
	/* threshold events: the percents of the cgroup's limit, ascending
	 * (one crossed before the process was first seen gives none) */
	unsigned percents[NUM_PERCENTS_MAX];
	size_t n_percents;
	/* its first write error, one line (NULL: not said) */
	void (*warn)(const char *line);
};

/* Start the sampling thread (its signals blocked). 0, or -1. */
int timeline_start(struct timeline *t, const struct timeline_config *cfg);

/*
 * A collect_set_hook() hook (ctx: the timeline): the profile event of
 * item it. Its kind: "peak" and "atNN" name theirs; a numbered one is an
 * interval profile, or an exit profile after timeline_ending().
 */
void timeline_profile(void *ctx, const struct collect_item *it);

/*
 * The end of the run (the program and its descendants reaped, or the
 * detach): stop sampling, write the exit events seen last (status null
 * when still unknown); the numbered profiles from now on are exit
 * profiles. NULL-safe.
 */
void timeline_ending(struct timeline *t);

/* palloc-run reaped pid with wait status status (the exit event's status
 * when the record does not say it). Thread-safe; NULL-safe. */
void timeline_reaped(struct timeline *t, pid_t pid, int status);

/* The OOM killer killed pid at time_ns (palloc-run's own finding), its
 * cgroup's limit limit (0: unknown): an oom_kill event unless one was
 * written for pid. NULL-safe. */
void timeline_oom_kill(struct timeline *t, pid_t pid, int64_t time_ns,
		       uint64_t limit);

/*
 * timeline_ending() unless done, then close the file and free t.
 * NULL-safe.
 * Returns 0, or -1 when a line could not be written (said through warn).
 */
int timeline_finish(struct timeline *t);

#endif /* PALLOC_TIMELINE_H */
