/* SPDX-License-Identifier: MIT */
/* A futex mutex for the lock the sampler takes on every sample. */
#ifndef PALLOC_AGENT_LOCK_H
#define PALLOC_AGENT_LOCK_H

#include <stdbool.h>

/*
 * Ulrich Drepper's "mutex3" from "Futexes Are Tricky" (2011), section 6:
 * state 0 unlocked, 1 locked, 2 locked with possible waiters. Taking and
 * releasing it uncontended is one atomic instruction each, against about
 * 30 instructions each for glibc's pthread_mutex_lock and unlock, which
 * matters at PALLOC_SAMPLE_RATE=1, where every malloc and every free of a
 * sampled block takes agent_tab_lock (bench/agent/README.md). Waiters
 * sleep in the kernel (FUTEX_WAIT_PRIVATE), never spin: a preempted
 * holder costs them nothing. Not recursive, no owner, no priority
 * inheritance (like a default pthread mutex). Process-private: a fork
 * child re-initialises it with agent_lock_reset(). Not async-signal-safe
 * (a handler must not take a lock its thread may hold: the agent's guard
 * sees to that).
 */
struct agent_lock {
	int state;
};

#define AGENT_LOCK_INIT                                                        \
	{                                                                      \
		0                                                              \
	}

/* Sleep until the lock is free and take it (the contended half). */
void agent_lock_wait(struct agent_lock *l, int seen);
/* Wake one waiter (the contended half of agent_unlock). */
void agent_lock_wake(struct agent_lock *l);

/* Take l, sleeping while another thread holds it. */
static inline void agent_lock(struct agent_lock *l)
{
	int c = 0;

	if (!__atomic_compare_exchange_n(&l->state, &c, 1, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		agent_lock_wait(l, c);
}

/* Take l if it is free. Returns true when taken. */
static inline bool agent_trylock(struct agent_lock *l)
{
	int c = 0;

	return __atomic_compare_exchange_n(&l->state, &c, 1, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* Release l, held by the caller. */
static inline void agent_unlock(struct agent_lock *l)
{
	if (__atomic_fetch_sub(&l->state, 1, __ATOMIC_RELEASE) != 1)
		agent_lock_wake(l);
}

/* In a fork child: the lock is free (the holder, if any, is gone). */
static inline void agent_lock_reset(struct agent_lock *l)
{
	l->state = 0;
}

#endif /* PALLOC_AGENT_LOCK_H */
