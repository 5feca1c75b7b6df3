/* SPDX-License-Identifier: MIT */
/* The stats and mallinfo documents of a process, made from its record. */
#ifndef PALLOC_RECORD_DOCS_H
#define PALLOC_RECORD_DOCS_H

#include "common.h"
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
 * What unseen.h computes inside the agent, from outside: the anonymous
 * memory of the process (/proc/PID/status text: RssAnon now, and at the
 * peak VmHWM - RssFile - RssShmem) against the malloc heap it saw. Pure:
 * status is the text of /proc/PID/status (NULL: unknown), heap_bytes
 * the larger of the allocator's mapped and allocated bytes,
 * heap_peak_bytes the sampled or exact peak plus overhead (-1: none),
 * own_bytes the agent's own anonymous memory (0 when not known).
 */
struct record_unseen {
	int64_t anon_bytes, anon_peak_bytes, heap_bytes, unseen_bytes;
	bool most, at_peak;
	const char *owner, *hint; /* static strings, or NULL */
};
void record_unseen_compute(struct record_unseen *u, const char *status,
			   int64_t heap_bytes, int64_t heap_peak_bytes,
			   int64_t own_bytes);

/* The likely owner of anonymous memory malloc did not give, from the
 * text of /proc/PID/maps (libjvm.so, libnode.so, libv8*, libpython*),
 * the executable's name and /proc/PID/environ's PYTHONMALLOC: sets
 * u->owner and u->hint (NULL, NULL when none). */
void record_unseen_owner(struct record_unseen *u, const char *maps,
			 const char *exe, const char *environ, size_t env_len);

/* The warning for u->most, as the agent words it. */
void record_unseen_text(const struct record_unseen *u, char *buf, size_t cap);

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
