/* SPDX-License-Identifier: MIT */
/* The agent's internal API: what its modules share beyond agent_int.h. */
#ifndef PALLOC_AGENT_H
#define PALLOC_AGENT_H

#include "common.h"
#include "pprof.h"

/*
 * libpalloc.so is built from the files in libcore/agent/ and the few
 * libcore modules it needs. Nothing here is exported from the .so
 * (-fvisibility=hidden); libpalloc.map pins the exports. The agent starts
 * no thread: every function here runs on one of the program's threads.
 *
 * Every function here may be called from any thread once the agent is
 * initialised (agent_program_name() returns "" before).
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
 * at rate 1; stacktab.h "The peak"). At most once a second, the slow path
 * of an allocation rewrites it (atomically) when the peak has grown by at
 * least 1/16 since the last write; at exit it is rewritten if the peak
 * grew at all. Under palloc-run, palloc-run writes it from the record.
 *
 * RTLD_DEEPBIND: a library dlopen()ed with it binds its own malloc calls
 * to its dependency libc first, so the agent does not see them (their
 * frees are harmless: forwarded untracked). The agent does not interpose
 * dlopen to warn about it: dlopen resolves $ORIGIN and the caller's
 * RUNPATH from its return address, which would become the agent's, so an
 * interposed dlopen would change which library the program loads.
 */

/* Measure the anonymous memory that did not come through malloc
 * (agent/unseen.h) against the heap the agent saw. Reads /proc; not for
 * hooks. Thread-safe. */
struct unseen;
void agent_get_unseen(struct unseen *u);

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

#endif /* PALLOC_AGENT_H */
