/* SPDX-License-Identifier: MIT */
/*
 * The comments the agent writes into its profiles that the commands read
 * back: one place for their format. The writers run inside the target
 * (no malloc, no stdio: a stack buffer and fmt); the readers run in the
 * commands, on profiles that are outside input (a comment that does not
 * read as expected counts as absent).
 */
#ifndef PALLOC_PPROF_COMMENTS_H
#define PALLOC_PPROF_COMMENTS_H

#include "common.h"
#include "pprof.h"

/* A comment the commands show as a warning beside the profile's summary:
 * "warning: TEXT" (most of the memory did not come through malloc). */
#define PPROF_COMMENT_WARNING "warning: "

/*
 * The agent's count of its samples: those it recorded, those it dropped
 * (their stack did not fit in its stack table, or no memory for them)
 * and the bytes the dropped ones stand for. The comment reads
 *
 *   sampled allocations: N; dropped samples: M, about B bytes allocated
 *   (stack table full at S stacks, or out of memory)
 *
 * (earlier agents wrote no ", about B bytes").
 */
struct pprof_comment_samples {
	uint64_t sampled;
	uint64_t dropped;
	uint64_t dropped_bytes;
	bool dropped_bytes_known; /* read: the comment gave B */
	size_t max_stacks;	  /* written: S; not read */
};

/* Add the samples comment to p. 0, or -1 on ENOMEM. */
int pprof_comment_add_samples(struct pprof_profile *p,
			      const struct pprof_comment_samples *s);
/* Add "pid: PID". 0, or -1 on ENOMEM. */
int pprof_comment_add_pid(struct pprof_profile *p, long pid);

/*
 * A memory pressure profile's comment (agent/pressure.c; palloc-run reads
 * it when the cgroup's OOM killer struck):
 *
 *   memory pressure: cgroup vV usage U bytes of a limit of L bytes
 *   (P.T % of the limit; threshold H %) at unix time S.MMM, from FILE
 */
struct pprof_comment_pressure {
	unsigned version;	/* of the cgroup hierarchy: 1 or 2 */
	uint64_t usage, limit;	/* bytes */
	uint64_t tenths;	/* usage in tenths of a percent of limit */
	unsigned threshold;	/* percent, the threshold crossed */
	int64_t sec, ms;	/* when: unix time, and its milliseconds */
	const char *usage_file; /* written; not read */
};

/* The pressure comment into buf[cap] (truncated to fit). */
void pprof_comment_format_pressure(char *buf, size_t cap,
				   const struct pprof_comment_pressure *m);

/* Read the samples comment of p into *s: true, or false (*s zero) when p
 * has none that reads so. */
bool pprof_comment_samples(const struct pprof_profile *p,
			   struct pprof_comment_samples *s);
/* Read p's first pressure comment into *m (usage_file NULL): true, or
 * false when p has none that reads so. */
bool pprof_comment_pressure(const struct pprof_profile *p,
			    struct pprof_comment_pressure *m);
/* The pid of the "pid: PID" comment, or 0. */
long pprof_comment_pid(const struct pprof_profile *p);
/* The TEXT of p's first warning comment (owned by p), or NULL. */
const char *pprof_comment_warning(const struct pprof_profile *p);

#endif /* PALLOC_PPROF_COMMENTS_H */
