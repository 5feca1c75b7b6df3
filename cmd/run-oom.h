/* SPDX-License-Identifier: MIT */
/* palloc-run: was the program killed by the OOM killer? */
#ifndef PALLOC_RUN_OOM_H
#define PALLOC_RUN_OOM_H

#include "common.h"
#include "collect.h"

/*
 * The program's memory cgroup (palloc-run's own, which the program
 * inherits) and its OOM kill count, read before the program starts.
 */
struct run_oom {
	bool have;
	char *dir;	 /* the cgroup's directory */
	uint64_t kills;	 /* v2 memory.events oom_kill, v1 oom_control's
			  * oom_kill, else v1 memory.failcnt */
	uint64_t limit;	 /* memory.max, limit_in_bytes; 0: none */
	const char *src; /* which count */
	/* run_oom_check() */
	bool killed;	/* the count rose */
	uint64_t at;	/* the cgroup's peak usage (else the limit) */
	char *last;	/* the last profile's path, NULL: none */
	bool at_kill;	/* last: written from the record after the kill */
	int64_t age_ns; /* how long before the kill it was written */
	int pct10;	/* its percent of the limit x 10, -1: unknown */
};

/* Before the program: remember the cgroup and its count. */
void run_oom_start(struct run_oom *o);

/*
 * After the program died by SIGKILL at unix time killed_ns, and palloc-run
 * wrote the profiles of the killed processes from their records
 * (runrec.h), before the profiles are symbolized: did the count rise, and
 * which is the program's profile: the one written from its record after
 * the kill (exact at the kill), else the last it delivered (by
 * modification time; its pressure comment says when and at what
 * percent).
 */
void run_oom_check(struct run_oom *o, pid_t pid, const struct collect *col,
		   int64_t killed_ns);

/*
 * After the profiles were symbolized: when the count rose, print one
 * line saying so (the last profile's path shown relative to cwd, its age,
 * percent of the limit, top inuse function). Frees what o holds.
 */
void run_oom_report(struct run_oom *o, const char *program, const char *cwd);

#endif /* PALLOC_RUN_OOM_H */
