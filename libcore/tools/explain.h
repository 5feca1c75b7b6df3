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
 * Both fill a struct explain_doc, the one model that palloc-explain
 * renders as JSON (explain_json), Prometheus text (explain_prom) or its
 * tables. They return 0, or -1 with msg_set() and errno as procfs.h and
 * cgroup.h classify errors (the doc is then empty). They do not print.
 * ROOT as in procfs.h; with a ROOT set the agent is not asked (a captured
 * tree has none).
 */

struct explain_opts {
	const char *root;  /* "" for the live system */
	int timeout_ms;	   /* for each request to the agent */
	size_t top;	   /* top allocation sites listed (0: none) */
	bool no_agent;	   /* do not ask the agent */
	bool no_symbolize; /* keep the sites' raw addresses */
};

/* One part of the total. The strings are static. */
struct explain_part {
	const char *layer, *name, *basis, *description;
	bool have; /* bytes known (JSON null otherwise) */
	int64_t bytes;
	bool heap; /* heap_inuse: the three members below are in its JSON */
	bool have_ci;
	int64_t ci_low, ci_high; /* 95 % interval of a sampled estimate */
	bool have_sampled;
	int64_t sampled; /* the sampled profile's inuse bytes */
};

/* One allocation site of the sampled profile, by inuse bytes. */
struct explain_site {
	char *function; /* NULL unknown */
	int64_t inuse;
	bool have_ci;
	int64_t ci_low, ci_high;
};

/* One thread stack found in the mappings. */
struct explain_stack {
	uint64_t start, end, rss;
	bool have_tid; /* a thread's stack pointer is in it */
	pid_t tid;
	char thread[32];
	const char *found_by; /* "stack_pointer", "guard_page" (static) */
};

#define EXPLAIN_MAX_PARTS 24

struct explain_doc {
	bool process; /* a process, else a cgroup */
	uint64_t time_ns;
	bool have_pid; /* not for a cgroup directory */
	pid_t pid;
	bool have_total;
	uint64_t total; /* Rss, or the cgroup's usage */
	/* a process */
	char program[64];
	const char *rss_source; /* "smaps_rollup", "smaps" */
	bool agent, attached;
	char allocator[32];	       /* "" unknown */
	const char *heap_inuse_source; /* NULL, "exact_usable", "sampled" */
	uint64_t smaps_rss;
	json_t *allocator_detail; /* the allocator's own figures, for the
				   * JSON only; NULL without the agent */
	struct explain_site *sites;
	size_t nsites;
	struct explain_stack *stacks;
	size_t nstacks;
	/* a cgroup */
	int cgroup_version;
	char *cgroup_path, *directory; /* NULL unknown */
	bool have_ws, have_limit, have_high, have_headroom, have_high_headroom;
	uint64_t ws, limit, high;
	int64_t headroom, high_headroom;
	/* both */
	struct explain_part parts[EXPLAIN_MAX_PARTS];
	size_t nparts;
	int64_t explained, unexplained; /* sum of the known parts; the rest */
	char **notes;
	size_t nnotes;
	bool oom; /* a list above could not grow */
};

/* Explain PID's resident memory into DOC. */
int explain_process(pid_t pid, const struct explain_opts *o,
		    struct explain_doc *doc);

/*
 * Explain a cgroup's usage into DOC: the directory DIR when not NULL,
 * else PID's memory cgroup (0: the caller's).
 */
int explain_cgroup(pid_t pid, const char *dir, const struct explain_opts *o,
		   struct explain_doc *doc);

void explain_doc_free(struct explain_doc *doc);

/*
 * DOC as palloc-explain --json prints it (first keys "format":
 * "palloc-explain", "format_version": 1; a new reference), or NULL with
 * msg_set() when out of memory.
 */
json_t *explain_json(const struct explain_doc *doc);

/*
 * Prometheus text of DOC: palloc_explain_part_bytes{layer, part} per
 * known part, palloc_explain_total_bytes and
 * palloc_explain_unexplained_bytes, labelled pid and program (a process)
 * or cgroup (a cgroup). Returns 0, or -1 on a write error.
 */
int explain_prom(FILE *fp, const struct explain_doc *doc);

#endif /* PALLOC_EXPLAIN_H */
