/* SPDX-License-Identifier: MIT */
/* bench/agent: the allocation workloads of the overhead tables. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * work churn MILLIONS THREADS [SECONDS] (MILLIONS may be a fraction)
 *	each thread: MILLIONS million malloc/free pairs of 8 to 519 bytes
 *	(LCG sizes), each block living while the next 4095 are allocated;
 *	with SECONDS > 0 it repeats until SECONDS have passed instead.
 * work growth MIB
 *	64 buffers grown by realloc in steps of 1.25x until together they
 *	hold MIB MiB (every new byte written), then freed: the large-block,
 *	page-fault, realloc-copy path.
 * work deep MILLIONS DEPTH [PER] (MILLIONS may be a fraction)
 *	recurses DEPTH frames (not inlined, no tail calls) and at the leaf
 *	does PER (default 1000) malloc/free pairs of 8 to 519 bytes; repeats
 *	until MILLIONS million pairs are done. Stacks are DEPTH + 2 frames
 *	deep up to main. PER 1000 is a tight loop at the bottom of a deep
 *	stack; PER 1, a program that makes a deep call for every allocation.
 * work spread BITS SECONDS
 *	the churn loop of one thread (sizes, window and free as in churn)
 *	for SECONDS seconds, but each malloc is made at the end of one of
 *	2^BITS distinct call paths: BITS levels of two functions (not
 *	inlined, not merged, no tail calls), chosen by the bits of the pair
 *	counter, so path i % 2^BITS makes pair i. Table 4 uses it to fill
 *	the agent's stack table past its cap.
 * Each prints a checksum so that the work cannot be optimized away.
 */
#define WINDOW 4096

static unsigned long churn_pairs;
static double churn_seconds;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The churn's next size, 8 to 519 bytes, from the generator's state x. */
static inline size_t next_size(uint64_t *x)
{
	*x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
	return 8 + (size_t)((*x >> 33) % 512);
}

/* Keep block p of pair i in live[slot], touched and summed. */
static inline void keep(void **live, size_t slot, char *p, unsigned long i,
			size_t size, uint64_t *sum)
{
	if (!p)
		exit(1);
	p[0] = (char)i;
	*sum += (uintptr_t)p[0] + size;
	live[slot] = p;
}

/* Free the window's blocks and the window. */
static void free_window(void **live)
{
	for (size_t i = 0; i < WINDOW; i++)
		free(live[i]);
	free(live);
}

static void *churn_thread(void *arg)
{
	void **live = calloc(WINDOW, sizeof(*live));
	uint64_t x = (uintptr_t)arg, sum = 0;
	double end = now_s() + churn_seconds;

	if (!live)
		exit(1);
	for (unsigned long i = 0;; i++) {
		size_t slot = i % WINDOW, size;
		char *p;

		if (churn_seconds > 0 ? (i % 65536 == 0 && now_s() >= end)
				      : i >= churn_pairs)
			break;
		size = next_size(&x);
		free(live[slot]);
		p = malloc(size);
		keep(live, slot, p, i, size, &sum);
	}
	free_window(live);
	return (void *)(uintptr_t)sum;
}

static int churn(double millions, int nthreads, double seconds)
{
	pthread_t tid[64];
	uint64_t sum = 0;

	churn_pairs = (unsigned long)(millions * 1e6);
	churn_seconds = seconds;
	if (nthreads < 1 || nthreads > 64)
		return 2;
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&tid[i], NULL, churn_thread,
				   (void *)(uintptr_t)(42 + i)))
			return 2;
	for (int i = 0; i < nthreads; i++) {
		void *r;

		pthread_join(tid[i], &r);
		sum += (uintptr_t)r;
	}
	printf("%llu\n", (unsigned long long)sum);
	return 0;
}

static int growth(unsigned long mib)
{
	enum { NBUF = 64 };
	char *buf[NBUF] = {0};
	size_t size[NBUF] = {0}, total = 0, limit = mib << 20;
	uint64_t sum = 0;

	while (total < limit) {
		for (int i = 0; i < NBUF && total < limit; i++) {
			size_t n =
				size[i] < 1024 ? 1024 : size[i] + size[i] / 4;
			char *p = realloc(buf[i], n);

			if (!p)
				return 1;
			memset(p + size[i], i, n - size[i]);
			total += n - size[i];
			buf[i] = p;
			size[i] = n;
		}
	}
	for (int i = 0; i < NBUF; i++) {
		sum += (unsigned char)buf[i][size[i] - 1] + size[i];
		free(buf[i]);
	}
	printf("%llu\n", (unsigned long long)sum);
	return 0;
}

static uint64_t deep_x = 7;
static int deep_per = 1000;

static __attribute__((noinline)) uint64_t leaf(void)
{
	uint64_t sum = 0;

	for (int i = 0; i < deep_per; i++) {
		size_t size;
		char *p;

		deep_x = deep_x * 6364136223846793005ULL +
			 1442695040888963407ULL;
		size = 8 + (size_t)((deep_x >> 33) % 512);
		p = malloc(size);
		if (!p)
			exit(1);
		p[0] = (char)i;
		sum += (unsigned char)p[0];
		free(p);
	}
	return sum;
}

static __attribute__((noinline)) uint64_t recurse(int depth)
{
	uint64_t r;

	if (depth <= 1)
		return leaf();
	r = recurse(depth - 1);
	/* work after the call: no tail call, the frame stays */
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

static int deep(double millions, int depth, int per)
{
	uint64_t sum = 0;

	deep_per = per > 0 ? per : 1000;
	for (unsigned long done = 0; done < millions * 1e6; done += deep_per)
		sum += recurse(depth);
	printf("%llu\n", (unsigned long long)sum);
	return 0;
}

static volatile unsigned long spread_hits[2];

static __attribute__((noinline)) void *spread_a(int level, unsigned long path,
						size_t size);
static __attribute__((noinline)) void *spread_b(int level, unsigned long path,
						size_t size);

/* One level: the next function by the low bit of path, malloc at 0. */
static inline __attribute__((always_inline)) void *
spread_next(int level, unsigned long path, size_t size)
{
	if (level <= 0)
		return malloc(size);
	if (path & 1)
		return spread_b(level - 1, path >> 1, size);
	return spread_a(level - 1, path >> 1, size);
}

/*
 * spread_a and spread_b differ (each counts its own calls), so that
 * identical-code folding cannot merge them into one function and one
 * path; the asm after the call keeps it from being a tail call.
 */
static void *spread_a(int level, unsigned long path, size_t size)
{
	void *p = spread_next(level, path, size);

	spread_hits[0]++;
	__asm__ volatile("" : "+r"(p));
	return p;
}

static void *spread_b(int level, unsigned long path, size_t size)
{
	void *p = spread_next(level, path, size);

	spread_hits[1]++;
	__asm__ volatile("" : "+r"(p));
	return p;
}

static int spread(int bits, double seconds)
{
	void **live = calloc(WINDOW, sizeof(*live));
	uint64_t x = 42, sum = 0;
	unsigned long mask;
	double end = now_s() + seconds;

	if (!live || bits < 1 || bits > 30)
		return 2;
	mask = (1UL << bits) - 1;
	for (unsigned long i = 0;; i++) {
		size_t slot = i % WINDOW, size;
		char *p;

		if (i % 65536 == 0 && now_s() >= end)
			break;
		size = next_size(&x);
		free(live[slot]);
		/* BITS functions deep: the first is chosen here by bit 0 */
		p = (i & 1) ? spread_b(bits - 1, (i & mask) >> 1, size)
			    : spread_a(bits - 1, (i & mask) >> 1, size);
		keep(live, slot, p, i, size, &sum);
	}
	free_window(live);
	printf("%llu\n", (unsigned long long)sum);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long a = argc > 2 ? strtoul(argv[2], NULL, 10) : 10;
	long b = argc > 3 ? strtol(argv[3], NULL, 10) : 1;

	if (argc > 1 && !strcmp(argv[1], "churn"))
		return churn(argc > 2 ? strtod(argv[2], NULL) : 10, (int)b,
			     argc > 4 ? strtod(argv[4], NULL) : 0);
	if (argc > 1 && !strcmp(argv[1], "growth"))
		return growth(a);
	if (argc > 1 && !strcmp(argv[1], "deep"))
		return deep(argc > 2 ? strtod(argv[2], NULL) : 10,
			    argc > 3 ? (int)b : 100,
			    argc > 4 ? (int)strtol(argv[4], NULL, 10) : 1000);
	if (argc > 1 && !strcmp(argv[1], "spread"))
		return spread(argc > 2 ? (int)a : 18,
			      argc > 3 ? strtod(argv[3], NULL) : 10);
	fprintf(stderr, "usage: work churn|growth|deep|spread ...\n");
	return 2;
}
