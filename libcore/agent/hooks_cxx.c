/* SPDX-License-Identifier: MIT */
/* The interposed C++ operators new and delete, under their mangled names. */
#include "hooks_int.h"
#include "fmt.h"

#include <dlfcn.h>

/*
 * Each forwards to the next definition (libstdc++'s, or jemalloc's and
 * tcmalloc's own) with the guard set, so that libstdc++'s operator new,
 * which calls malloc, is not counted twice; the guard is "quiet" (such
 * calls are expected, not reentries). The guard is released by a cleanup
 * handler, which also runs when the real operator new throws bad_alloc
 * through this frame (the agent is built with -fexceptions). In a program
 * with no C++ runtime there is no next definition: the real malloc and
 * free stand in, and a failing throwing new aborts (nothing could catch).
 */
static void quiet_leave(struct agent_thread **t)
{
	(*t)->quiet--;
	(*t)->guard--;
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

static void *unwinder_sym(void **cache, const char *name)
{
	void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);

	if (!f) {
		f = dlsym(RTLD_DEFAULT, name);
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

#define QUIET_SCOPE(t)                                                         \
	struct agent_thread *quiet_t __attribute__((cleanup(quiet_leave))) =   \
		(t);                                                           \
	quiet_t->guard++;                                                      \
	quiet_t->quiet++

static PALLOC_NORETURN void new_failed(size_t n)
{
	fmt_warn("operator new(%zu) failed and no C++ runtime is loaded to "
		 "throw std::bad_alloc; aborting",
		 n);
	abort();
}

static void *fallback_new(size_t n, size_t align, bool nothrow)
{
	void *p;

	if (align > 16) {
		if (!agent_real.memalign)
			p = NULL;
		else
			p = agent_real.memalign(align, n ? n : 1);
	} else {
		p = agent_real.malloc(n ? n : 1);
	}
	if (!p && !nothrow)
		new_failed(n);
	return p;
}

/* Allocation side: forward, then count (the forward is quiet-guarded). */
#define NEW_BODY(call, n, align, nothrow)                                      \
	struct agent_thread *t = &agent_tls;                                   \
	void *p;                                                               \
	agent_resolve_real();                                                  \
	if (unlikely(t->guard)) {                                              \
		on_guarded(t);                                                 \
		return call;                                                   \
	}                                                                      \
	{                                                                      \
		QUIET_SCOPE(t);                                                \
		p = call;                                                      \
	}                                                                      \
	if (p)                                                                 \
		on_alloc(t, p, n);                                             \
	return p

#define NEW_CALL(fn, args, n, align, nothrow)                                  \
	(agent_real.fn ? agent_real.fn args : fallback_new(n, align, nothrow))

PALLOC_EXPORT void *_Znwm(size_t n);
PALLOC_EXPORT HOT_ENTRY void *_Znwm(size_t n)
{
	NEW_BODY(NEW_CALL(znwm, (n), n, 0, false), n, 0, false);
}

PALLOC_EXPORT void *_Znam(size_t n);
PALLOC_EXPORT HOT_ENTRY void *_Znam(size_t n)
{
	NEW_BODY(NEW_CALL(znam, (n), n, 0, false), n, 0, false);
}

PALLOC_EXPORT void *_ZnwmRKSt9nothrow_t(size_t n, const void *nt);
PALLOC_EXPORT void *_ZnwmRKSt9nothrow_t(size_t n, const void *nt)
{
	NEW_BODY(NEW_CALL(znwm_nt, (n, nt), n, 0, true), n, 0, true);
}

PALLOC_EXPORT void *_ZnamRKSt9nothrow_t(size_t n, const void *nt);
PALLOC_EXPORT void *_ZnamRKSt9nothrow_t(size_t n, const void *nt)
{
	NEW_BODY(NEW_CALL(znam_nt, (n, nt), n, 0, true), n, 0, true);
}

PALLOC_EXPORT void *_ZnwmSt11align_val_t(size_t n, size_t al);
PALLOC_EXPORT void *_ZnwmSt11align_val_t(size_t n, size_t al)
{
	NEW_BODY(NEW_CALL(znwm_al, (n, al), n, al, false), n, al, false);
}

PALLOC_EXPORT void *_ZnamSt11align_val_t(size_t n, size_t al);
PALLOC_EXPORT void *_ZnamSt11align_val_t(size_t n, size_t al)
{
	NEW_BODY(NEW_CALL(znam_al, (n, al), n, al, false), n, al, false);
}

PALLOC_EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t al,
						       const void *nt);
PALLOC_EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t al,
						       const void *nt)
{
	NEW_BODY(NEW_CALL(znwm_al_nt, (n, al, nt), n, al, true), n, al, true);
}

PALLOC_EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t al,
						       const void *nt);
PALLOC_EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t al,
						       const void *nt)
{
	NEW_BODY(NEW_CALL(znam_al_nt, (n, al, nt), n, al, true), n, al, true);
}

/* Release side: count first (before the block can be reused), then
 * forward quietly. */
#define DELETE_BODY(fn, args)                                                  \
	struct agent_thread *t = &agent_tls;                                   \
	agent_resolve_real();                                                  \
	if (unlikely(!p) || unlikely(!on_free(t, p)))                          \
		return;                                                        \
	{                                                                      \
		QUIET_SCOPE(t);                                                \
		if (agent_real.fn)                                             \
			agent_real.fn args;                                    \
		else                                                           \
			agent_real.free(p);                                    \
	}

PALLOC_EXPORT void _ZdlPv(void *p);
PALLOC_EXPORT HOT_ENTRY void _ZdlPv(void *p)
{
	DELETE_BODY(zdlpv, (p));
}

PALLOC_EXPORT void _ZdaPv(void *p);
PALLOC_EXPORT HOT_ENTRY void _ZdaPv(void *p)
{
	DELETE_BODY(zdapv, (p));
}

PALLOC_EXPORT void _ZdlPvm(void *p, size_t n);
PALLOC_EXPORT HOT_ENTRY void _ZdlPvm(void *p, size_t n)
{
	DELETE_BODY(zdlpv_sz, (p, n));
}

PALLOC_EXPORT void _ZdaPvm(void *p, size_t n);
PALLOC_EXPORT HOT_ENTRY void _ZdaPvm(void *p, size_t n)
{
	DELETE_BODY(zdapv_sz, (p, n));
}

PALLOC_EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *nt);
PALLOC_EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *nt)
{
	DELETE_BODY(zdlpv_nt, (p, nt));
}

PALLOC_EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *nt);
PALLOC_EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *nt)
{
	DELETE_BODY(zdapv_nt, (p, nt));
}

PALLOC_EXPORT void _ZdlPvSt11align_val_t(void *p, size_t al);
PALLOC_EXPORT void _ZdlPvSt11align_val_t(void *p, size_t al)
{
	DELETE_BODY(zdlpv_al, (p, al));
}

PALLOC_EXPORT void _ZdaPvSt11align_val_t(void *p, size_t al);
PALLOC_EXPORT void _ZdaPvSt11align_val_t(void *p, size_t al)
{
	DELETE_BODY(zdapv_al, (p, al));
}

PALLOC_EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t al);
PALLOC_EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t al)
{
	DELETE_BODY(zdlpv_sz_al, (p, n, al));
}

PALLOC_EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t al);
PALLOC_EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t al)
{
	DELETE_BODY(zdapv_sz_al, (p, n, al));
}

PALLOC_EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al,
						       const void *nt);
PALLOC_EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al,
						       const void *nt)
{
	DELETE_BODY(zdlpv_al_nt, (p, al, nt));
}

PALLOC_EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al,
						       const void *nt);
PALLOC_EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t al,
						       const void *nt)
{
	DELETE_BODY(zdapv_al_nt, (p, al, nt));
}
