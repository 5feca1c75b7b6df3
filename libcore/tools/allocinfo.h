/* SPDX-License-Identifier: MIT */
/* The commands' side of the agent: fetch stats, allocator state and profiles.
 */
#ifndef PALLOC_ALLOCINFO_H
#define PALLOC_ALLOCINFO_H

#include "common.h"
#include "pprof.h"

#include <jansson.h>

/*
 * Thin helpers over ctlsock_get() for palloc-dump, palloc-mallinfo and the
 * HTTP server: one GET to a process's agent, the status checked, the body
 * decoded. On failure they return NULL with msg_set() holding the reason
 * only ("no such process", "timed out after 5000 ms", "agent answered 404
 * Not Found: ..."); the command adds "cannot reach agent of process 'PID'".
 * Thread-safe (no shared state).
 */

/* Default wait for each read from an agent, in milliseconds. */
#define ALLOCINFO_TIMEOUT_MS 10000

/*
 * GET target and decode the JSON object answered. Returns a new reference
 * (json_decref), or NULL.
 */
json_t *allocinfo_get_json(pid_t pid, const char *target, int timeout_ms);

/*
 * GET target and decode the pprof profile answered (malloc'd; pprof_free).
 * Returns NULL on error.
 */
struct pprof_profile *allocinfo_get_profile(pid_t pid, const char *target,
					    int timeout_ms);

/*
 * GET target and return the body as it came (*body malloc'd, *len, and the
 * Content-Type into ctype[ctype_len] when ctype is not NULL), only for a
 * 200 answer. Returns 0, or -1.
 */
int allocinfo_get_raw(pid_t pid, const char *target, int timeout_ms,
		      char **body, size_t *len, char *ctype, size_t ctype_len);

/* A live agent, as palloc-dump and palloc-mallinfo list them. */
struct allocinfo_agent {
	pid_t pid;
	json_t *stats; /* /debug/palloc/stats, or NULL when it did not answer */
	char error[256]; /* why stats is NULL */
};

/* Longest wait for each agent of a listing: one hung agent must not make
 * a listing of many take minutes. */
#define ALLOCINFO_LIST_TIMEOUT_MS 2000

/*
 * The agents of ctlsock_list() with their stats, fetched with timeout_ms,
 * at most ALLOCINFO_LIST_TIMEOUT_MS per agent (one that does not answer in
 * time is listed with its error; the time is the whole exchange's). A
 * socket directory skipped as unsafe (ctlsock.h) is said to warn, when
 * not NULL. The error strings and stats come from other processes: escape
 * them (msg_escape) before printing. *out is malloc'd; free with
 * allocinfo_agents_free. Returns 0 or -1.
 */
int allocinfo_list(struct allocinfo_agent **out, size_t *n, int timeout_ms,
		   void (*warn)(void *ctx, const char *msg), void *ctx);
void allocinfo_agents_free(struct allocinfo_agent *a, size_t n);

/* Integer member key of obj, or -1 when absent, null or not an integer. */
int64_t allocinfo_int(const json_t *obj, const char *key);

/* One process's documents, for the Prometheus rendering. */
struct allocinfo_proc {
	pid_t pid;
	const char *program; /* label value; "" when unknown */
	json_t *stats;	     /* /debug/palloc/stats, or NULL */
	json_t *mallinfo;    /* /debug/palloc/mallinfo, or NULL */
};

/*
 * Write the palloc_* families of the agents' counters (from stats) and the
 * allocator's comparable fields (from mallinfo) for n processes, each
 * sample labelled pid and program; a family with no sample is still
 * declared (HELP, TYPE). Metric names are listed in palloc-dump(1).
 * Returns 0, or -1 on a write error.
 */
int allocinfo_prom(FILE *fp, const struct allocinfo_proc *v, size_t n);

#endif /* PALLOC_ALLOCINFO_H */
