/* SPDX-License-Identifier: MIT */
/* The stack table: sampled stacks with their weights, and live sampled blocks.
 */
#ifndef PALLOC_STACKTAB_H
#define PALLOC_STACKTAB_H

#include "common.h"
#include "lock.h"
#include "pprof.h"
#include "wire/record.h"

/*
 * Two tables that change together:
 *
 *  - stacks: one entry per distinct (call stack, thread name), holding the
 *    summed weights of the allocations sampled there (alloc_*) and of those
 *    not freed yet (inuse_*), plus the inuse values at the high-water mark
 *    of the total inuse (peak_*, see "The peak" below). Sums are doubles
 *    (weights are fractional unless the rate is 1) and rounded when a
 *    profile is written. At most max_stacks entries: a sample that needs a
 *    new stack beyond that is refused and the caller counts it as dropped.
 *
 *  - live: sampled blocks not freed yet, ptr -> (stack, size, weight), an
 *    open-addressing table that grows by doubling.
 *
 * free() must decide without a lock whether a pointer may be live in the
 * table. Two arrays indexed by the same hash of the pointer (its slot)
 * answer that. filter[slot] counts the live entries (and bootstrap marks)
 * whose pointer hashes there; it is read and written only under the
 * owner's lock. bits[] holds one bit per slot, set while filter[slot] is
 * non-zero: 8 KiB, so the free fast path's load stays in L1/L2 (the
 * counts, 256 KiB, would put an L1 miss on nearly every free). bits[] is
 * written only under the owner's lock, a whole word at a time with a
 * relaxed atomic store (the lock holder is the only writer, so reading
 * the word, changing one bit and storing it back loses nothing), and read
 * lock-free with a relaxed atomic load: a concurrent store changes other
 * slots' bits only. A clear bit means "certainly not sampled"; a set bit
 * means "take the lock and look" (a false positive costs only that). A
 * pointer is inserted before malloc returns it and removed before the real
 * free, so no free can race with the insertion of its own pointer.
 *
 * Not thread-safe by itself: the callers' locks are described under
 * "Threads" below; stacktab_maybe_live() needs none. Memory comes from the
 * allocator given to stacktab_init() (the agent's arena).
 */

#define STACKTAB_FILTER_BITS 16
#define STACKTAB_THREAD_NAME RECORD_THREAD_NAME /* prctl(PR_GET_NAME) */

/*
 * A stack is a struct record_stack (wire/record.h): the agent's come from
 * its record, where they are the bodies of STACK entries, so that a
 * reader outside the process sees the weights the agent updates in
 * place. Fields: hash, id (index + 1), depth (pcs[] entries, leaf
 * first), gen (the table's gen when last valid: stacktab_seal()), the
 * thread name, the summed weights, their variances ("Error bars" below,
 * objects^2 and bytes^2) and last_ev, the event (struct stacktab, ev) of
 * the last change of inuse_* ("The peak" below).
 */

/*
 * Error bars. A sampled allocation of s bytes with weight o = 1/p objects
 * and w = o * s bytes (sampler.c) is one term of a sum of independent
 * terms, each 0 with probability 1 - p and w with probability p, whose
 * variance is w * (w - s) bytes^2 and o * (o - 1) objects^2; a term that
 * was not sampled contributes neither value nor variance, and E[those
 * variance sums] is the true variance of the estimate, so they are unbiased
 * variance estimates too. The variances of a stack add up over its samples
 * like the values (alloc: every sample; inuse: the live ones, subtracted
 * again at free from the live entry's own o and s, so they return to zero
 * the way the values do). At rate 1 every o is 1 and the variances are 0.
 */

/*
 * The peak. peak_* must be every stack's inuse at the moment the total
 * inuse (inuse_bytes below) was highest: at rate 1 the exact high-water
 * mark, as DHAT's t-gmax. Copying every stack at each new maximum would
 * cost O(stacks) per allocation while the heap grows, so the copy is
 * lazy: every change of a stack's inuse is an event (ev counts them), and
 * peak_ev is the event that set the current maximum. A stack whose last
 * change came at or before peak_ev still holds its peak value in inuse_*;
 * before its first change after peak_ev, inuse_* is saved to peak_*. So
 * at any time a stack's value at the peak is inuse_* when last_ev <=
 * peak_ev, else peak_*; stacktab_settle_peak() writes that into peak_*
 * for the encoder. O(1) per sampled event.
 *
 * At a sampled rate the maximum of the inuse estimate is what is kept:
 * each stack's values then are unbiased for that moment (error bars
 * peak_var_*), but the moment is the one where the estimate, noise
 * included, was highest, so the total tends to exceed the true peak by
 * about its standard deviation.
 */

/*
 * 24 bytes: at rate 1 there is one per live block. The weight is kept as a
 * float (24-bit mantissa; exact at rate 1, where it is 1) and the inuse
 * bytes it stands for are objects * size, the same product when the block
 * is added and when it is removed, so inuse sums return exactly to zero.
 */
struct stacktab_live {
	uintptr_t ptr; /* 0: empty slot */
	uint64_t size;
	float objects; /* the sample's weight in objects */
	uint32_t stack_id;
};

/*
 * Threads. The agent splits each update into parts under different locks
 * (hooks.c), so that two threads allocating at once (at rate 1: every
 * call) share as few cache lines as possible:
 *
 *  - the live blocks are split into STACKTAB_SHARDS shards by the 64 MiB
 *    region of the pointer (glibc gives each thread an arena of its own,
 *    whose heaps are 64 MiB-aligned: a thread's blocks fall in "its"
 *    shards); stacktab_live_put() and stacktab_live_take() run under the
 *    pointer's shard lock (stacktab_shard()) and touch that shard only;
 *  - the stack index (stacktab_intern(), stacktab_seal()) is under the
 *    caller's intern lock; stacks are never freed or moved while the table
 *    lives (an outgrown stacks[] array is kept until stacktab_destroy()),
 *    so stacktab_get() and a stack's pcs, depth, thread and hash may be
 *    read without it;
 *  - the weights, the totals, the peak and the filter (stacktab_count(),
 *    stacktab_inuse_in(), stacktab_inuse_out(), stacktab_settle_peak()):
 *    one short section under the caller's table lock, which orders the
 *    events of "The peak" so it stays exact at rate 1. Without the exact
 *    peak the agent at rate 1 keeps the weights per thread instead
 *    ("Weights per thread" below) and the totals outside this table.
 *
 * With all_live set (stacktab_all_live(): at rate 1 nearly every block is
 * sampled) every filter bit is set for good and the counts are not kept:
 * each free takes the slow path, as it nearly would anyway, and no update
 * writes the filter's lines.
 */
#define STACKTAB_SHARD_BITS 6
#define STACKTAB_SHARDS (1u << STACKTAB_SHARD_BITS)
#define STACKTAB_OLD_ARRAYS 32

struct stacktab_shard {
	struct agent_lock lock; /* the caller's, never taken here */
	unsigned live_shift;	/* 64 - log2(live_cap) */
	size_t live_cap;	/* a power of two, or 0 */
	size_t n_live;
	struct stacktab_live *live;
} __attribute__((aligned(64)));

struct stacktab {
	/* First, so that the free fast path addresses it as table + 8 *
	 * word without adding an offset. */
	uint64_t bits[(1u << STACKTAB_FILTER_BITS) / 64];
	uint32_t filter[1u << STACKTAB_FILTER_BITS]; /* under the lock */
	struct pprof_allocator a;
	size_t max_stacks;
	bool all_live; /* every bit set for good: stacktab_all_live() */
	/* stacks: stacks[id - 1]; index[] maps hash -> id (0: empty) */
	struct record_stack **stacks;
	size_t n_stacks, cap_stacks;
	struct record_stack **old_stacks[STACKTAB_OLD_ARRAYS];
	uint32_t *index;
	size_t index_cap;	   /* a power of two */
	struct record_stack *last; /* the last one interned, or NULL */
	/*
	 * Where new stacks go first (the agent's record): ext_stack copies
	 * a finished stack of size bytes to *copy and returns 0, or
	 * returns -1, after which the table allocates its stacks from a
	 * for good (so stacks[0..n_ext) are ext's, in id order). ext's are
	 * never freed by the table. Set after stacktab_init(), before the
	 * first intern. With ext_only set, no stack is made once ext_stack
	 * fails (intern returns NULL, as when the table is full): every
	 * stack is ext's (the agent's profiles are made from its record).
	 */
	int (*ext_stack)(void *ctx, const struct record_stack *s, size_t size,
			 struct record_stack **copy);
	void *ext_ctx;
	bool ext_only;
	size_t n_ext;
	/* stacktab_seal() calls so far; read on every sample (hooks.c
	 * thread_stack): not on the lines the weights section writes */
	uint32_t gen;
	/* live blocks, by the pointer's 64 MiB region */
	struct stacktab_shard shards[STACKTAB_SHARDS];
	/* Under the table lock, on lines of their own. n_live: live entries
	 * in all shards whose weights are in (stacktab_inuse_in). Totals of
	 * the inuse estimate, its maximum, and the peak_* values' total as
	 * of the last stacktab_settle_peak(). */
	size_t n_live __attribute__((aligned(64)));
	double inuse_bytes, max_inuse_bytes, peak_bytes;
	uint64_t ev, peak_ev; /* "The peak" above */
};

/*
 * The filter slot of ptr: Fibonacci hashing of its low 32 bits, the top
 * 16 bits of their product with an odd 32-bit constant. Two instructions
 * on x86-64 (a multiply by an immediate, a shift); the alignment's zero
 * low bits only shift the product, whose top bits still mix every
 * address bit from the alignment up to bit 31 (pointers 4 GiB apart
 * share a slot: a false positive at worst).
 */
static inline uint32_t stacktab_slot(uintptr_t ptr)
{
	return ((uint32_t)ptr * 0x9e3779b1u) >> (32 - STACKTAB_FILTER_BITS);
}

/*
 * Lock-free: may ptr be live in the table? (false: certainly not). On
 * x86-64 one bit test with the slot as a register offset into bits[] (the
 * free fast path's whole filter: multiply, shift, bt, branch).
 */
static inline bool stacktab_maybe_live(const struct stacktab *t, uintptr_t ptr)
{
	uint32_t slot = stacktab_slot(ptr);
#if defined(__x86_64__) && defined(__GCC_ASM_FLAG_OUTPUTS__)
	bool set;

	/* A plain load of the word, as the relaxed atomic load below: the
	 * lock holder stores whole words. */
	__asm__("btl %2, %1"
		: "=@ccc"(set)
		: "m"(*(const uint64_t(*)[ARRAY_SIZE(t->bits)])t->bits),
		  "r"(slot));
	return set;
#else
	return (__atomic_load_n(&t->bits[slot / 64], __ATOMIC_RELAXED) >>
		(slot % 64)) &
	       1;
#endif
}

/* Mark ptr's slot for good: every free that hashes there takes the slow
 * path (the agent's bootstrap blocks). Under the owner's lock, or while
 * no other thread can change the table. */
void stacktab_mark(struct stacktab *t, uintptr_t ptr);

/* Set up an empty table in *t (which may be static storage). alloc is
 * copied. max_stacks 0 means 65536. Returns 0 (nothing is allocated yet). */
int stacktab_init(struct stacktab *t, const struct pprof_allocator *alloc,
		  size_t max_stacks);

/* Free everything the table holds; *t is left empty and usable. */
void stacktab_destroy(struct stacktab *t);

/* Zero every count and forget the live blocks, keeping the stacks (a fork
 * child starts its own profile). */
void stacktab_reset(struct stacktab *t);

/*
 * The stack for (pcs[0..n), thread), created with zero counts if new.
 * thread is a buffer of STACKTAB_THREAD_NAME bytes holding the name
 * NUL-padded to the end (as the agent keeps it), or NULL for none.
 * NULL when the table is full or on ENOMEM.
 */
struct record_stack *stacktab_intern(struct stacktab *t, const uintptr_t *pcs,
				     size_t n, const char *thread);

/* The number of stacks; any thread, no lock (stacktab_get() has them). */
static inline size_t stacktab_n_stacks(const struct stacktab *t)
{
	return __atomic_load_n(&t->n_stacks, __ATOMIC_ACQUIRE);
}

/* Is s the stack of (pcs[0..n), thread)? thread as for stacktab_intern(),
 * not NULL. Reads only what never changes in a stack. Inline: at rate 1
 * the agent asks on every allocation (hooks.c thread_stack). */
static inline bool stacktab_matches(const struct record_stack *s,
				    const uintptr_t *pcs, size_t n,
				    const char *thread)
{
	uint64_t a[2], b[2];

	if (s->depth != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s->pcs[i] != pcs[i])
			return false;
	memcpy(a, s->thread, sizeof(a));
	memcpy(b, thread, sizeof(b));
	b[1] &= ~(0xffULL << 56); /* the last byte is NUL (name_words) */
	return a[0] == b[0] && a[1] == b[1];
}

/* The stack with this id (1-based), or NULL. Any thread, no lock. */
struct record_stack *stacktab_get(const struct stacktab *t, uint32_t id);

/*
 * Record a sampled allocation of size bytes at ptr on stack s with the
 * weight objects (sampler_weight()): the block becomes live, and alloc
 * and inuse both grow by the weight as stored (struct stacktab_live: a
 * float) and the bytes it stands for, weight * size: the same two numbers,
 * so that no sample's inuse can exceed its alloc through rounding of the
 * weight (DESIGN's invariant; a double weight for alloc beside the float
 * for inuse made inuse 592561 > alloc 592560). If ptr was already live
 * (its free went unseen), that stale entry is removed first.
 * Returns 0, or -1 on ENOMEM: the alloc values still grow, inuse does not
 * (the block cannot be tracked), and the caller counts a drop.
 */
int stacktab_add(struct stacktab *t, struct record_stack *s, uintptr_t ptr,
		 uint64_t size, double objects);

/* If ptr is live: remove it, subtract its weight from its stack's inuse,
 * copy the entry to *out (may be NULL) and return true. */
bool stacktab_remove(struct stacktab *t, uintptr_t ptr,
		     struct stacktab_live *out);

/* Put back an entry that stacktab_remove() gave (a failed realloc keeps its
 * old block). 0 or -1 on ENOMEM. */
int stacktab_restore(struct stacktab *t, const struct stacktab_live *e);

/* The shard of ptr: Fibonacci hashing of its 64 MiB region (glibc's
 * HEAP_MAX_SIZE on 64-bit). */
static inline struct stacktab_shard *stacktab_shard(struct stacktab *t,
						    uintptr_t ptr)
{
	return &t->shards[((uint64_t)(ptr >> 26) * 0x9e3779b97f4a7c15ULL) >>
			  (64 - STACKTAB_SHARD_BITS)];
}

/* Set every filter bit for good and stop keeping the counts (rate 1).
 * While no other thread uses the table. */
void stacktab_all_live(struct stacktab *t);

/*
 * The parts of stacktab_add(), stacktab_remove() and stacktab_restore()
 * for callers with several threads ("Threads" above). Under the shard
 * lock of e->ptr: stacktab_live_put() makes e live and returns 0, or 1
 * when it replaced a stale entry for the same pointer (copied to *stale),
 * or -1 on ENOMEM (-2: ENOMEM, and a stale entry for the pointer was
 * removed and copied to *stale); stacktab_live_take() removes ptr's entry if
 * any, into *out. Under the table lock: stacktab_count() adds a sample of stack
 * s to its alloc values; stacktab_inuse_in() and stacktab_inuse_out() add and
 * subtract a live entry's weight to and from its stack's inuse, the totals and
 * the filter.
 */
int stacktab_live_put(struct stacktab *t, const struct stacktab_live *e,
		      struct stacktab_live *stale);
bool stacktab_live_take(struct stacktab *t, uintptr_t ptr,
			struct stacktab_live *out);
void stacktab_count(struct record_stack *s, const struct stacktab_live *e);
void stacktab_inuse_in(struct stacktab *t, const struct stacktab_live *e);
void stacktab_inuse_out(struct stacktab *t, const struct stacktab_live *e);
/* stacktab_count() and stacktab_inuse_in() of e, whose stack is s. */
void stacktab_count_in(struct stacktab *t, struct record_stack *s,
		       const struct stacktab_live *e);

/*
 * Weights per thread. Without the exact peak (its events need one order),
 * the agent at rate 1 keeps each thread's changes to a stack's weights in
 * a record of its own (hooks.c, "Weights per thread"): a stack's values
 * are its own fields (changed under the table lock, and where exited
 * threads' records are folded) plus the records of every live thread.
 * A free of a block sampled by another thread subtracts in the freeing
 * thread's record, which may go negative: the sums are right. At rate 1
 * every weight is 1 and every variance 0, so a record holds whole numbers
 * and no variances.
 */
/* A record is a struct record_rec (wire/record.h: the agent keeps the
 * tables in its record's RECS entries); id 0: an empty slot. */

/* A stack's values, or sums of them (doubles, as in the stack). */
struct stacktab_weights {
	double alloc_objects, alloc_bytes;
	double inuse_objects, inuse_bytes;
	double alloc_var_objects, alloc_var_bytes;
	double inuse_var_objects, inuse_var_bytes;
};

/* Add a block of size bytes (weight 1) to r: to the alloc values if
 * alloc, and sign (1 or -1) times it to the inuse values. By r's owner
 * only; every value is stored with a relaxed atomic store, so another
 * thread may read r meanwhile. Inline: at rate 1, twice per pair. */
static inline void stacktab_rec_add(struct record_rec *r, uint64_t size,
				    bool alloc, int sign)
{
	int64_t b = (int64_t)size;

	if (alloc) {
		__atomic_store_n(&r->alloc_objects, r->alloc_objects + 1,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&r->alloc_bytes, r->alloc_bytes + b,
				 __ATOMIC_RELAXED);
	}
	__atomic_store_n(&r->inuse_objects, r->inuse_objects + sign,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&r->inuse_bytes, r->inuse_bytes + sign * b,
			 __ATOMIC_RELAXED);
}

/* The change of stacktab_rec_add() for any weight, made to stack s's own
 * values (under the table lock), without the peak's bookkeeping. */
void stacktab_weights_add(struct record_stack *s, const struct stacktab_live *e,
			  bool alloc, int sign);
/* s's own values into w. */
void stacktab_weights_of(struct stacktab_weights *w,
			 const struct record_stack *s);
/* Add r's values, read with relaxed atomic loads from any thread, to w;
 * or to s's own values (fold a record in, under the table lock). */
void stacktab_rec_sum(struct stacktab_weights *w, const struct record_rec *r);
void stacktab_rec_fold(struct record_stack *s, const struct record_rec *r);

/*
 * Code at [start, limit) is gone (a dlclose unloaded it); later code at
 * those addresses is another object's. Every stack with a frame there
 * (return address - 1 inside a range) is sealed: it keeps its gen and
 * leaves the index, so a later allocation with the same addresses gets a
 * stack of its own; every other stack, and the table, move to gen + 1. A
 * stack whose gen is below the table's was sealed, and a frame of it in a
 * range unloaded since belongs to the object that was there at its gen.
 * Returns the new gen. ranges holds n [start, limit) pairs. No allocation.
 */
uint32_t stacktab_seal(struct stacktab *t, const uintptr_t (*ranges)[2],
		       size_t n);

/* Bring every stack's peak_* up to date ("The peak" above) and set
 * peak_bytes to max_inuse_bytes. */
void stacktab_settle_peak(struct stacktab *t);

#endif /* PALLOC_STACKTAB_H */
