/* SPDX-License-Identifier: MIT */
/* Test helper: a heap whose exact high-water mark in requested bytes is known.
 */
#include "common.h"

#include <signal.h>
#include <unistd.h>

/*
 * peak-truth [wait]: 200000 steps of a fixed pseudo-random sequence of
 * malloc, calloc, realloc and free on 300 slots (sizes 1 to 60000 bytes),
 * counting the requested bytes live after every step with palloc's rules
 * (calloc(n, s) is n*s bytes; realloc frees the old block and allocates
 * the new size), and their maximum; then frees everything and prints
 * "peak N" (N: that maximum) through write(2), so that no stdio buffer is
 * ever on the heap. The peak is reached at an arbitrary step, not at a
 * round multiple of anything. With "wait", it then prints "ready" and
 * waits for SIGTERM (exit 0, through exit(3), so the agent writes its
 * profiles at exit).
 */

#define SLOTS 300
#define STEPS 200000

static void *blk[SLOTS];
static size_t len[SLOTS];
static uint64_t cur, max;
static uint64_t x = 12345;
static volatile sig_atomic_t term;

static uint64_t next(void)
{
	x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x >> 33;
}

static void note(void)
{
	if (cur > max)
		max = cur;
}

static __attribute__((noinline)) void grow(size_t i)
{
	size_t n = 1 + (size_t)(next() % 60000);

	if (next() % 4 == 0) {
		blk[i] = calloc(n / 8 + 1, 8);
		len[i] = (n / 8 + 1) * 8;
	} else {
		blk[i] = malloc(n);
		len[i] = n;
	}
	if (!blk[i])
		exit(99);
	cur += len[i];
	note();
}

static __attribute__((noinline)) void resize(size_t i)
{
	size_t n = 1 + (size_t)(next() % 60000);
	void *p = realloc(blk[i], n);

	if (!p)
		exit(99);
	cur = cur - len[i] + n;
	blk[i] = p;
	len[i] = n;
	note();
}

static __attribute__((noinline)) void drop(size_t i)
{
	free(blk[i]);
	cur -= len[i];
	blk[i] = NULL;
	len[i] = 0;
}

static void on_term(int sig)
{
	(void)sig;
	term = 1;
}

static void say(const char *what, uint64_t v, bool with_value)
{
	char buf[64];
	int n = with_value ? snprintf(buf, sizeof(buf), "%s %llu\n", what,
				      (unsigned long long)v)
			   : snprintf(buf, sizeof(buf), "%s\n", what);

	if (n > 0 && write(1, buf, (size_t)n) != n)
		exit(98);
}

int main(int argc, char **argv)
{
	bool wait_term = argc > 1 && strcmp(argv[1], "wait") == 0;
	sigset_t block, none;

	/* SIGTERM only inside sigsuspend: none is lost before the wait. */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &none);
	sigdelset(&none, SIGTERM);
	signal(SIGTERM, on_term);
	for (long s = 0; s < STEPS; s++) {
		size_t i = (size_t)(next() % SLOTS);

		if (!blk[i])
			grow(i);
		else if (next() % 3 == 0)
			resize(i);
		else
			drop(i);
	}
	for (size_t i = 0; i < SLOTS; i++)
		if (blk[i])
			drop(i);
	say("peak", max, true);
	if (wait_term) {
		say("ready", 0, false);
		while (!term)
			sigsuspend(&none);
	}
	return 0;
}
