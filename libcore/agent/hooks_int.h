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
 * One pointer per C++ operator: the real ones (agent_real.cxx) and the
 * way each interposed operator goes after counting (hooks_cxx.c).
 */
struct agent_cxx_ops {
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
	struct agent_cxx_ops cxx;
};
extern struct agent_real agent_real;

/*
 * The functions the agent hooks, in this order: the allocator's (malloc,
 * free, calloc, realloc first: the required ones), the C++ operators
 * (_Znwm first), then the loader's (dlclose first). REAL is where the
 * real one goes in agent_real (an offsetof), or -1. Defined in
 * bootstrap.c, which resolves them after the agent; attach.c rewrites
 * the entries that lead to them.
 */
struct agent_hook_name {
	const char *name;
	int real;
};
#define AGENT_N_HOOKED 37
#define AGENT_N_REQUIRED 4 /* malloc, free, calloc, realloc */
#define AGENT_I_ZNWM 12	   /* _Znwm */
#define AGENT_I_DLCLOSE 32 /* the first of the loader's */
extern const struct agent_hook_name agent_hooked[AGENT_N_HOOKED];

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
 * The countdown and the counters, each changed by one instruction on
 * x86-64 (a memory operand read, changed and written back, its flags
 * deciding): a signal handler that allocates on the same thread runs
 * between two of our instructions, never inside one, so no update is
 * lost and the hot paths need no guard test. Elsewhere relaxed atomics
 * give the same.
 */
#if defined(__x86_64__) && defined(__GCC_ASM_FLAG_OUTPUTS__)
#define HOOKS_X86 1
#else
#define HOOKS_X86 0
#endif

/*
 * Lower thread t's countdown by n bytes (counting them: alloc_bytes is
 * bytes_base - left); true when it reached or passed 0, i.e. n >= left
 * before: a sample is due, or left was 0 (the guard, a new thread, exact
 * mode, the agent off). The caller then takes the slow path, which finds
 * left wrapped (left_give gives n back for an untracked call).
 */
static inline bool left_take(struct agent_thread *t, size_t n)
{
#if HOOKS_X86
	bool due;

	__asm__("subq %2, %0" : "+m"(t->left), "=@ccbe"(due) : "r"(n));
	return due;
#else
	return n >= __atomic_fetch_sub(&t->left, n, __ATOMIC_RELAXED);
#endif
}

/* Undo left_take(t, n): the call is not counted (guarded, or retried). */
static inline void left_give(struct agent_thread *t, size_t n)
{
#if HOOKS_X86
	__asm__("addq %1, %0" : "+m"(t->left) : "r"(n));
#else
	__atomic_fetch_add(&t->left, n, __ATOMIC_RELAXED);
#endif
}

/* left = 0, returning what it was (a signal handler between the read
 * and the write cannot slip an update in). */
static inline uint64_t left_swap0(struct agent_thread *t)
{
#if HOOKS_X86
	uint64_t old = t->left;

	/* cmpxchg without lock: atomic against this thread's signal
	 * handlers, which is all it needs (only t writes t->left). */
	__asm__ volatile("1: cmpxchgq %2, %1\n\tjne 1b"
			 : "+a"(old), "+m"(t->left)
			 : "r"((uint64_t)0)
			 : "cc");
	return old;
#else
	return __atomic_exchange_n(&t->left, 0, __ATOMIC_RELAXED);
#endif
}

/* Count a free in t; true when the count wrapped: it was UINT64_MAX, the
 * TLS image's value, so this is the thread's first free (hooks.c
 * free_first registers the thread). */
static inline bool count_free(struct agent_thread *t)
{
#if HOOKS_X86
	bool wrapped;

	__asm__("addq $1, %0" : "+m"(t->free_count), "=@ccc"(wrapped));
	return wrapped;
#else
	return __atomic_add_fetch(&t->free_count, 1, __ATOMIC_RELAXED) == 0;
#endif
}

/*
 * Take the reentrancy guard of thread t (nests). The outermost take holds
 * the countdown (held = left, left = 0, so that every allocation takes
 * the slow path, which forwards it untracked) and the free count (the
 * frees counted meanwhile are dropped at guard_leave); bytes_base moves
 * with left under seq, the writer half of a seqcount (the kernel's
 * seqcount_t, in C11 fences as in Boehm, "Can seqlocks get along with
 * programming language memory models?", 2012), so alloc_bytes (bytes_base
 * - left) reads the same throughout. By t itself; a signal handler
 * nested in here finds the guard taken and changes nothing of this.
 */
static inline void guard_enter(struct agent_thread *t)
{
	unsigned seq;
	uint64_t l;

	if (t->guard++)
		return;
	seq = t->seq;
	__atomic_store_n(&t->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	l = left_swap0(t);
	__atomic_store_n(&t->bytes_base, t->bytes_base - l, __ATOMIC_RELAXED);
	__atomic_store_n(&t->seq, seq + 2, __ATOMIC_RELEASE);
	t->held = l;
	t->held_frees = t->free_count;
}

/* Release the guard; the outermost release puts the countdown (held, which
 * the slow paths set meanwhile) and the free count back. */
static inline void guard_leave(struct agent_thread *t)
{
	unsigned seq;
	uint64_t l;

	if (t->guard == 1) {
		l = t->held;
		seq = t->seq;
		t->free_count = t->held_frees;
		__atomic_store_n(&t->seq, seq + 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		__atomic_store_n(&t->bytes_base, t->bytes_base + l,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&t->left, l, __ATOMIC_RELAXED);
		__atomic_store_n(&t->seq, seq + 2, __ATOMIC_RELEASE);
		t->held = 0;
	}
	t->guard--;
}

/*
 * The guard without holding the countdown, for the agent's sections that
 * do not allocate (the free of a sampled block): a handler's allocation
 * that is due finds it (no reentry into the locks held), the others are
 * counted as the program's. held_frees is kept right for readers.
 */
static inline void guard_enter_light(struct agent_thread *t)
{
	if (!t->guard)
		t->held_frees = t->free_count;
	t->guard++;
}

static inline void guard_leave_light(struct agent_thread *t)
{
	t->guard--;
}

/* Thread t's free count, read by any thread: while t holds its guard,
 * the value it will go back to (a moment stale at worst). */
static inline uint64_t thread_frees(const struct agent_thread *t)
{
	if (__atomic_load_n(&t->guard, __ATOMIC_RELAXED))
		return __atomic_load_n(&t->held_frees, __ATOMIC_RELAXED);
	return __atomic_load_n(&t->free_count, __ATOMIC_RELAXED);
}

/*
 * The slow half of an allocation whose left_take() ran out, not guarded:
 * the thread's first call, a sample point reached, exact mode, or the
 * agent not (or no longer) running. Called after the real allocation with
 * its result; errno is preserved. Returns p, so that malloc() can
 * tail-call it: the sampled stack then walks one agent frame less (about
 * 100 instructions of libunwind's).
 */
void *alloc_slow(void *p, size_t n);

/* A guarded call reached the slow path: counted as a reentry (when not
 * expected), and n given back to the countdown. */
void alloc_guarded(size_t n);

/*
 * Copy thread t's counters into its record slot (agent_record.h), if it
 * has one: at its slow paths (a sampled allocation, the free of a sampled
 * block) and at its exit, so that a reader outside sees them that fresh.
 * By t itself.
 */
static inline void thread_sync(struct agent_thread *t)
{
	struct record_thread *s = t->slot;

	if (!s)
		return;
	__atomic_store_n(&s->alloc_count, t->alloc_count, __ATOMIC_RELAXED);
	__atomic_store_n(&s->free_count, thread_frees(t), __ATOMIC_RELAXED);
	__atomic_store_n(&s->alloc_bytes, t->bytes_base - t->left,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&s->samples, t->samples, __ATOMIC_RELAXED);
	__atomic_store_n(&s->reentries, t->reentries, __ATOMIC_RELAXED);
}

/* Count an allocation of n requested bytes already made (p its result,
 * not NULL): realloc, the aligned calls. */
static inline void on_alloc(struct agent_thread *t, void *p, size_t n)
{
	if (likely(!left_take(t, n))) {
		t->alloc_count++;
		return;
	}
	if (unlikely(t->guard_quiet))
		alloc_guarded(n);
	else
		alloc_slow(p, n);
}

/* A guarded call: the agent's own work, or C++ forwarding. */
static inline void on_guarded(struct agent_thread *t)
{
	if (!t->quiet && t->warm && !t->agent_thread)
		t->reentries++;
}

/*
 * The slow halves of a free (not NULL), reached when count_free() wrapped
 * (free_first: the thread's first free registers it, so that a thread
 * that only frees is summed too) or when the filter says p may be a
 * sampled block (free_marked: a sampled block, a bootstrap block, a
 * collision; every free in exact mode and at rate 1, where every bit is
 * set). Both return false when p must not reach the real free (a
 * bootstrap block). free_first ends with free_marked's work when the
 * filter asks for it.
 */
bool free_first(void *p);
bool free_marked(void *p);

/*
 * Count a free of p (not NULL). Returns false when p must not be passed
 * to the real free (a bootstrap block). The fast path: one thread-local
 * add whose carry is tested, one filter bit test.
 */
static inline bool on_free(struct agent_thread *t, void *p)
{
	if (unlikely(count_free(t)))
		return free_first(p);
	if (unlikely(stacktab_maybe_live(&agent_tab, (uintptr_t)p)))
		return free_marked(p);
	return true;
}

/*
 * C++ (hooks_cxx.c), at resolution (bootstrap.c, guard held): new_direct
 * when the next operator new is libstdc++'s and the program's malloc and
 * operator new are the agent's, delete_direct the same for free and
 * operator delete. Then those operators call the real malloc and free
 * themselves, as libstdc++'s would; otherwise they forward.
 */
void agent_cxx_resolve(bool new_direct, bool delete_direct);

/*
 * The hot entry points start on a cache line, so that each fast path
 * sits in one 64-byte line. At
 * gcc's default 16-byte alignment malloc's straddled two, and the churn
 * loop cost 2 to 4 points more (bench/agent/README.md).
 */
#define HOT_ENTRY __attribute__((aligned(64)))

#pragma GCC visibility pop

#endif /* PALLOC_HOOKS_INT_H */
