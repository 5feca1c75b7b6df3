/* SPDX-License-Identifier: MIT */
/* Idle points: the allocator's figures taken as a thread starts to wait. */
#include "agent_int.h"

#include <dlfcn.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <time.h>

/*
 * The agent has no thread: the allocator's figures in the record
 * (header.allocator) are taken on the program's threads, at most once a
 * second from the allocation path, which leaves them up to a second
 * older than the heap when the program then goes quiet. So the agent also
 * takes them where a thread starts to wait, having allocated or freed
 * since it last waited: these interposed calls, through which servers,
 * interpreters and timers wait (epoll_wait, ppoll, nanosleep,
 * clock_nanosleep, usleep), take them first (record_idle_point: within
 * 1/50 of the process's time), then call the C library's function with
 * the same arguments. A wait with a zero timeout is no idle point.
 *
 * Calls a signal handler may make are not idle points: a handler may
 * have interrupted the allocator itself, and the figures are read by
 * walking its heap. So read, pause, poll, select, sleep (which calls the
 * C library's nanosleep internally, not this one), sigsuspend, accept,
 * recv and wait, all async-signal-safe (signal-safety(7)), are left
 * alone; a process idle there shows the figures of its last snapshot,
 * their age with them (palloc(7)). The functions here are not
 * async-signal-safe: a program may not call them from a handler.
 */

/* This thread's alloc_count + free_count at its last idle point. */
static __thread uint64_t idle_mark __attribute__((tls_model("initial-exec")));

static void idle_point(void)
{
	struct agent_thread *t = &agent_tls;
	uint64_t c;
	int saved;

	if (__atomic_load_n(&agent_mode, __ATOMIC_RELAXED) != AGENT_ON ||
	    t->guard || t->state != AGENT_THREAD_LIVE)
		return;
	c = t->alloc_count + t->free_count;
	if (c == idle_mark)
		return;
	idle_mark = c;
	saved = errno;
	record_idle_point();
	errno = saved;
}

enum {
	FN_NANOSLEEP,
	FN_CLOCK_NANOSLEEP,
	FN_USLEEP,
	FN_EPOLL_WAIT,
	FN_EPOLL_PWAIT,
	FN_PPOLL,
	FN_N
};
static const char *const fn_names[FN_N] = {
	"nanosleep",  "clock_nanosleep", "usleep",
	"epoll_wait", "epoll_pwait",	 "ppoll",
};
static void *real_fn[FN_N];

/* The next definition of name (dlsym may allocate: guarded). Resolved
 * at init (agent_idle_init): dlsym takes the loader's lock, which a
 * thread inside dlopen may hold while it waits for the agent (the fork
 * fence), and the agent itself sleeps in nanosleep. */
static void *next_fn(void **cache, const char *name)
{
	void *f = __atomic_load_n(cache, __ATOMIC_ACQUIRE);

	if (f)
		return f;
	agent_guard_enter();
	f = dlsym(RTLD_NEXT, name);
	agent_guard_leave();
	__atomic_store_n(cache, f, __ATOMIC_RELEASE);
	return f;
}

void agent_idle_init(void)
{
	for (size_t i = 0; i < FN_N; i++)
		(void)next_fn(&real_fn[i], fn_names[i]);
}

static bool zero_ts(const struct timespec *ts)
{
	return ts && ts->tv_sec == 0 && ts->tv_nsec == 0;
}

/* The C library's function i (enum above), its idle point taken first
 * when the call waits; NULL when there is none: the call fails with
 * ENOSYS and is no idle point. */
static void *before_wait(int i, bool waits)
{
	void *f = next_fn(&real_fn[i], fn_names[i]);

	if (f && waits)
		idle_point();
	return f;
}

static int enosys(void)
{
	errno = ENOSYS;
	return -1;
}

PALLOC_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	int (*f)(const struct timespec *, struct timespec *) =
		before_wait(FN_NANOSLEEP, !zero_ts(req));

	return f ? f(req, rem) : enosys();
}

PALLOC_EXPORT int clock_nanosleep(clockid_t clock, int flags,
				  const struct timespec *req,
				  struct timespec *rem)
{
	int (*f)(clockid_t, int, const struct timespec *, struct timespec *) =
		before_wait(FN_CLOCK_NANOSLEEP, flags || !zero_ts(req));

	/* returns the error, errno untouched */
	return f ? f(clock, flags, req, rem) : ENOSYS;
}

PALLOC_EXPORT int usleep(useconds_t usec)
{
	int (*f)(useconds_t) = before_wait(FN_USLEEP, usec != 0);

	return f ? f(usec) : enosys();
}

PALLOC_EXPORT int epoll_wait(int epfd, struct epoll_event *events,
			     int maxevents, int timeout)
{
	int (*f)(int, struct epoll_event *, int, int) =
		before_wait(FN_EPOLL_WAIT, timeout != 0);

	return f ? f(epfd, events, maxevents, timeout) : enosys();
}

PALLOC_EXPORT int epoll_pwait(int epfd, struct epoll_event *events,
			      int maxevents, int timeout,
			      const sigset_t *sigmask)
{
	int (*f)(int, struct epoll_event *, int, int, const sigset_t *) =
		before_wait(FN_EPOLL_PWAIT, timeout != 0);

	return f ? f(epfd, events, maxevents, timeout, sigmask) : enosys();
}

PALLOC_EXPORT int ppoll(struct pollfd *fds, nfds_t nfds,
			const struct timespec *tmo, const sigset_t *sigmask)
{
	int (*f)(struct pollfd *, nfds_t, const struct timespec *,
		 const sigset_t *) = before_wait(FN_PPOLL, !zero_ts(tmo));

	return f ? f(fds, nfds, tmo, sigmask) : enosys();
}
