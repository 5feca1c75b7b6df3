/* SPDX-License-Identifier: MIT */
/* The three layers reconciled: a process's Rss or a cgroup's usage as parts. */
#ifndef PALLOC_EXPLAIN_H
#define PALLOC_EXPLAIN_H

#include "common.h"

#include <jansson.h>

/*
 * palloc-explain's model (palloc-explain(1) and palloc(7) "Accounting"
 * give the formulas and their sources). A process: smaps_rollup's Rss as
 * the sum of named parts, each with its layer ("profile": what the program
 * asked for; "allocator": what the allocator holds beyond it; "kernel":
 * what the kernel maps that is not the allocator's), its bytes (null when
 * unknown) and its basis ("kernel": resident bytes from smaps; "agent":
 * exact counters; "profile": the sampled estimate; "allocator": as the
 * allocator reports it; "reconciled": an allocator figure cut down to what
 * the kernel shows resident; "remainder": a kernel total minus allocator
 * figures), plus "unexplained" = Rss - sum of the parts, which may be
 * negative. A cgroup: its usage (memory.current, memory.usage_in_bytes)
 * as the sum of memory.stat's parts, likewise.
 *
 * Both return the whole document of palloc-explain --json (first keys
 * "format": "palloc-explain", "format_version": 1; a new reference), or
 * NULL with msg_set() and errno as procfs.h and cgroup.h classify errors.
 * They do not print. ROOT as in procfs.h; with a ROOT set the agent is not
 * asked (a captured tree has none).
 */

struct explain_opts {
	const char *root;  /* "" for the live system */
	int timeout_ms;	   /* for each request to the agent */
	size_t top;	   /* top allocation sites listed (0: none) */
	bool no_agent;	   /* do not ask the agent */
	bool no_symbolize; /* keep the sites' raw addresses */
};

/* Explain PID's resident memory. */
json_t *explain_process(pid_t pid, const struct explain_opts *o);

/*
 * Explain a cgroup's usage: the directory DIR when not NULL, else PID's
 * memory cgroup (0: the caller's).
 */
json_t *explain_cgroup(pid_t pid, const char *dir,
		       const struct explain_opts *o);

/* The table for people of a document from either function. Returns 0,
 * or -1 on a write error. */
int explain_print_table(FILE *fp, const json_t *doc);

/*
 * Prometheus text of a document: palloc_explain_part_bytes{layer, part}
 * per known part, palloc_explain_total_bytes and
 * palloc_explain_unexplained_bytes, labelled pid and program (a process)
 * or cgroup (a cgroup). Returns 0, or -1 on a write error.
 */
int explain_prom(FILE *fp, const json_t *doc);

#endif /* PALLOC_EXPLAIN_H */
