/* SPDX-License-Identifier: MIT */
/* The stats and mallinfo documents of a process, made from its record. */
#ifndef PALLOC_RECORD_DOCS_H
#define PALLOC_RECORD_DOCS_H

#include "common.h"
#include "unseen_calc.h"
#include "record_profile.h"

#include <jansson.h>
#include <sys/types.h>

/*
 * The documents the agent's control thread served (/debug/palloc/stats,
 * /debug/palloc/mallinfo, palloc-dump(1) and palloc-mallinfo(1) document
 * them), made on the commands' side from a checked record
 * (record_profile.h) and what /proc says of the live process. The record
 * is untrusted: every string from it goes through json_str_or_null().
 * Not async-signal-safe (malloc); thread-safe on distinct views.
 */

/* What the commands know besides the record. */
struct record_docs_ctx {
	pid_t pid;	   /* the live process, or 0: a dead record */
	int64_t now_ns;	   /* CLOCK_REALTIME when the record was copied */
	const char *life;  /* "live", "exited", "killed" */
	const char *path;  /* the record file, or NULL */
	bool inconsistent; /* record_copy() kept a moving copy */
	const char *maps;  /* /proc/PID/maps of a live process, or NULL */
};

/*
 * What agent/unseen.h measures inside the agent, from outside, with
 * pprof/unseen_calc.h's figures: status is the text of /proc/PID/status
 * (NULL: unknown); heap_bytes, heap_peak_bytes and own_bytes as
 * unseen_compute() takes them.
 */
void record_unseen_compute(struct unseen *u, const char *status,
			   int64_t heap_bytes, int64_t heap_peak_bytes,
			   int64_t own_bytes);

/* The likely owner of anonymous memory malloc did not give, from the
 * text of /proc/PID/maps (libjvm.so, libnode.so, libv8*, libpython*),
 * the executable's name and /proc/PID/environ's PYTHONMALLOC: sets
 * u->owner and u->hint (NULL, NULL when none). */
void record_unseen_owner(struct unseen *u, const char *maps, const char *exe,
			 const char *environ, size_t env_len);

/*
 * /debug/palloc/stats: the keys of palloc-dump(1) in its order, then
 * "state" (c->life), "exit_status" (null unless exited), "start_time_ns",
 * "update_time_ns" (the agent's last slow path), "end_time_ns" (null
 * while running), "record_age_seconds" (now - update), "live_thread_count",
 * "record" (the file) and "record_inconsistent". A new reference, or NULL
 * with msg_set() on ENOMEM.
 */
json_t *record_docs_stats(const struct record_view *v,
			  const struct record_docs_ctx *c);

/*
 * /debug/palloc/mallinfo: "format", "format_version", "pid", "program",
 * "allocator", "allocator_object" (null: the record does not keep it),
 * "comparable", "specific" (glibc: "mallinfo2", "arenas", "total" from
 * the record's malloc_info text; other allocators: {}), then "time_ns"
 * (when the agent took the figures, null: never) and "age_seconds" (how
 * old they are), "torn" (taken while they changed). New reference or
 * NULL.
 */
json_t *record_docs_mallinfo(const struct record_view *v,
			     const struct record_docs_ctx *c);

/*
 * The allocator's kind as the record says it, or, when the agent has not
 * taken the allocator's figures yet (time_unix_ns 0), as the mapped
 * objects suggest (libjemalloc*, libmimalloc*, libtcmalloc*, else a
 * mapped libc.so: glibc); the object's path into object[cap] ("" when
 * none matches).
 */
uint32_t record_docs_allocator(const struct record_view *v, const char *maps,
			       char *object, size_t cap);

/* "glibc", "jemalloc", "mimalloc", "tcmalloc" or "unknown"
 * (allocstats.h's kinds, by number). */
const char *record_docs_allocator_name(uint32_t kind);

#endif /* PALLOC_RECORD_DOCS_H */
