/* SPDX-License-Identifier: MIT */
/* The interposed C entry points (the malloc family), their hot paths, and
 * the slow paths: sampling an allocation, the free of a sampled block. */
#include "hooks_int.h"
#include "fmt.h"
#include "phdr.h"
#include "sampler.h"
#include "usdt.h"

#include <malloc.h>
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/*
 * Hot paths. An allocation that is not sampled costs, on top of the real
 * allocator: one subtract from the thread's byte countdown whose flags
 * say whether a sample is due (agent_int.h: left is 0 while the guard is
 * held, on a thread's first call, in exact mode and while the agent is
 * off, so those need no test of their own), one thread-local add (the
 * exact count) and a tail call. A free costs a NULL test, one
 * thread-local add whose carry flags the thread's first free, and one
 * bit test in the live-block filter (stacktab.h) that says whether the
 * pointer can be a sampled one, or a block of the bootstrap buffer
 * (marked there too, so the range check is off the fast path); in exact
 * mode and at rate 1 every bit is set. No lock, no syscall, no atomic
 * read-modify-write, no libunwind: those happen only for sampled
 * allocations, for frees whose filter bit is set, in exact mode and on a
 * thread's first call. malloc's fast path is 5 instructions, free's 10
 * (bench/calls.sh counts them per call kind).
 */

/* ---- sampling ---- */

static uintptr_t self_text_start, self_text_limit;
static bool self_text_known;

/* Learn the agent's own code range, to strip its frames from stacks. */
static void find_self_text(void)
{
	uintptr_t s, l;

	if (phdr_object_text((uintptr_t)&find_self_text, &s, &l) == 0) {
		self_text_start = s;
		self_text_limit = l;
		self_text_known = true;
	}
}

/*
 * The thread name, re-read with prctl(PR_GET_NAME) when the cached copy is
 * more than 10 ms old (coarse clock: a vdso read, no syscall), so a thread
 * that names itself after starting is labelled correctly within 10 ms
 * while a thread sampling at every allocation pays the syscall at most
 * 100 times a second.
 */
static void refresh_name(struct agent_thread *t)
{
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + 1;
	if (t->name_time_ns && now - t->name_time_ns < 10000000u)
		return;
	t->name_time_ns = now;
	memset(t->name, 0, sizeof(t->name));
	if (prctl(PR_GET_NAME, t->name, 0, 0, 0) != 0)
		t->name[0] = '\0';
	/* NUL-padded to the end, as stacktab_intern() compares it. */
	for (size_t i = strnlen(t->name, sizeof(t->name)); i < sizeof(t->name);
	     i++)
		t->name[i] = '\0';
}

int agent_fork_pending;

/*
 * unwind_backtrace() fenced against fork: a fork while another thread is
 * inside libunwind hands the child libunwind's locks held for good (the
 * child's first sample then waits for ever). fork_prepare raises
 * agent_fork_pending and waits until no registered thread has its
 * unwinding flag set (agent_threads_unwinding); a sampling thread does not
 * enter while it is raised (Dekker-style: both sides write, then read the
 * other's word, sequentially consistent). The flag is the thread's own:
 * at rate 1 every allocation passes here, and a shared counter's line
 * moved between the CPUs twice per call.
 */
static size_t unwind_fenced(struct agent_thread *t, uintptr_t *pcs, size_t max)
{
	size_t n;

	for (;;) {
		while (__atomic_load_n(&agent_fork_pending, __ATOMIC_SEQ_CST))
			sched_yield();
		__atomic_store_n(&t->unwinding, 1, __ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&agent_fork_pending, __ATOMIC_SEQ_CST))
			break;
		__atomic_store_n(&t->unwinding, 0, __ATOMIC_SEQ_CST);
	}
	n = unwind_backtrace(pcs, max, 0);
	__atomic_store_n(&t->unwinding, 0, __ATOMIC_RELEASE);
	return n;
}

/*
 * The stack of pcs[0..n) for thread t: the one it found last if that still
 * matches (a loop allocating from one site, at rate 1 on every call: no
 * lock, no hashing, no shared line written), else interned under
 * agent_intern_lock. NULL when the table is full.
 */
static struct record_stack *thread_stack(struct agent_thread *t,
					 const uintptr_t *pcs, size_t n)
{
	struct record_stack *s = t->stack;
	uint32_t gen = __atomic_load_n(&agent_tab.gen, __ATOMIC_ACQUIRE);
	size_t before;

	if (s && t->stack_gen == gen && stacktab_matches(s, pcs, n, t->name))
		return s;
	agent_lock(&agent_intern_lock);
	before = agent_tab.n_stacks;
	s = stacktab_intern(&agent_tab, pcs, n, t->name);
	gen = agent_tab.gen;
	agent_unlock(&agent_intern_lock);
	t->stack = s;
	t->stack_gen = gen;
	/* A new stack may be in an object loaded since the last look: its
	 * MODULE entry (outside the lock: this calls the loader). */
	if (before != stacktab_n_stacks(&agent_tab))
		record_modules_check();
	return s;
}

/*
 * Weights per thread (agent_per_thread: rate 1 without PALLOC_PEAK, whose
 * exact peak needs the events in one order). A sample or a free changes
 * the calling thread's record for the stack (stacktab.h, "Weights per
 * thread"; agent_thread_rec()) and the totals (agent_hdr->pt_*) with atomic
 * adds: no lock, and no shared line written but the totals'. A thread without a
 * record (not registered, or no memory for one) changes the stack's own
 * values under agent_tab_lock instead. At rate 1 every weight is 1: the
 * records and totals count whole blocks and bytes, exactly.
 */
static void totals_add(int64_t size, int sign)
{
	struct record_header *h = agent_hdr;
	int64_t o, now, max;

	if (sign < 0) {
		__atomic_sub_fetch(&h->pt_inuse_objects, 1, __ATOMIC_RELAXED);
		__atomic_sub_fetch(&h->pt_inuse_bytes, size, __ATOMIC_RELAXED);
		return;
	}
	o = __atomic_add_fetch(&h->pt_inuse_objects, 1, __ATOMIC_RELAXED);
	now = __atomic_add_fetch(&h->pt_inuse_bytes, size, __ATOMIC_RELAXED);
	max = __atomic_load_n(&h->pt_max_bytes, __ATOMIC_RELAXED);
	while (now > max)
		if (__atomic_compare_exchange_n(&h->pt_max_bytes, &max, now,
						true, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			__atomic_store_n(&h->pt_max_objects, o,
					 __ATOMIC_RELAXED);
			break;
		}
}

/* Add the live entry e (weight 1) to the weights (its alloc values too if
 * alloc) or, sign -1, take it out, as thread t. */
static void weights_add(struct agent_thread *t, const struct stacktab_live *e,
			bool alloc, int sign)
{
	struct record_rec *r = t->rec;

	if (!r || r->id != e->stack_id)
		r = agent_thread_rec(t, e->stack_id);
	if (r) {
		stacktab_rec_add(r, e->size, alloc, sign);
	} else {
		struct record_stack *s = stacktab_get(&agent_tab, e->stack_id);

		agent_lock(&agent_tab_lock);
		if (s)
			stacktab_weights_add(s, e, alloc, sign);
		agent_unlock(&agent_tab_lock);
	}
	totals_add((int64_t)e->size, sign);
}

double agent_max_inuse(void)
{
	if (agent_per_thread)
		return (double)__atomic_load_n(&agent_hdr->pt_max_bytes,
					       __ATOMIC_RELAXED);
	return agent_tab.max_inuse_bytes;
}

/*
 * Record a sample of stack s (NULL: the table is full) at p for thread t:
 * its live entry goes into p's shard under that shard's lock, then the
 * weights change in t's record (agent_per_thread), or the weights, totals
 * and counters change in one short section under agent_tab_lock
 * (stacktab.h, "Threads"). A drop always takes the lock.
 */
static void record(struct agent_thread *t, struct record_stack *s, void *p,
		   size_t size, double objects, double bytes)
{
	struct stacktab_live stale, e = {
					    .ptr = (uintptr_t)p,
					    .size = size,
					    .objects = (float)objects,
					    .stack_id = s ? s->id : 0,
				    };
	struct stacktab_shard *sh = stacktab_shard(&agent_tab, e.ptr);
	int r = -1;

	if (s) {
		agent_lock(&sh->lock);
		r = stacktab_live_put(&agent_tab, &e, &stale);
		agent_unlock(&sh->lock);
	}
	if (agent_per_thread) {
		if (r == 1 || r == -2)
			weights_add(t, &stale, false, -1);
		if (r >= 0) {
			weights_add(t, &e, true, 1);
			return;
		}
	}
	agent_lock(&agent_tab_lock);
	if (!agent_per_thread && (r == 1 || r == -2))
		stacktab_inuse_out(&agent_tab, &stale);
	if (r >= 0) {
		stacktab_count_in(&agent_tab, s, &e);
	} else {
		if (s)
			stacktab_count(s, &e);
		agent_hdr->dropped++;
		agent_hdr->dropped_bytes += bytes;
	}
	record_tab_totals();
	agent_unlock(&agent_tab_lock);
}

/* Record one sampled allocation of size bytes at p. Guard held by caller.
 * Inlined into alloc_slow(): one agent frame less for the unwinder to walk
 * and drop (about 100 instructions per sample). */
static inline __attribute__((always_inline)) void sample(struct agent_thread *t,
							 void *p, size_t size)
{
	uintptr_t pcs[UNWIND_MAX_FRAMES];
	size_t n, skip = 0, depth;
	double objects, bytes;

	if (!self_text_known)
		find_self_text();
	n = unwind_fenced(t, pcs, ARRAY_SIZE(pcs));
	while (skip < n && pcs[skip] >= self_text_start &&
	       pcs[skip] < self_text_limit)
		skip++;
	depth = n - skip;
	if (depth > agent_cfg.max_depth)
		depth = agent_cfg.max_depth;
	refresh_name(t);
	sampler_weight(agent_cfg.rate, size, &objects, &bytes);
	USDT_ALLOC(p, size, bytes + 0.5);
	t->samples++;
	record(t, thread_stack(t, pcs + skip, depth), p, size, objects, bytes);
	t->warm = true;
}

static void exact_add(int64_t d)
{
	struct record_header *h = agent_hdr;
	int64_t now = __atomic_add_fetch(&h->exact_inuse, d, __ATOMIC_RELAXED);
	int64_t peak = __atomic_load_n(&h->exact_peak, __ATOMIC_RELAXED);

	while (now > peak &&
	       !__atomic_compare_exchange_n(&h->exact_peak, &peak, now, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/*
 * The slow half of an allocation whose countdown ran out (hooks_int.h):
 * the thread's first call, a sample point reached, exact mode, or the
 * agent not (or no longer) running. Called after the real allocation with
 * its result, left_take(n) done; errno is preserved.
 */
/*
 * alloc_slow()'s guard: guard_enter() for a thread whose guard is not
 * held and whose countdown was just taken to or below 0, without moving
 * it into bytes_base (a reader meanwhile sees alloc_bytes short of this
 * call's bytes at most); slow_leave() moves both once, as guard_leave()
 * does. Returns the countdown taken (left_take(n) done: before - n).
 */
static inline uint64_t slow_enter(struct agent_thread *t)
{
	t->held_frees = t->free_count;
	t->guard = 1;
	return left_swap0(t);
}

static inline void slow_leave(struct agent_thread *t, uint64_t taken)
{
	uint64_t l = t->held;
	unsigned seq = t->seq;

	t->free_count = t->held_frees;
	__atomic_store_n(&t->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&t->bytes_base, t->bytes_base - taken + l,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&t->left, l, __ATOMIC_RELAXED);
	__atomic_store_n(&t->seq, seq + 2, __ATOMIC_RELEASE);
	t->guard = 0;
}

__attribute__((noinline)) void *alloc_slow(void *p, size_t n)
{
	struct agent_thread *t = &agent_tls;
	int saved = errno;
	uint64_t taken, before;

	/* The agent takes locks and sets the countdown here: a signal
	 * handler that allocates on this thread meanwhile must not come back
	 * in, and the agent's own allocations are not the program's. */
	taken = slow_enter(t);
	/* The countdown before this call (left_take took n from it). */
	before = taken + n;
	/* Before this allocation is counted: a snapshot taken here shows
	 * the heap as it was before the call. */
	if (agent_mode == AGENT_ON && t->state == AGENT_THREAD_LIVE)
		agent_safe_point();
	t->alloc_count++;
	if (agent_mode != AGENT_ON) {
		t->held = agent_mode == AGENT_DISABLED ? UINT64_MAX : before;
		goto out;
	}
	if (t->state == AGENT_THREAD_NEW) {
		agent_thread_setup(t);
		before = t->held;
	}
	if (t->state == AGENT_THREAD_EXITED || !p) {
		t->held = before;
		goto out;
	}
	if (agent_cfg.exact) {
		/* left stays 0: every call comes here. */
		exact_add((int64_t)malloc_usable_size(p));
		t->held = 0;
		if (n < t->sample_left) {
			t->sample_left -= n;
			goto out;
		}
		sample(t, p, n);
		t->sample_left = sampler_interval(&t->rng, agent_cfg.rate);
		thread_sync(t);
		record_slow_point(t->samples);
		goto out;
	}
	if (n < before) {
		/* Not due (a caller's countdown changed meanwhile). */
		t->held = before - n;
		goto out;
	}
	sample(t, p, n);
	t->held = sampler_interval(&t->rng, agent_cfg.rate);
	thread_sync(t);
	record_slow_point(t->samples);
out:
	slow_leave(t, taken);
	errno = saved;
	return p;
}

__attribute__((noinline)) void alloc_guarded(size_t n)
{
	struct agent_thread *t = &agent_tls;

	left_give(t, n);
	on_guarded(t);
}

/*
 * The slow half of a free whose filter slot is non-zero: the block may
 * be a sampled one. If e is not NULL the removed entry is copied there
 * (realloc restores it on failure). Exact mode's size accounting is the
 * caller's (realloc subtracts the old size only once the call succeeded).
 */
static __attribute__((noinline)) bool free_slow(void *p,
						struct stacktab_live *e)
{
	struct agent_thread *t = &agent_tls;
	int saved = errno;
	bool found = false;

	/* A child forked inside the agent (fork_child) stays out of the
	 * tables and their lock. */
	if (agent_mode != AGENT_DISABLED &&
	    stacktab_maybe_live(&agent_tab, (uintptr_t)p)) {
		/* A signal handler's free meanwhile must not relock. */
		struct stacktab_shard *sh =
			stacktab_shard(&agent_tab, (uintptr_t)p);
		struct stacktab_live out;

		/* The guard alone (the countdown not held): nothing here
		 * allocates, and a handler's malloc that is due finds it. */
		guard_enter_light(t);
		agent_lock(&sh->lock);
		found = stacktab_live_take(&agent_tab, (uintptr_t)p, &out);
		agent_unlock(&sh->lock);
		if (found && agent_per_thread) {
			weights_add(t, &out, false, -1);
		} else if (found) {
			agent_lock(&agent_tab_lock);
			stacktab_inuse_out(&agent_tab, &out);
			record_tab_totals();
			agent_unlock(&agent_tab_lock);
		}
		if (found && e)
			*e = out;
		else if (found)
			USDT_FREE(p);
		guard_leave_light(t);
		if (found)
			thread_sync(t);
	}
	errno = saved;
	return found;
}

/* Put back the entry free_slow() took from a block a failed realloc
 * keeps; a drop if there is no memory for it. Guard held by the caller. */
static void agent_restore(const struct stacktab_live *e)
{
	struct stacktab_shard *sh = stacktab_shard(&agent_tab, e->ptr);
	struct stacktab_live stale;
	int r;

	agent_lock(&sh->lock);
	r = stacktab_live_put(&agent_tab, e, &stale);
	agent_unlock(&sh->lock);
	if (agent_per_thread) {
		if (r == 1 || r == -2)
			weights_add(&agent_tls, &stale, false, -1);
		if (r >= 0) {
			weights_add(&agent_tls, e, false, 1);
			return;
		}
	}
	agent_lock(&agent_tab_lock);
	if (!agent_per_thread && (r == 1 || r == -2))
		stacktab_inuse_out(&agent_tab, &stale);
	if (r < 0)
		agent_hdr->dropped++;
	else
		stacktab_inuse_in(&agent_tab, e);
	record_tab_totals();
	agent_unlock(&agent_tab_lock);
}

/*
 * free_count wrapped from UINT64_MAX (the TLS image's value) to 0: the
 * thread's first free. Register the thread (so that a thread that only
 * frees is summed too), or before the agent starts count the free aside
 * and stay armed. Under the guard the count goes back at guard_leave.
 */
static __attribute__((noinline)) void free_register(struct agent_thread *t)
{
	int mode;

	if (t->guard_quiet || t->state != AGENT_THREAD_NEW)
		return;
	mode = __atomic_load_n(&agent_mode, __ATOMIC_ACQUIRE);
	if (mode == AGENT_ON) {
		guard_enter(t);
		agent_thread_setup(t); /* disarms: held_frees */
		t->held_frees++;
		guard_leave(t);
	} else if (mode == AGENT_OFF) {
		/* Init registers this thread if it is the main one, or a
		 * later free will. */
		t->free_count = UINT64_MAX;
		t->early_frees++;
	} else {
		t->free_count = 1;
	}
}

__attribute__((noinline)) bool free_first(void *p)
{
	/* A bootstrap block: uncounted, and the test stays armed. */
	if (is_boot(p)) {
		agent_tls.free_count = UINT64_MAX;
		return false;
	}
	free_register(&agent_tls);
	if (stacktab_maybe_live(&agent_tab, (uintptr_t)p))
		return free_marked(p);
	return true;
}

__attribute__((noinline)) bool free_marked(void *p)
{
	struct agent_thread *t = &agent_tls;

	if (is_boot(p)) {
		t->free_count--;
		return false;
	}
	/* The agent's own, or a signal handler's inside the agent (which
	 * may hold the table's locks): forwarded, not looked up. */
	if (t->guard_quiet)
		return true;
	if (agent_cfg.exact && agent_mode == AGENT_ON) {
		int saved = errno;

		exact_add(-(int64_t)malloc_usable_size(p));
		errno = saved;
	}
	free_slow(p, NULL);
	return true;
}

/* ---- the C interface ---- */

/* The slow end of malloc(), reached by a tail call (so malloc itself
 * needs no frame): the guard's calls go through untracked. */
static __attribute__((noinline)) void *malloc_due(size_t n)
{
	if (agent_tls.guard_quiet) {
		alloc_guarded(n);
		return agent_real.malloc(n);
	}
	return alloc_slow(agent_real.malloc(n), n);
}

PALLOC_EXPORT HOT_ENTRY void *malloc(size_t n)
{
	struct agent_thread *t = &agent_tls;

	if (unlikely(left_take(t, n)))
		return malloc_due(n);
	t->alloc_count++;
	return agent_real.malloc(n);
}

/* The cold ends of free(), reached by tail calls so that free() itself
 * needs no stack frame on its fast path. */
static __attribute__((noinline)) void free_first_release(void *p)
{
	if (free_first(p))
		agent_real.free(p);
}

static __attribute__((noinline)) void free_marked_release(void *p)
{
	if (free_marked(p))
		agent_real.free(p);
}

/* on_free() spelled out with tail calls: see the hot path note above. */
PALLOC_EXPORT HOT_ENTRY void free(void *p)
{
	struct agent_thread *t = &agent_tls;

	if (unlikely(!p))
		return;
	if (unlikely(count_free(t)))
		return free_first_release(p);
	if (unlikely(stacktab_maybe_live(&agent_tab, (uintptr_t)p)))
		return free_marked_release(p);
	agent_real.free(p);
}

static __attribute__((noinline)) void *calloc_due(size_t n, size_t size,
						  size_t total)
{
	if (agent_tls.guard_quiet) {
		alloc_guarded(total);
		return agent_real.calloc(n, size);
	}
	return alloc_slow(agent_real.calloc(n, size), total);
}

/* As malloc: counted before the call (a failed one too, as malloc's). */
PALLOC_EXPORT HOT_ENTRY void *calloc(size_t n, size_t size)
{
	struct agent_thread *t = &agent_tls;
	size_t total;

	/* Overflow: the real calloc fails with ENOMEM; not counted. */
	if (unlikely(__builtin_mul_overflow(n, size, &total)))
		return agent_real.calloc(n, size);
	if (unlikely(left_take(t, total)))
		return calloc_due(n, size, total);
	t->alloc_count++;
	return agent_real.calloc(n, size);
}

/*
 * realloc is a free of the old block and an allocation of the new one.
 * The old block leaves the live table before the real call (once the
 * real realloc has run, its address may be reused by another thread's
 * sampled malloc) and comes back if the call fails.
 */
static void *realloc_common(void *p, size_t n, size_t elem, bool array)
{
	struct agent_thread *t = &agent_tls;
	struct stacktab_live e;
	bool had = false;
	int64_t old_usable = 0;
	size_t total = n;
	void *q;

	if (array && __builtin_mul_overflow(n, elem, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	if (unlikely(is_boot(p))) {
		/* A bootstrap block cannot be resized by the real realloc. */
		q = malloc(total);
		if (q)
			memcpy(q, p,
			       boot_size(p) < total ? boot_size(p) : total);
		return q;
	}
	if (unlikely(t->guard_quiet)) {
		on_guarded(t);
		return agent_real.realloc(p, total);
	}
	if (p) {
		/* Exact mode (every filter bit set) and sampled blocks. */
		if (unlikely(agent_cfg.exact && agent_mode == AGENT_ON))
			old_usable = (int64_t)malloc_usable_size(p);
		if (unlikely(stacktab_maybe_live(&agent_tab, (uintptr_t)p)))
			had = free_slow(p, &e);
	}
	/* Never the real reallocarray: glibc's calls realloc through the
	 * PLT, which would count the block twice. */
	q = agent_real.realloc(p, total);
	if (!q && p && total != 0) {
		/* Failed: the old block is still live, as it was. */
		if (had) {
			int saved = errno;

			guard_enter_light(t);
			agent_restore(&e);
			guard_leave_light(t);
			errno = saved;
		}
		return NULL;
	}
	if (p) {
		/* The old block is gone only now: a failed realloc keeps it. */
		if (had)
			USDT_FREE(p);
		if (unlikely(count_free(t)))
			free_register(t);
		if (old_usable)
			exact_add(-old_usable);
	}
	if (q)
		on_alloc(t, q, total);
	return q;
}

static __attribute__((noinline)) void *realloc_due(void *p, size_t n)
{
	left_give(&agent_tls, n);
	return realloc_common(p, n, 1, false);
}

/* A failed realloc on the fast path: nothing was counted but the
 * countdown, which gets its bytes back. */
static __attribute__((noinline)) void *realloc_failed(size_t n)
{
	left_give(&agent_tls, n);
	return NULL;
}

/*
 * The fast path: a block that cannot be sampled (its filter bit clear:
 * never in exact mode, at rate 1, or for a bootstrap block) resized to a
 * size that is not due (nor guarded: left is 0 then) and not 0 (glibc's
 * realloc(p, 0) frees); counted after the call, as realloc_common does.
 */
PALLOC_EXPORT HOT_ENTRY void *realloc(void *p, size_t n)
{
	struct agent_thread *t = &agent_tls;
	void *q;

	if (unlikely(!p) || unlikely(!n) ||
	    unlikely(stacktab_maybe_live(&agent_tab, (uintptr_t)p)))
		return realloc_common(p, n, 1, false);
	if (unlikely(left_take(t, n)))
		return realloc_due(p, n);
	q = agent_real.realloc(p, n);
	if (unlikely(!q))
		return realloc_failed(n);
	t->alloc_count++;
	if (unlikely(count_free(t)))
		free_register(t);
	return q;
}

PALLOC_EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
	return realloc_common(p, n, size, true);
}

/* The common end of the aligned allocators (a guarded call takes
 * on_alloc's slow path, which forwards it untracked). */
static inline void *aligned_done(struct agent_thread *t, void *p, size_t n)
{
	if (p)
		on_alloc(t, p, n);
	return p;
}

PALLOC_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	struct agent_thread *t = &agent_tls;
	int rc;

	agent_resolve_real();
	if (!agent_real.posix_memalign) {
		void *p = agent_real.memalign ? agent_real.memalign(align, n)
					      : NULL;

		if (!p)
			return ENOMEM;
		*out = p;
		rc = 0;
	} else {
		rc = agent_real.posix_memalign(out, align, n);
	}
	if (rc == 0)
		aligned_done(t, *out, n);
	return rc;
}

/*
 * aligned_alloc() and memalign(): resolve the next allocator, call its
 * (align, n) function that *real points to once resolved (it is read after
 * agent_resolve_real()), and record the block. No such function: NULL with
 * errno ENOMEM. Inlined into each entry point, so it costs no call.
 */
static inline __attribute__((always_inline)) void *
aligned_call(memalign_fn const *real, size_t align, size_t n)
{
	struct agent_thread *t = &agent_tls;

	agent_resolve_real();
	if (!*real) {
		errno = ENOMEM;
		return NULL;
	}
	return aligned_done(t, (*real)(align, n), n);
}

PALLOC_EXPORT void *aligned_alloc(size_t align, size_t n)
{
	return aligned_call(&agent_real.aligned_alloc, align, n);
}

PALLOC_EXPORT void *memalign(size_t align, size_t n)
{
	return aligned_call(&agent_real.memalign, align, n);
}

/* valloc() and pvalloc(): as aligned_call(), for the page-aligned (n)
 * functions. */
static inline __attribute__((always_inline)) void *
page_call(malloc_fn const *real, size_t n)
{
	struct agent_thread *t = &agent_tls;

	agent_resolve_real();
	if (!*real) {
		errno = ENOMEM;
		return NULL;
	}
	return aligned_done(t, (*real)(n), n);
}

PALLOC_EXPORT void *valloc(size_t n)
{
	return page_call(&agent_real.valloc, n);
}

PALLOC_EXPORT void *pvalloc(size_t n)
{
	return page_call(&agent_real.pvalloc, n);
}

/* Count a free of p by any of the free variants; false: nothing to do. */
static inline bool free_common(void *p)
{
	if (unlikely(!p))
		return false;
	return on_free(&agent_tls, p);
}

/* C23; glibc declares them from 2.39 only. */
PALLOC_EXPORT void free_sized(void *p, size_t size);
PALLOC_EXPORT void free_aligned_sized(void *p, size_t align, size_t size);

PALLOC_EXPORT void free_sized(void *p, size_t size)
{
	if (!free_common(p))
		return;
	if (agent_real.free_sized)
		agent_real.free_sized(p, size);
	else
		agent_real.free(p);
}

PALLOC_EXPORT void free_aligned_sized(void *p, size_t align, size_t size)
{
	if (!free_common(p))
		return;
	if (agent_real.free_aligned_sized)
		agent_real.free_aligned_sized(p, align, size);
	else
		agent_real.free(p);
}
