/* SPDX-License-Identifier: MIT */
/* The interposed C++ operators new and delete, under their mangled names. */
#include "hooks_int.h"
#include "fmt.h"

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
