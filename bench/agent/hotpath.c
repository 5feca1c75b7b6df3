/* SPDX-License-Identifier: MIT */
/* bench/agent: ns per malloc(32)+free pair, in one or more threads. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/*
 * hotpath MILLIONS THREADS: each thread does MILLIONS million
 * malloc(32)+free pairs (the allocator's and the interposer's fastest
 * path) in 5 equal blocks; prints the ns per pair of the fastest block of
 * the slowest thread, in thread CPU time (CLOCK_THREAD_CPUTIME_ID): on a
 * shared 2-core machine wall time mostly measures the neighbours, and the
 * fastest block is the one least disturbed by them. Timed inside the
 * threads, so process start-up is not counted. MILLIONS 0 does no pairs
 * (callgrind subtracts that run from a run of 1 million).
 */
#define BLOCKS 5
static unsigned long pairs;
static double worst_ns;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *loop(void *arg)
{
	void *volatile sink;
	double ns = 1e300;

	(void)arg;
	for (int b = 0; b < BLOCKS; b++) {
		double t0 = now_ns(), dt;

		for (unsigned long i = 0; i < pairs / BLOCKS; i++) {
			sink = malloc(32);
			free(sink);
		}
		dt = now_ns() - t0;
		if (dt < ns)
			ns = dt;
	}
	pthread_mutex_lock(&lock);
	if (ns > worst_ns)
		worst_ns = ns;
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 2 ? atoi(argv[2]) : 1;
	pthread_t tid[64];

	pairs = (argc > 1 ? strtoul(argv[1], NULL, 10) : 20) * 1000000UL;
	if (nthreads < 1 || nthreads > 64)
		return 2;
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&tid[i], NULL, loop, NULL))
			return 2;
	for (int i = 0; i < nthreads; i++)
		pthread_join(tid[i], NULL);
	printf("%.2f\n", pairs ? worst_ns / (pairs / BLOCKS) : 0.0);
	return 0;
}
