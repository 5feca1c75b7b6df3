/* SPDX-License-Identifier: MIT */
/*
 * Inside the interposer (bootstrap.c, threads.c, hooks.c, hooks_cxx.c):
 * the real allocator's functions, the bootstrap buffer's range, and the
 * hot path's inline pieces, so that the C and C++ entry points both
 * inline them (no call on an unsampled allocation or free).
 */
#ifndef PALLOC_HOOKS_INT_H
#define PALLOC_HOOKS_INT_H

#include "agent_int.h"

/*
 * Hidden, declarations included: the hot paths then reach agent_real and
 * the slow paths PC-relative, not through the GOT (-fvisibility=hidden
 * applies to definitions only).
 */
#pragma GCC visibility push(hidden)

typedef void *(*malloc_fn)(size_t);
typedef void (*free_fn)(void *);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);
typedef int (*posix_memalign_fn)(void **, size_t, size_t);
typedef void *(*memalign_fn)(size_t, size_t);
typedef void (*free_sized_fn)(void *, size_t);
typedef void (*free_aligned_sized_fn)(void *, size_t, size_t);
typedef void *(*new_fn)(size_t);
typedef void *(*new_al_fn)(size_t, size_t);
typedef void *(*new_nt_fn)(size_t, const void *);
typedef void *(*new_al_nt_fn)(size_t, size_t, const void *);
typedef void (*del_fn)(void *);
typedef void (*del_sz_fn)(void *, size_t);
typedef void (*del_al_fn)(void *, size_t);
typedef void (*del_sz_al_fn)(void *, size_t, size_t);
typedef void (*del_nt_fn)(void *, const void *);
typedef void (*del_al_nt_fn)(void *, size_t, const void *);

/*
 * Until agent_resolve_real() has run, the required pointers lead to stubs
 * that resolve first (or, while dlsym itself allocates, serve from the
 * bootstrap buffer), so the hot paths never test for NULL.
 */
struct agent_real {
	malloc_fn malloc;
	free_fn free;
	calloc_fn calloc;
	realloc_fn realloc;
	posix_memalign_fn posix_memalign;
	memalign_fn aligned_alloc, memalign;
	malloc_fn valloc, pvalloc;
	free_sized_fn free_sized;
	free_aligned_sized_fn free_aligned_sized;
	/* C++: NULL when no later object defines them (a C program) */
	new_fn znwm, znam;
	new_nt_fn znwm_nt, znam_nt;
	new_al_fn znwm_al, znam_al;
	new_al_nt_fn znwm_al_nt, znam_al_nt;
	del_fn zdlpv, zdapv;
	del_sz_fn zdlpv_sz, zdapv_sz;
	del_nt_fn zdlpv_nt, zdapv_nt;
	del_al_fn zdlpv_al, zdapv_al;
	del_sz_al_fn zdlpv_sz_al, zdapv_sz_al;
	del_al_nt_fn zdlpv_al_nt, zdapv_al_nt;
};
extern struct agent_real agent_real;

/*
 * dlsym() allocates (its error buffer, via calloc) before we know where
 * the real allocator is. Those few blocks come from here, carry their size
 * in a 16-byte header, and are never passed to the real free.
 */
#define BOOT_SIZE (64 * 1024)
extern char agent_boot_buf[BOOT_SIZE];

static inline bool is_boot(const void *p)
{
	return (uintptr_t)p - (uintptr_t)agent_boot_buf < BOOT_SIZE;
}

/* The size of a bootstrap block, kept in its 16-byte header. */
static inline size_t boot_size(const void *p)
{
	return *(const size_t *)((const char *)p - 16);
}

/*
 * Set the countdown to left and count n more requested bytes, keeping
 * alloc_bytes == bytes_base - left (agent_int.h). The writer half of a
 * seqcount (the kernel's seqcount_t, in C11 fences as in Boehm, "Can
 * seqlocks get along with programming language memory models?", 2012):
 * seq odd, release fence, the stores, seq even with release. Called by
 * the owning thread only, with its guard held (a signal handler's malloc
 * meanwhile would otherwise lower left between our read and our store).
 */
static inline void count_bytes(struct agent_thread *t, uint64_t n,
			       uint64_t left)
{
	uint64_t base = t->bytes_base + n + left - t->left;
	unsigned seq = t->seq;

	__atomic_store_n(&t->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&t->bytes_base, base, __ATOMIC_RELAXED);
	__atomic_store_n(&t->left, left, __ATOMIC_RELAXED);
	__atomic_store_n(&t->seq, seq + 2, __ATOMIC_RELEASE);
}

/*
 * The slow half of every allocation: the thread's first call, a sample
 * point reached, exact mode, or the agent not (or no longer) running.
 * Called after the real allocation with its result; errno is preserved.
 * Returns p, so that malloc() can tail-call it: the sampled stack then
 * walks one agent frame less (about 100 instructions of libunwind's).
 */
void *alloc_slow(void *p, size_t n);

/*
 * Copy thread t's counters into its record slot (agent_record.h), if it
 * has one: at its slow paths (a sampled allocation, the free of a sampled
 * block) and at its exit, so that a reader outside sees them that fresh.
 * By t itself, guard held.
 */
static inline void thread_sync(struct agent_thread *t)
{
	struct record_thread *s = t->slot;

	if (!s)
		return;
	__atomic_store_n(&s->alloc_count, t->alloc_count, __ATOMIC_RELAXED);
	__atomic_store_n(&s->free_count, t->free_count, __ATOMIC_RELAXED);
	__atomic_store_n(&s->alloc_bytes, t->bytes_base - t->left,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&s->samples, t->samples, __ATOMIC_RELAXED);
	__atomic_store_n(&s->reentries, t->reentries, __ATOMIC_RELAXED);
}

/* Count an allocation of n requested bytes that returned p. */
static inline void on_alloc(struct agent_thread *t, void *p, size_t n)
{
	if (likely(n < t->left)) {
		t->left -= n; /* counts the bytes too (agent_int.h) */
		t->alloc_count++;
		return;
	}
	alloc_slow(p, n);
}

/* A guarded call: the agent's own work, or C++ forwarding. */
static inline void on_guarded(struct agent_thread *t)
{
	if (!t->quiet && t->warm && !t->agent_thread)
		t->reentries++;
}

/*
 * A free whose gate (guard or slow_free) is set: the agent's own or a
 * guarded one (forwarded untracked), a thread's first free (register it,
 * so that a thread that only frees is summed too), or exact mode. Returns
 * false when p must not reach the real free (a bootstrap block).
 */
bool free_gated(void *p);

/* A free whose filter slot is marked: a sampled block, a bootstrap block,
 * or a collision. Returns false for a bootstrap block (uncounted). */
bool free_marked(void *p);

/*
 * Count a free of p (not NULL). Returns false when p must not be passed
 * to the real free (a bootstrap block). The fast path: one 64-bit TLS
 * test, one thread-local add, one filter load.
 */
static inline bool on_free(struct agent_thread *t, void *p)
{
	if (unlikely(t->gate))
		return free_gated(p);
	t->free_count++;
	if (unlikely(stacktab_maybe_live(&agent_tab, (uintptr_t)p)))
		return free_marked(p);
	return true;
}

/*
 * The hot entry points start on a cache line, so that the fast paths of
 * malloc (12 instructions) and free (15) sit in one 64-byte line. At
 * gcc's default 16-byte alignment malloc's straddled two, and the churn
 * loop cost 2 to 4 points more (bench/agent/README.md).
 */
#define HOT_ENTRY __attribute__((aligned(64)))

#pragma GCC visibility pop

#endif /* PALLOC_HOOKS_INT_H */
