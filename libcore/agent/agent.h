/* SPDX-License-Identifier: MIT */
/* The agent's internal API: what the control server and the hooks share. */
#ifndef PALLOC_AGENT_H
#define PALLOC_AGENT_H

#include "common.h"
#include "pprof.h"

/*
 * libpalloc.so is built from the files in libcore/agent/ and the few
 * libcore modules it needs. This header is the seam between the interposer and
 * sampler (hooks.c, threads.c, encode.c, agent.c) and the control socket server
 * and allocator statistics (control.c, allocstats.c: helper F). Nothing here is
 * exported from the .so (-fvisibility=hidden); libpalloc.map pins the exports.
 *
 * Every function here may be called from any thread once the agent is
 * initialised (agent_program_name() returns "" before), including from the
 * control thread, which runs with the reentrancy guard set.
 */

/*
 * Environment beyond PALLOC_OUTPUT and PALLOC_SAMPLE_RATE (palloc(7)):
 *
 *  PALLOC_SEED=N   N a decimal integer; 0 or unset: each thread's sampling
 *                  PRNG is seeded from pid, tid, the clock and its TLS
 *                  address (every run samples differently). N > 0: thread
 *                  k (in the order threads first reach the agent) uses the
 *                  stream seeded by (N, k), so a program that allocates the
 *                  same sequence samples the same allocations in every run
 *                  (reproducible profiles, deterministic tests). Invalid
 *                  values warn and mean 0. The profile's comments record it.
 *
 * Error bars: at a rate above 1 each sample carries the numeric labels
 * alloc_objects_stddev, alloc_space_stddev, inuse_objects_stddev,
 * inuse_space_stddev (and peak_inuse_*_stddev with PALLOC_PEAK), units
 * "count" and "bytes": the square root of the sum over that stack's
 * sampled allocations of the per-allocation variance, w (w - s) bytes^2
 * and (1/p)(1/p - 1) objects^2 (stacktab.h). Variances add: a reader that
 * merges samples sums the squares, sigma = sqrt(sum stddev^2).
 *
 * PALLOC_PEAK=1 also writes a peak file: the output pattern with %n
 * expanded to "peak", or without %n, ".peak" before the final ".pb.gz"
 * (palloc.prog.123.peak.pb.gz), default sample type peak_inuse_space:
 * every stack's inuse at the high-water mark of the inuse estimate (exact
 * at rate 1; stacktab.h "The peak"). An agent thread checks once a second
 * and rewrites it (atomically) when the peak has grown by at least 1/16
 * since the last write; at exit it is rewritten if the peak grew at all.
 * Never written from a hook.
 *
 * RTLD_DEEPBIND: a library dlopen()ed with it binds its own malloc calls
 * to its dependency libc first, so the agent does not see them (their
 * frees are harmless: forwarded untracked). The agent does not interpose
 * dlopen to warn about it: dlopen resolves $ORIGIN and the caller's
 * RUNPATH from its return address, which would become the agent's, so an
 * interposed dlopen would change which library the program loads.
 */

/* Exact counters, summed over every thread (live ones plus those exited). */
struct agent_stats {
	uint64_t alloc_count; /* every allocation call */
	uint64_t free_count;  /* every free of a non-NULL pointer */
	uint64_t alloc_bytes; /* requested bytes, summed */
	int64_t inuse_bytes;  /* PALLOC_EXACT=1: live usable bytes; else -1 */
	uint64_t peak_inuse_bytes; /* exact mode: peak of inuse_bytes; else
				    * the peak of the sampled inuse estimate */
	bool exact;		   /* PALLOC_EXACT=1 in effect */
	uint64_t sampled_count;	   /* allocations that were sampled */
	uint64_t dropped_count;	   /* samples lost: stack table full, ENOMEM */
	uint64_t dropped_bytes;	   /* their estimated allocated bytes */
	uint64_t stack_count;	   /* distinct stacks in the stack table */
	uint64_t sample_rate;	   /* mean bytes between samples (0: off) */
	double uptime_seconds;	   /* since the agent initialised */
};

/* Fill *st. Thread-safe; takes the thread registry lock briefly. */
void agent_get_stats(struct agent_stats *st);

/* Measure the anonymous memory that did not come through malloc
 * (agent/unseen.h) against the heap the agent saw. Reads /proc; not for
 * hooks. Thread-safe. */
struct unseen;
void agent_get_unseen(struct unseen *u);

/*
 * The current raw (unsymbolized) heap profile: the four sample types (six
 * with PALLOC_PEAK), mappings with build ids, locations with addresses,
 * thread labels, comments. Allocated in the agent's arena; the caller frees
 * it with pprof_free(). NULL on ENOMEM (or when the agent is not running),
 * with msg_set(). Thread-safe (serialised with the other dumps).
 */
struct pprof_profile *agent_build_profile(void);

/* The agent's private mmap-backed arena, as pprof's allocator hooks.
 * Thread-safe; never calls the interposed malloc. */
const struct pprof_allocator *agent_allocator(void);

/*
 * The reentrancy guard of the calling thread. Between enter and leave,
 * allocations made on this thread (by the agent, or by libraries it calls)
 * are forwarded to the real allocator untracked. Nests.
 */
void agent_guard_enter(void);
void agent_guard_leave(void);

/* The program name used for %e: the executable's file name as exec'd
 * (never the title a program writes over argv), file-name safe; "" before
 * init. */
const char *agent_program_name(void);

/*
 * Provided by control.c (helper F); weak so the agent links without it.
 * control_start() makes the listening socket at the end of agent init
 * (returns 0 or -1; a failure is reported by control.c itself and does
 * not stop the agent); nothing serves it until control_start_thread()
 * (once the program has threads of its own; idempotent; 0 or -1 with
 * msg_set()) or control_serve_inline() (from the program's own thread at
 * the slow path of an allocation: serves what is ready without waiting,
 * rate-limited). control_stop() runs at exit, before the exit dump,
 * control_after_fork_child() in the pthread_atfork child handler, after
 * the agent's own locks are reset (it makes the child's socket; no
 * thread). All are called with the guard set.
 */
int control_start(void) __attribute__((weak));
int control_start_thread(void) __attribute__((weak));
void control_serve_inline(void) __attribute__((weak));
void control_stop(void) __attribute__((weak));
void control_after_fork_child(void) __attribute__((weak));

#endif /* PALLOC_AGENT_H */
