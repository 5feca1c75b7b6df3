/* SPDX-License-Identifier: MIT */
/* State shared inside the agent: the interposer (bootstrap.c, threads.c,
 * hooks.c, hooks_cxx.c), the record and the life cycle (agent.c). */
#ifndef PALLOC_AGENT_INT_H
#define PALLOC_AGENT_INT_H

#include "agent.h"
#include "agent_record.h"
#include "arena.h"
#include "lock.h"
#include "phdr.h"
#include "stacktab.h"
#include "unwind.h"

#include <limits.h>
#include <pthread.h>

/*
 * Per-thread state, in initial-exec TLS so that the hot path reaches it
 * with one %fs-relative access and no call to __tls_get_addr (which may
 * allocate on first use). Initialised by the loader from the TLS image
 * (threads.c): all zero except free_count. left == 0 sends a thread's
 * first allocation to the slow path, and free_count == UINT64_MAX its
 * first free (the count wraps to 0: the carry is the test); either
 * registers the thread.
 */
enum agent_thread_state {
	AGENT_THREAD_NEW = 0,
	AGENT_THREAD_LIVE,   /* registered: counters summed by readers */
	AGENT_THREAD_EXITED, /* key destructor ran: counters folded */
};

struct agent_thread {
	/*
	 * Bytes until the next sample. malloc's fast path subtracts n and
	 * takes the slow path when that reaches or passes 0 (hooks_int.h
	 * left_take): so 0 sends every allocation there, which is how the
	 * guard, exact mode, a new thread and the agent off or disabled are
	 * seen without a test of their own. While the guard is held left is
	 * 0 and the countdown waits in held (hooks_int.h guard_enter).
	 */
	uint64_t left;
	uint64_t alloc_count, free_count;
	union {
		struct {
			unsigned guard; /* >0: the agent's own calls (nests):
					 * allocations are forwarded
					 * untracked, frees uncounted */
			unsigned quiet; /* the part of guard that is expected
					 * (C++ forwarding, fork): not
					 * counted as reentry; alone, the
					 * light guard of C++ forwarding
					 * (hooks_cxx.c) */
		};
		uint64_t guard_quiet; /* either: the slow paths' test */
	};
	/*
	 * alloc_bytes (requested bytes, summed) is bytes_base - left, mod
	 * 2^64: malloc's fast path lowers left by n and so counts n bytes
	 * with no add of its own. Whenever left and bytes_base change
	 * together (guard_enter, guard_leave: hooks_int.h) they do so under
	 * seq, a seqcount (odd while the pair changes) for readers on other
	 * threads.
	 */
	uint64_t bytes_base;
	unsigned seq;
	uint64_t held;	      /* the countdown while the guard is held */
	uint64_t held_frees;  /* free_count when the guard was taken: the
			       * frees counted meanwhile are the agent's */
	uint64_t early_frees; /* frees before the agent started */
	uint64_t sample_left; /* exact mode: countdown (left stays 0) */
	uint64_t rng;
	uint64_t reentries; /* guarded allocations after warm-up */
	uint64_t samples;
	int state;		   /* enum agent_thread_state */
	bool warm;		   /* one sample done: unwinder caches built */
	unsigned char exit_rounds; /* key destructor calls at thread exit */
	bool agent_thread; /* started by the agent: never counts reentries
			    * (never set now: the agent starts no thread) */
	char name[STACKTAB_THREAD_NAME];
	uint64_t name_time_ns; /* when name was read (coarse clock) */
	struct agent_thread *next, *prev; /* registry */
	unsigned unwinding; /* inside libunwind (hooks.c unwind_fenced) */
	uint32_t stack_gen; /* agent_tab.gen when stack was found */
	struct record_stack *stack; /* the last stack sampled (thread_stack) */
	/* Weights per thread (hooks.c): an open-addressing table of recs_cap
	 * (a power of two, or 0) records keyed by stack id, recs_n used;
	 * rec: the one found last. recs and recs_cap change under
	 * agent_reg_lock, the records by this thread only. */
	struct record_rec *recs, *rec;
	uint32_t recs_cap, recs_n;
	/* Its slot in the record (agent_record.h), or NULL: its counters
	 * are copied there at its slow paths (hooks.c thread_sync). */
	struct record_thread *slot;
};

extern __thread struct agent_thread agent_tls
	__attribute__((tls_model("initial-exec")));

/* AGENT_OFF until the constructor has read the configuration. */
enum agent_mode {
	AGENT_OFF = 0,
	AGENT_ON,
	AGENT_DISABLED, /* AT_SECURE, failed init, or a fork child that must
			 * not profile (PALLOC_FOLLOW_CHILDREN=0) */
};

struct agent_config {
	uint64_t rate;
	uint64_t interval_ns;
	enum unwind_mode unwind;
	unsigned max_depth;
	bool follow_children, peak, exact;
	uint64_t seed;	       /* PALLOC_SEED; 0: from time, pid, tid */
	char output[PATH_MAX]; /* absolute pattern */
};

extern int agent_mode;
extern struct agent_config agent_cfg;

/*
 * The locks, in the order they are taken (atfork prepare takes all of them in
 * this order, parent and child release them in reverse):
 *  1. agent_dump_lock  serialises profile building and writing;
 *  2. agent_tab_lock   the weights and totals of agent_tab (stacktab.h,
 *                      "Threads"; with agent_per_thread the stacks' own
 *                      values only, and threads' records folded in at
 *                      exit), agent_hdr->dropped, agent_hdr->dropped_bytes;
 *     agent_intern_lock  agent_tab's stack index (stacktab_intern, _seal),
 *                      then the live shards' locks (agent_tab.shards[],
 *                      in index order; each alone on the sample and free
 *                      paths, all of them only at fork);
 *  3. agent_reg_lock   the thread registry and the exited threads' sums
 *                      (agent_hdr->exited_*), header.seq;
 *     agent_mod_lock   the record's list of modules (agent_record.h);
 *     agent_rec_lock   appends to the record (a leaf but for the arena);
 *  4. agent_arena.lock the private memory.
 * A lock may be taken while holding only locks above it.
 */
extern pthread_mutex_t agent_reg_lock;
/* Futex mutexes (lock.h); agent_tab_lock is taken on every sample and
 * every free of a sampled block. */
extern struct agent_lock agent_dump_lock, agent_tab_lock, agent_intern_lock;
/*
 * A fork waiting for no thread to be inside the unwinder (hooks.c
 * unwind_fenced, agent.c fork_prepare): a fork child would inherit
 * libunwind's own locks held by a thread that it does not have. true when
 * a registered thread is inside now (takes agent_reg_lock).
 */
extern int agent_fork_pending;
bool agent_threads_unwinding(void);
extern struct arena agent_arena;
extern struct pprof_allocator agent_alloc_hooks;
extern struct stacktab agent_tab __attribute__((visibility("hidden")));
/*
 * The totals live in the record's header (agent_hdr, agent_record.h), so
 * that a reader outside sees them: dropped (samples dropped; samples are
 * counted per thread, agent_thread.samples, summed by
 * agent_sum_counters: no shared line written at every rate-1 call) and
 * dropped_bytes (their estimated alloc_space), under agent_tab_lock;
 * exact_inuse and exact_peak (PALLOC_EXACT=1: live usable bytes and their
 * peak, atomics); and with weights per thread (hooks.c: rate 1 without
 * PALLOC_PEAK) pt_inuse_bytes, pt_inuse_objects and their maximum
 * pt_max_bytes, changed with atomic adds and a compare-and-swap
 * (agent_tab's inuse_bytes, max_inuse_bytes and ev stay 0);
 * pt_max_objects is the objects total stored by the event that raised
 * pt_max_bytes last (a moment stale at worst).
 */
extern bool agent_per_thread;
/* The highest total inuse estimate so far, in bytes (either mode). Under
 * agent_tab_lock unless agent_per_thread. */
double agent_max_inuse(void);

/* modtab.c: the loaded objects copied at fork (see there) */

struct dl_phdr_info;
/* Find the C library's dl_iterate_phdr and the callers the copy answers
 * (libunwind, the agent); at init. */
void modtab_init(void);
/* In the fork prepare handler: copy the loaded objects (kept as they are
 * when unchanged, and in a child still using its inherited copy). */
void modtab_snapshot(void);
/* In a fork child: answer from the copy (false when there is none). */
bool modtab_child_begin(void);
/* The loader is free: forward every call again. */
void modtab_child_end(void);
/* The C library's dl_iterate_phdr, never the copy. */
int modtab_real_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *),
			void *data);

/* bootstrap.c: the real allocator */

/* Resolve the real allocator functions (idempotent; _exit(127) with a
 * message when malloc/free/calloc/realloc have no next definition). */
void agent_resolve_real(void);
/* Set by the constructor before agent_resolve_real() when the agent is
 * preloaded (in the global scope, not dlopened by palloc-run -p): then an
 * optional function missing after the agent is not looked for before
 * it. */
extern bool agent_preloaded;
/*
 * Is the agent's malloc the one the program calls? 0: yes (or no object
 * defines malloc in its dynamic symbol table); 1: no, the main executable
 * defines and exports malloc itself (an allocator linked in statically);
 * 2: no, the library def->path, loaded before the agent (preloaded
 * first), defines it. *def says where the definition is.
 */
int agent_malloc_definer(struct phdr_definition *def);
/* The real free, for memory that came from the real allocator. */
void agent_real_free(void *p);
/* Mark the bootstrap buffer's blocks in the live-block filter, so frees
 * of them leave the fast path (after stacktab_reset, e.g. in a fork
 * child; agent_resolve_real() marks them first when the real allocator is
 * resolved). */
void agent_boot_mark(void);

/* threads.c: the thread registry (agent_tls, agent_reg_lock) */

/* Create the pthread key whose destructor folds an exiting thread. */
int agent_threads_init(void);
/* Per-thread setup for the calling thread (registry, PRNG, countdown,
 * the first-free test disarmed). Takes the guard itself. */
void agent_thread_setup(struct agent_thread *t);
/* Sum the counters of every registered thread plus the exited ones. */
void agent_sum_counters(uint64_t *alloc_count, uint64_t *free_count,
			uint64_t *alloc_bytes, uint64_t *reentries,
			uint64_t *samples);
/* Copy every registered thread's counters into its record slot (at
 * exit: agent_record.h). Takes agent_reg_lock. */
void agent_threads_sync_all(void);
/* After fork, in the child: only the calling thread is left; zero all
 * counters and the registry; the other threads' record slots are freed.
 * Caller holds no lock (single-threaded child). */
void agent_threads_after_fork_child(void);
/* Weights per thread: the record of stack id for thread t (a live one),
 * made if new; NULL when t is not registered or on ENOMEM. */
struct record_rec *agent_thread_rec(struct agent_thread *t, uint32_t id);

/* agent.c: the life cycle */

/* PALLOC_MAX_DEPTH's upper bound: the deepest stack a profile holds. */
#define MAX_DEPTH_LIMIT 256

/* Lock l: with bounded retries when exiting (another thread may be stuck
 * holding it), blocking otherwise. 0 or -1. */
int agent_lock_bounded(struct agent_lock *l, bool bounded);

/* A sum of weights as a sample value: rounded, never negative. */
static inline int64_t round_value(double v)
{
	if (!(v > 0.5))
		return 0; /* negative rounding residue, or NaN */
	if (v > 9.2e18)
		return INT64_MAX;
	return (int64_t)(v + 0.5);
}

/* From the slow path of an allocation, on any of the program's threads
 * (guard held, the real allocator's call finished): write the periodic,
 * peak and memory pressure profiles that are due (LD_PRELOAD alone; none
 * under palloc-run, which makes them from the record). The agent has no
 * thread of its own. */
void agent_safe_point(void);

/* Write a memory pressure profile (%n seq, "at90"), with comment. 0, or
 * -1 with errno and msg_set(). */
int agent_dump_pressure(const char *seq, const char *comment);

/* pressure.c: profiles as the cgroup's usage crosses PALLOC_DUMP_AT */

/* At init: read PALLOC_DUMP_AT (a warning when malformed); no check
 * until agent_pressure_start(). */
void agent_pressure_init(void);
/* Once the record is made, where the agent writes the pressure profiles
 * itself (not under palloc-run, which checks the cgroup from outside):
 * find the cgroup's effective limit and take the baseline. Again: no
 * effect. Single-threaded (start, fork child). */
void agent_pressure_start(void);
/* A limit was found and a threshold is still to cross. */
bool agent_pressure_on(void);
/* In a fork child: no thread; the thresholds its parent crossed (or
 * started above) stay crossed. */
void agent_pressure_after_fork(void);
/* From agent_safe_point, on any thread: check when due (100 ms) or when
 * the program's threads allocated 1 % of the limit since the last check
 * (alloc_bytes: the calling thread's allocated bytes); one thread checks
 * at a time. */
void agent_pressure_safe_point(uint64_t now, uint64_t alloc_bytes);

/* idle.c: at init, before any thread of the agent's can sleep: the C
 * library's waits that idle.c interposes, resolved once. */
void agent_idle_init(void);

/* Seconds of CLOCK_MONOTONIC as nanoseconds. */
uint64_t agent_now_ns(void);

/* output.c: where profiles go (a file written safely) */

/* At init, after the configuration: capture the executable's name (%e);
 * warn about a Go program. */
void agent_output_init(void);
/*
 * Encode p and write it to path, or to the pattern's name for pid and seq
 * (%n) when path is NULL. The name written goes to written[cap] when
 * written is non-NULL. 0, or -1 with errno and msg_set(). Caller holds
 * agent_dump_lock.
 */
int agent_output_write(const struct pprof_profile *p, long pid,
		       const char *path, const char *seq, char *written,
		       size_t cap);
/* The process title now (/proc/self/cmdline, printable) into out[cap]. */
void agent_output_title(char *out, size_t cap);

/*
 * extramaps.c: the interposed dlclose (the unloaded objects' MODULE
 * entries get their unload gen, and the stacks with a frame there are
 * sealed: stacktab_seal), and the executable regions of /proc/self/maps
 * for frames no module covers (JIT code), for record_profile().
 */
/*
 * The executable segments loaded now (phdr_foreach), copied into the
 * arena, so that they can be compared without the loader's lock held:
 * agent_segs_copy() fills an empty l (err set on ENOMEM: then l holds
 * fewer), agent_segs_free() frees what l holds.
 */
struct agent_segs {
	struct phdr_segment *v;
	bool *present; /* the caller's, freed too */
	size_t n, cap;
	int err;
};
void agent_segs_copy(struct agent_segs *l);
void agent_segs_free(struct agent_segs *l);

/* The executable regions of /proc/self/maps, read on first use while a
 * profile is built; zero-initialised, freed by agent_maps_free(). */
struct xregion;
struct agent_maps {
	bool read;
	struct xregion *regions; /* sorted by address, from the arena */
	size_t n, cap;
};
/*
 * record_profile()'s unmapped callback (record_unmapped_fn), ctx a
 * struct agent_maps: the mapping of the executable region of
 * /proc/self/maps holding addr (named as the kernel names it, or
 * "[anon:jit]"), added to p on first use; 0 when no region holds it
 * (the reader then gives it "[unmapped]") or on ENOMEM. No malloc.
 */
struct pprof_profile;
uint64_t agent_maps_unmapped(void *ctx, struct pprof_profile *p, uint64_t addr);
/* The regions agent_maps_unmapped() gave a mapping, into the record
 * (record_module_region): for a reader after the process is gone. */
void agent_maps_record(const struct agent_maps *m);
void agent_maps_free(struct agent_maps *m);

#endif /* PALLOC_AGENT_INT_H */
