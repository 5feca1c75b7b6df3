/* SPDX-License-Identifier: MIT */
/* The interposed C++ operators new and delete, under their mangled names. */
#include "hooks_int.h"
#include "fmt.h"
#include "phdr.h"

#include <dlfcn.h>

/*
 * Each operator counts like malloc and free (hooks_int.h: the countdown
 * taken before the call, the free counted and filtered before it), then
 * goes one of two ways, chosen at resolution (agent_cxx_resolve):
 *
 *  - direct: the next operator is libstdc++'s, whose new is a loop around
 *    malloc (with new_handler and bad_alloc when it fails) and whose
 *    delete is free, and the program's malloc, free and plain operators
 *    are the agent's. Then new calls the real malloc itself and delete
 *    tail-calls the real free: what libstdc++ would do, without its
 *    frames and without passing through the agent's malloc a second time.
 *    A failed malloc falls back to libstdc++'s operator (forwarded), for
 *    its new_handler loop and its exception. The aligned operators are
 *    always forwarded.
 *  - forwarded: to the next definition (jemalloc's, tcmalloc's own, or
 *    libstdc++'s when the program overrides an operator), with the guard
 *    set, so that an operator new that calls malloc, or a delete that
 *    calls free (jemalloc's), is not counted twice; the guard is "quiet"
 *    (such calls are expected, not reentries). The guard is released by
 *    a cleanup handler, which also runs when the real operator new
 *    throws bad_alloc through this frame (the agent is built with
 *    -fexceptions). In a program with no C++ runtime at its start there
 *    is no next definition: the real malloc and free stand in. When
 *    malloc then fails, C++ code dlopened since (libstdc++ loaded with
 *    it, RTLD_LOCAL as often) gets its runtime's operator new, called as
 *    it would be without the agent: new_handler, then std::bad_alloc
 *    thrown through this frame. Only with no C++ runtime loaded at all
 *    does a failing throwing new abort (nothing could catch).
 */
/*
 * The quiet guard, light: quiet alone is raised, which the slow paths
 * take as the guard (guard_quiet) while the readers of the counts do not
 * (thread_frees: nothing is held). The countdown and the counts are
 * remembered and put back after the forwarded call: what it counted
 * meanwhile (its own malloc, or free as jemalloc's delete calls it; a
 * signal handler's, as under the full guard) is dropped. A due
 * allocation inside is forwarded untracked (left_give), so nothing is
 * sampled there. Under an outer guard the values put back are that
 * guard's. The operator new's keep the countdown and the allocation
 * count, the delete's the free count.
 */
struct quiet {
	uint64_t left, allocs;
};

static inline void quiet_new_leave(struct quiet *q)
{
	struct agent_thread *t = &agent_tls;

	t->left = q->left;
	t->alloc_count = q->allocs;
	t->quiet--;
}

/*
 * The cleanup makes the compiler call _Unwind_Resume and name
 * __gcc_personality_v0 as the frames' personality: libgcc_s's, whose
 * loading (its mapping and relocation, some 20,000 instructions) every
 * process paid, C or C++. They are defined here instead, local to the
 * agent (libpalloc.map exports neither), and forward to the unwinder's
 * own, found when an exception first goes through an agent frame: then
 * a C++ runtime threw, so libgcc_s (or another unwinder defining them)
 * is loaded. dlsym there runs outside any hook and agent lock, on the
 * path of a failed operator new only. Their types are the unwinder's ABI
 * (the Itanium C++ ABI's base level), declared here: <unwind.h> is
 * libunwind's where its headers come first.
 */
struct _Unwind_Exception;
struct _Unwind_Context;
#define URC_CONTINUE_UNWIND 8 /* _Unwind_Reason_Code */
typedef int (*personality_fn)(int version, int actions, uint64_t cls,
			      struct _Unwind_Exception *ue,
			      struct _Unwind_Context *ctx);
typedef void (*resume_fn)(struct _Unwind_Exception *ue);
int __gcc_personality_v0(int version, int actions, uint64_t cls,
			 struct _Unwind_Exception *ue,
			 struct _Unwind_Context *ctx);
PALLOC_NORETURN void _Unwind_Resume(struct _Unwind_Exception *ue);

extern const char __ehdr_start[] __attribute__((visibility("hidden")));

/*
 * The first definition of name outside the agent among all loaded
 * objects, those dlopened RTLD_LOCAL too (phdr.h); NULL when none. No
 * allocation.
 */
static void *loaded_sym(const char *name)
{
	struct phdr_definition def;

	if (phdr_first_definition_outside(name, (uintptr_t)__ehdr_start, &def))
		return NULL;
	return (void *)def.addr;
}

/*
 * The unwinder's function name as the C++ runtime's own calls bind it:
 * the global one (for a C program whose C++ code was dlopened
 * RTLD_LOCAL, libunwind.so.8's, loaded with the agent: libstdc++'s
 * _Unwind_RaiseException binds to it too), else the first loaded outside
 * the agent (libgcc_s's personality routine, loaded RTLD_LOCAL with that
 * code).
 */
static void *unwinder_sym(void **cache, const char *name)
{
	void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);

	if (!f) {
		f = dlsym(RTLD_DEFAULT, name);
		if (!f)
			f = loaded_sym(name);
		__atomic_store_n(cache, f, __ATOMIC_RELEASE);
	}
	return f;
}

int __gcc_personality_v0(int version, int actions, uint64_t cls,
			 struct _Unwind_Exception *ue,
			 struct _Unwind_Context *ctx)
{
	static void *real;
	personality_fn f =
		(personality_fn)unwinder_sym(&real, "__gcc_personality_v0");

	/* No unwinder's personality: as a frame without one. */
	if (!f)
		return URC_CONTINUE_UNWIND;
	return f(version, actions, cls, ue, ctx);
}

void _Unwind_Resume(struct _Unwind_Exception *ue)
{
	static void *real;
	resume_fn f = (resume_fn)unwinder_sym(&real, "_Unwind_Resume");

	/* Only a landing pad of an unwinding exception calls this, so the
	 * unwinder is loaded; it continues from this frame's caller. */
	if (f)
		f(ue);
	abort();
}

/* Forward a call of operator new: thrown through, the cleanup puts the
 * counts back. */
#define QUIET_NEW(t)                                                           \
	struct quiet quiet_g                                                   \
		__attribute__((cleanup(quiet_new_leave), unused)) = {          \
			.left = (t)->left,                                     \
			.allocs = (t)->alloc_count,                            \
	};                                                                     \
	(t)->quiet++

static PALLOC_NORETURN void new_failed(size_t n)
{
	fmt_warn("operator new(%zu) failed and no C++ runtime is loaded to "
		 "throw std::bad_alloc; aborting",
		 n);
	abort();
}

/* No next operator at resolution: the real allocator; NULL when it
 * fails. */
static void *fallback_new(size_t n, size_t align)
{
	if (align > 16)
		return agent_real.memalign
			       ? agent_real.memalign(align, n ? n : 1)
			       : NULL;
	return agent_real.malloc(n ? n : 1);
}

/* Forwarded: resolve, then the next definition (or the fallback) with
 * the quiet guard. The fallback failed: the operator of a C++ runtime
 * loaded since (sym), whose new_handler loop and exception the program
 * gets as without the agent; none: abort, or NULL for nothrow. */
#define FORWARD_NEW(fn, sym, params, args, n, align, nothrow)                  \
	static void *forward_##fn params                                       \
	{                                                                      \
		struct agent_thread *t = &agent_tls;                           \
		__typeof__(agent_real.cxx.fn) late;                            \
		void *p;                                                       \
                                                                               \
		if (unlikely(!agent_real.cxx.fn))                              \
			agent_resolve_real();                                  \
		QUIET_NEW(t);                                                  \
		if (agent_real.cxx.fn)                                         \
			return agent_real.cxx.fn args;                         \
		p = fallback_new(n, align);                                    \
		if (p)                                                         \
			return p;                                              \
		late = (__typeof__(late))loaded_sym(sym);                      \
		if (late)                                                      \
			return late args;                                      \
		if (!(nothrow))                                                \
			new_failed(n);                                         \
		return NULL;                                                   \
	}

FORWARD_NEW(znwm, "_Znwm", (size_t n), (n), n, 0, false)
FORWARD_NEW(znam, "_Znam", (size_t n), (n), n, 0, false)
FORWARD_NEW(znwm_nt, "_ZnwmRKSt9nothrow_t", (size_t n, const void *nt), (n, nt),
	    n, 0, true)
FORWARD_NEW(znam_nt, "_ZnamRKSt9nothrow_t", (size_t n, const void *nt), (n, nt),
	    n, 0, true)
FORWARD_NEW(znwm_al, "_ZnwmSt11align_val_t", (size_t n, size_t al), (n, al), n,
	    al, false)
FORWARD_NEW(znam_al, "_ZnamSt11align_val_t", (size_t n, size_t al), (n, al), n,
	    al, false)
FORWARD_NEW(znwm_al_nt, "_ZnwmSt11align_val_tRKSt9nothrow_t",
	    (size_t n, size_t al, const void *nt), (n, al, nt), n, al, true)
FORWARD_NEW(znam_al_nt, "_ZnamSt11align_val_tRKSt9nothrow_t",
	    (size_t n, size_t al, const void *nt), (n, al, nt), n, al, true)

/* operator delete does not throw: the free count put back inline. */
#define FORWARD_DELETE(fn, params, args)                                       \
	static void forward_##fn params                                        \
	{                                                                      \
		struct agent_thread *t = &agent_tls;                           \
		uint64_t frees;                                                \
                                                                               \
		if (unlikely(!agent_real.cxx.fn))                              \
			agent_resolve_real();                                  \
		frees = t->free_count;                                         \
		t->quiet++;                                                    \
		if (agent_real.cxx.fn)                                         \
			agent_real.cxx.fn args;                                \
		else                                                           \
			agent_real.free(p);                                    \
		t->free_count = frees;                                         \
		t->quiet--;                                                    \
	}

FORWARD_DELETE(zdlpv, (void *p), (p))
FORWARD_DELETE(zdapv, (void *p), (p))
FORWARD_DELETE(zdlpv_sz, (void *p, size_t n), (p, n))
FORWARD_DELETE(zdapv_sz, (void *p, size_t n), (p, n))
FORWARD_DELETE(zdlpv_nt, (void *p, const void *nt), (p, nt))
FORWARD_DELETE(zdapv_nt, (void *p, const void *nt), (p, nt))
FORWARD_DELETE(zdlpv_al, (void *p, size_t al), (p, al))
FORWARD_DELETE(zdapv_al, (void *p, size_t al), (p, al))
FORWARD_DELETE(zdlpv_sz_al, (void *p, size_t n, size_t al), (p, n, al))
FORWARD_DELETE(zdapv_sz_al, (void *p, size_t n, size_t al), (p, n, al))
FORWARD_DELETE(zdlpv_al_nt, (void *p, size_t al, const void *nt), (p, al, nt))
FORWARD_DELETE(zdapv_al_nt, (void *p, size_t al, const void *nt), (p, al, nt))

/* Direct: libstdc++'s operator new is malloc(n ? n : 1) until it succeeds
 * (its loop and its exception when it does not). */
#define DIRECT_NEW(fn, params, args)                                           \
	static void *direct_##fn params                                        \
	{                                                                      \
		void *p = agent_real.malloc(n ? n : 1);                        \
                                                                               \
		if (likely(p))                                                 \
			return p;                                              \
		return forward_##fn args;                                      \
	}

DIRECT_NEW(znwm, (size_t n), (n))
DIRECT_NEW(znam, (size_t n), (n))
DIRECT_NEW(znwm_nt, (size_t n, const void *nt), (n, nt))
DIRECT_NEW(znam_nt, (size_t n, const void *nt), (n, nt))

/* Direct: libstdc++'s sized and nothrow deletes end in free(p). */
static void direct_free_sz(void *p, size_t n PALLOC_UNUSED)
{
	agent_real.free(p);
}

static void direct_free_nt(void *p, const void *nt PALLOC_UNUSED)
{
	agent_real.free(p);
}

/* The way each operator goes after counting: forwarded until resolution
 * (forward_X resolves first), then direct_X or the real free where
 * agent_cxx_resolve() chooses them. Static: operators run before any
 * constructor of the agent's (libstdc++'s own initialisation). */
static struct agent_cxx_ops ways = {
	.znwm = forward_znwm,
	.znam = forward_znam,
	.znwm_nt = forward_znwm_nt,
	.znam_nt = forward_znam_nt,
	.znwm_al = forward_znwm_al,
	.znam_al = forward_znam_al,
	.znwm_al_nt = forward_znwm_al_nt,
	.znam_al_nt = forward_znam_al_nt,
	.zdlpv = forward_zdlpv,
	.zdapv = forward_zdapv,
	.zdlpv_sz = forward_zdlpv_sz,
	.zdapv_sz = forward_zdapv_sz,
	.zdlpv_nt = forward_zdlpv_nt,
	.zdapv_nt = forward_zdapv_nt,
	.zdlpv_al = forward_zdlpv_al,
	.zdapv_al = forward_zdapv_al,
	.zdlpv_sz_al = forward_zdlpv_sz_al,
	.zdapv_sz_al = forward_zdapv_sz_al,
	.zdlpv_al_nt = forward_zdlpv_al_nt,
	.zdapv_al_nt = forward_zdapv_al_nt,
};

void agent_cxx_resolve(bool new_direct, bool delete_direct)
{
	if (new_direct) {
		__atomic_store_n(&ways.znwm, direct_znwm, __ATOMIC_RELAXED);
		__atomic_store_n(&ways.znam, direct_znam, __ATOMIC_RELAXED);
		__atomic_store_n(&ways.znwm_nt, direct_znwm_nt,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&ways.znam_nt, direct_znam_nt,
				 __ATOMIC_RELAXED);
	}
	if (delete_direct) {
		__atomic_store_n(&ways.zdlpv, agent_real.free,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&ways.zdapv, agent_real.free,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&ways.zdlpv_sz, direct_free_sz,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&ways.zdapv_sz, direct_free_sz,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&ways.zdlpv_nt, direct_free_nt,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&ways.zdapv_nt, direct_free_nt,
				 __ATOMIC_RELAXED);
	}
}

/*
 * Allocation side. The due path gives the countdown back before the call
 * (which may throw: the countdown must not stay taken), then takes it
 * again and samples after it; a guarded call is forwarded untracked.
 */
#define NEW_HOOK(name, fn, params, args, n)                                    \
	static __attribute__((noinline)) void *due_##fn params                 \
	{                                                                      \
		struct agent_thread *t = &agent_tls;                           \
		void *p;                                                       \
                                                                               \
		left_give(t, n);                                               \
		if (t->guard_quiet) {                                          \
			on_guarded(t);                                         \
			return ways.fn args;                                   \
		}                                                              \
		p = ways.fn args;                                              \
		if (likely(left_take(t, n)))                                   \
			return alloc_slow(p, n);                               \
		t->alloc_count++;                                              \
		return p;                                                      \
	}                                                                      \
	PALLOC_EXPORT void *name params;                                       \
	PALLOC_EXPORT HOT_ENTRY void *name params                              \
	{                                                                      \
		struct agent_thread *t = &agent_tls;                           \
                                                                               \
		if (unlikely(left_take(t, n)))                                 \
			return due_##fn args;                                  \
		t->alloc_count++;                                              \
		return ways.fn args;                                           \
	}

NEW_HOOK(_Znwm, znwm, (size_t n), (n), n)
NEW_HOOK(_Znam, znam, (size_t n), (n), n)
NEW_HOOK(_ZnwmRKSt9nothrow_t, znwm_nt, (size_t n, const void *nt), (n, nt), n)
NEW_HOOK(_ZnamRKSt9nothrow_t, znam_nt, (size_t n, const void *nt), (n, nt), n)
NEW_HOOK(_ZnwmSt11align_val_t, znwm_al, (size_t n, size_t al), (n, al), n)
NEW_HOOK(_ZnamSt11align_val_t, znam_al, (size_t n, size_t al), (n, al), n)
NEW_HOOK(_ZnwmSt11align_val_tRKSt9nothrow_t, znwm_al_nt,
	 (size_t n, size_t al, const void *nt), (n, al, nt), n)
NEW_HOOK(_ZnamSt11align_val_tRKSt9nothrow_t, znam_al_nt,
	 (size_t n, size_t al, const void *nt), (n, al, nt), n)

/* Release side: counted (and a sampled block taken out) before the block
 * can be reused, then the way chosen; the cold ends reached by tail
 * calls, as free()'s, so that the fast path needs no frame. */
#define DELETE_HOOK(name, fn, params, args)                                    \
	static __attribute__((noinline)) void first_##fn params                \
	{                                                                      \
		if (free_first(p))                                             \
			ways.fn args;                                          \
	}                                                                      \
	static __attribute__((noinline)) void marked_##fn params               \
	{                                                                      \
		if (free_marked(p))                                            \
			ways.fn args;                                          \
	}                                                                      \
	PALLOC_EXPORT void name params;                                        \
	PALLOC_EXPORT HOT_ENTRY void name params                               \
	{                                                                      \
		if (unlikely(!p))                                              \
			return;                                                \
		if (unlikely(count_free(&agent_tls)))                          \
			return first_##fn args;                                \
		if (unlikely(stacktab_maybe_live(&agent_tab, (uintptr_t)p)))   \
			return marked_##fn args;                               \
		ways.fn args;                                                  \
	}

DELETE_HOOK(_ZdlPv, zdlpv, (void *p), (p))
DELETE_HOOK(_ZdaPv, zdapv, (void *p), (p))
DELETE_HOOK(_ZdlPvm, zdlpv_sz, (void *p, size_t n), (p, n))
DELETE_HOOK(_ZdaPvm, zdapv_sz, (void *p, size_t n), (p, n))
DELETE_HOOK(_ZdlPvRKSt9nothrow_t, zdlpv_nt, (void *p, const void *nt), (p, nt))
DELETE_HOOK(_ZdaPvRKSt9nothrow_t, zdapv_nt, (void *p, const void *nt), (p, nt))
DELETE_HOOK(_ZdlPvSt11align_val_t, zdlpv_al, (void *p, size_t al), (p, al))
DELETE_HOOK(_ZdaPvSt11align_val_t, zdapv_al, (void *p, size_t al), (p, al))
DELETE_HOOK(_ZdlPvmSt11align_val_t, zdlpv_sz_al, (void *p, size_t n, size_t al),
	    (p, n, al))
DELETE_HOOK(_ZdaPvmSt11align_val_t, zdapv_sz_al, (void *p, size_t n, size_t al),
	    (p, n, al))
DELETE_HOOK(_ZdlPvSt11align_val_tRKSt9nothrow_t, zdlpv_al_nt,
	    (void *p, size_t al, const void *nt), (p, al, nt))
DELETE_HOOK(_ZdaPvSt11align_val_tRKSt9nothrow_t, zdapv_al_nt,
	    (void *p, size_t al, const void *nt), (p, al, nt))
