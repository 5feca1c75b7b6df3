/* SPDX-License-Identifier: MIT */
/* What the commands know of a process under palloc: stats, allocator state,
 * profiles, read from its record. */
#ifndef PALLOC_ALLOCINFO_H
#define PALLOC_ALLOCINFO_H

#include "common.h"
#include "pprof.h"
#include "wire/record.h"

#include <jansson.h>
#include <limits.h>
#include <sys/types.h>

/*
 * For palloc-dump, palloc-mallinfo, palloc-explain and the HTTP server:
 * the documents by their paths ("/debug/pprof/heap",
 * "/debug/pprof/allocs", either with "?seconds=N",
 * "/debug/palloc/stats", "/debug/palloc/mallinfo"; the agent's control
 * socket answered these once), made from the process's record
 * (wire/record.h, tools/record_read.h): nothing runs in the target, so
 * an idle, stopped or blocked process answers at once, exactly. Every
 * figure comes from the record; the allocator's are the agent's last
 * snapshot, whose time and age the documents give (record_docs.h). A
 * process that maps no record, or whose /proc/PID/maps the caller cannot
 * read, is an error.
 *
 * On failure they return NULL with msg_set() holding the reason only
 * ("no such process", "no record mapped by process '42' (...)",
 * "record: entry at 16400: ..."); the command adds "cannot reach agent of
 * process 'PID'". Thread-safe (no shared state).
 *
 * timeout_ms: unused (nothing waits on the target any more); kept for
 * the commands' --timeout, accepted without effect.
 */

/* The commands' default --timeout, in milliseconds (no effect). */
#define ALLOCINFO_TIMEOUT_MS 10000

/*
 * The JSON object of target ("/debug/palloc/stats" or
 * "/debug/palloc/mallinfo", record_docs.h). Returns a new reference
 * (json_decref), or NULL.
 */
json_t *allocinfo_get_json(pid_t pid, const char *target, int timeout_ms);

/*
 * The profile of target (malloc'd; pprof_free), from the record: every
 * sample type, the default inuse_space ("/debug/pprof/heap") or
 * alloc_space ("/debug/pprof/allocs"), the title from /proc/PID/cmdline,
 * frames in no loaded object named from /proc/PID/maps (JIT code). With
 * "?seconds=N" (1 to 3600) the record is read twice N seconds apart
 * (this thread sleeps) and the result is pprof_delta() of the two.
 * Returns NULL on error.
 */
struct pprof_profile *allocinfo_get_profile(pid_t pid, const char *target,
					    int timeout_ms);

/*
 * The body of target as served over HTTP (*body malloc'd, *len, and the
 * Content-Type into ctype[ctype_len] when ctype is not NULL): a gzipped
 * profile, or the JSON document and a newline. Returns 0, or -1.
 */
int allocinfo_get_raw(pid_t pid, const char *target, int timeout_ms,
		      char **body, size_t *len, char *ctype, size_t ctype_len);

/* A process palloc-dump and palloc-mallinfo list. */
struct allocinfo_agent {
	pid_t pid;
	json_t *stats;	   /* /debug/palloc/stats, or NULL (dead, or error) */
	char error[256];   /* why stats is NULL for a live process */
	const char *state; /* "live", "exited", "killed" (record_read.h) */
	bool exited;	   /* exit_status is set */
	int32_t exit_status;
	int64_t start_ns;	  /* CLOCK_REALTIME, 0 unknown */
	int64_t end_ns;		  /* exited: at exit; killed: its last update */
	char program[RECORD_STR]; /* "" unknown; the process's bytes */
	char path[PATH_MAX];	  /* the record */
};

/*
 * The processes under palloc the caller can read: those whose
 * /proc/PID/maps maps a record (record_find_live), with the stats of
 * their record; then, with dead, the records of the caller's record
 * directory (record_list()) whose process is gone, "exited" or "killed",
 * without stats. Sorted by pid, then start time. A record directory that
 * cannot be read (planted by another user) is said to warn, when not
 * NULL; the live ones are still listed. timeout_ms: unused. Strings come from
 * other processes: escape them (msg_escape) before printing. *out is malloc'd;
 * free with allocinfo_agents_free. Returns 0 or -1.
 */
int allocinfo_list(struct allocinfo_agent **out, size_t *n, int timeout_ms,
		   bool dead, void (*warn)(void *ctx, const char *msg),
		   void *ctx);
void allocinfo_agents_free(struct allocinfo_agent *a, size_t n);

/* The pids of the live processes allocinfo_list() finds, sorted,
 * malloc'd into *out. The count, or -1. */
ssize_t allocinfo_live_pids(pid_t **out);

/*
 * A record file given by name (palloc-dump FILE.rec, pprof_read_file()):
 * its profile, default sample type alloc_space when allocs, time the
 * end (or the last update of a killed process). NULL with msg_set().
 */
struct pprof_profile *allocinfo_record_file_profile(const char *path,
						    bool allocs);

/* Its stats document (record_docs_stats(), "state" as record_list()
 * would say). NULL with msg_set(). */
json_t *allocinfo_record_file_stats(const char *path);

/* Does the file at path start with the record's magic? */
bool allocinfo_is_record_file(const char *path);

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
