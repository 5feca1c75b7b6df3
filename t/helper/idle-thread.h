/* SPDX-License-Identifier: MIT */
/* A thread that only waits, for test programs that wait like servers. */
#ifndef PALLOC_T_IDLE_THREAD_H
#define PALLOC_T_IDLE_THREAD_H

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

static void *idle_thread_main(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/*
 * Start a detached thread that waits for ever with every signal blocked
 * (so the main thread gets them all). The agent answers its control
 * socket from a thread of its own only in a program that has threads; a
 * single-threaded one answers only while it allocates (palloc(7),
 * Threads). A test that reads a waiting program's socket starts this
 * first, as any server would have threads. Call before printing "ready".
 */
static void idle_thread_start(void)
{
	sigset_t all, old;
	pthread_t th;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&th, NULL, idle_thread_main, NULL) == 0)
		pthread_detach(th);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

#endif
