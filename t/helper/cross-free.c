/* SPDX-License-Identifier: MIT */
/* Test helper: threads that free each other's blocks, with known totals. */
#include "common.h"

#include <pthread.h>
#include <unistd.h>

/*
 * cross-free: THREADS (4) unnamed threads, so that their samples share
 * stacks. Each allocates BLOCKS blocks in xf_alloc() (sizes 8 to 512
 * bytes, a fixed sequence per thread); after a barrier, thread k frees the
 * even-numbered blocks of thread k + 1 (mod THREADS) while it allocates and
 * frees as many of its own in xf_churn(), so that frees of other threads'
 * blocks and of its own run at the same time on every thread; then it keeps
 * KEEP blocks of KEEP_SIZE bytes from xf_keep(). After the threads have
 * ended, main (which sampled nothing yet) frees the blocks numbered 1 mod
 * 4, so a quarter of xf_alloc's stay live: a free counted twice or lost
 * shows in its inuse values. Then main allocates one block of BIG bytes in
 * xf_big() (more than all the threads ever held at once: the peak is
 * there) and keeps it. Prints one line
 * per site, "site NAME: alloc_objects alloc_space inuse_objects
 * inuse_space peak_objects peak_space" (palloc's values at rate 1 with
 * PALLOC_PEAK=1), through write(2).
 */
enum {
	THREADS = 4,
	BLOCKS = 20000,
	KEEP = 100,
	KEEP_SIZE = 1000,
	BIG = 64 << 20,
};

static void *blocks[THREADS][BLOCKS];
static pthread_barrier_t barrier;
static uint64_t alloc_bytes[THREADS], churn_bytes[THREADS];
static void *kept[THREADS][KEEP];
static void *big;

static size_t size_of(int k, int i)
{
	return 8 + (size_t)((uint32_t)(k * 7919 + i) * 2654435761u >> 23) % 505;
}

/* p, filled with c, or the end of the program if NULL. */
static void *filled(void *p, size_t n, int c)
{
	if (!p)
		_exit(3);
	return memset(p, c, n);
}

/* The four sites: each its own leaf function, calling malloc itself (gcc
 * must not clone them either; clang has no noclone). */
#ifdef __clang__
#define SITE __attribute__((noinline))
#else
#define SITE __attribute__((noinline, noclone))
#endif

static SITE void *xf_alloc(size_t n)
{
	return filled(malloc(n), n, 1);
}

static SITE void *xf_churn(size_t n)
{
	return filled(malloc(n), n, 2);
}

static SITE void *xf_keep(size_t n)
{
	return filled(malloc(n), n, 3);
}

static SITE void *xf_big(size_t n)
{
	return filled(malloc(n), n, 4);
}

static void *worker(void *arg)
{
	int k = (int)(uintptr_t)arg, o = (k + 1) % THREADS;

	for (int i = 0; i < BLOCKS; i++) {
		blocks[k][i] = xf_alloc(size_of(k, i));
		alloc_bytes[k] += size_of(k, i);
	}
	pthread_barrier_wait(&barrier);
	for (int i = 0; i < BLOCKS; i++) {
		size_t n = size_of(k, i + BLOCKS);

		if (i % 2 == 0)
			free(blocks[o][i]);
		free(xf_churn(n));
		churn_bytes[k] += n;
	}
	for (int i = 0; i < KEEP; i++)
		kept[k][i] = xf_keep(KEEP_SIZE);
	return NULL;
}

static void say(const char *name, uint64_t ao, uint64_t as, uint64_t io,
		uint64_t is, uint64_t po, uint64_t ps)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf),
			 "site %s: %llu %llu %llu %llu %llu %llu\n", name,
			 (unsigned long long)ao, (unsigned long long)as,
			 (unsigned long long)io, (unsigned long long)is,
			 (unsigned long long)po, (unsigned long long)ps);

	if (write(1, buf, (size_t)n) != n)
		_exit(4);
}

int main(void)
{
	pthread_t tid[THREADS];
	uint64_t ab = 0, cb = 0, lb = 0;

	if (pthread_barrier_init(&barrier, NULL, THREADS))
		return 2;
	for (int k = 0; k < THREADS; k++)
		if (pthread_create(&tid[k], NULL, worker, (void *)(uintptr_t)k))
			return 2;
	for (int k = 0; k < THREADS; k++) {
		pthread_join(tid[k], NULL);
		ab += alloc_bytes[k];
		cb += churn_bytes[k];
	}
	for (int k = 0; k < THREADS; k++)
		for (int i = 0; i < BLOCKS; i++)
			if (i % 4 == 1)
				free(blocks[k][i]);
			else if (i % 4 == 3)
				lb += size_of(k, i);
	big = xf_big(BIG);
	say("xf_alloc", THREADS * BLOCKS, ab, THREADS * BLOCKS / 4, lb,
	    THREADS * BLOCKS / 4, lb);
	say("xf_churn", THREADS * BLOCKS, cb, 0, 0, 0, 0);
	say("xf_keep", THREADS * KEEP, THREADS * KEEP * KEEP_SIZE,
	    THREADS * KEEP, THREADS * KEEP * KEEP_SIZE, THREADS * KEEP,
	    THREADS * KEEP * KEEP_SIZE);
	say("xf_big", 1, BIG, 1, BIG, 1, BIG);
	return 0;
}
