/* SPDX-License-Identifier: MIT */
/* Cost of one unwind_backtrace() call per unwinder, at depths 10 and 60. */
#include "common.h"

#include <time.h>

#include "msg.h"
#include "unwind.h"

/*
 * Built -O2 -fno-omit-frame-pointer (mk/examples.am), so that the fp walk
 * follows the whole recursion and the three unwinders return the same
 * frames up to main; libc's frames above main have no frame pointers, so
 * fp stops there while dwarf and auto go on to _start (3 more frames).
 * The walk starts at the leaf of bench_recurse(depth); each mode is warmed
 * up (caches filled) before it is timed. Time is the thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID), so that other processes on a shared machine
 * inflate the figures less than wall-clock time would.
 */

struct bench {
	unsigned long calls;
	size_t frames;
	double ns;
};

int bench_recurse(unsigned depth, struct bench *b);

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static __attribute__((noinline)) void bench_leaf(struct bench *b)
{
	uintptr_t pcs[128];
	uint64_t t0;

	for (int i = 0; i < 1000; i++)
		b->frames = unwind_backtrace(pcs, ARRAY_SIZE(pcs), 0);
	t0 = now_ns();
	for (unsigned long i = 0; i < b->calls; i++)
		b->frames = unwind_backtrace(pcs, ARRAY_SIZE(pcs), 0);
	b->ns = (double)(now_ns() - t0) / (double)b->calls;
}

__attribute__((noinline)) int bench_recurse(unsigned depth, struct bench *b)
{
	int r = 0;

	if (depth <= 1)
		bench_leaf(b);
	else
		r = bench_recurse(depth - 1, b);
	__asm__ volatile("" : "+r"(r));
	return r;
}

int main(int argc, char **argv)
{
	static const enum unwind_mode modes[] = {UNWIND_FP, UNWIND_DWARF,
						 UNWIND_AUTO};
	static const unsigned depths[] = {10, 60};
	unsigned long calls = 200000;

	if (argc > 1) {
		char *end;

		calls = strtoul(argv[1], &end, 10);
		if (*end != '\0' || calls == 0) {
			fprintf(stderr, "usage: unwind-bench [CALLS]\n");
			return 2;
		}
	}
	printf("%-6s %5s %7s %10s %12s\n", "mode", "depth", "frames", "ns/call",
	       "ns/frame");
	for (size_t d = 0; d < ARRAY_SIZE(depths); d++) {
		for (size_t m = 0; m < ARRAY_SIZE(modes); m++) {
			struct bench b = {.calls = calls};

			if (unwind_init(modes[m]) < 0) {
				fprintf(stderr, "unwind-bench: %s\n",
					msg_last());
				return 2;
			}
			bench_recurse(depths[d], &b);
			printf("%-6s %5u %7zu %10.0f %12.1f\n",
			       unwind_mode_name(modes[m]), depths[d], b.frames,
			       b.ns, b.frames ? b.ns / (double)b.frames : 0.0);
		}
	}
	return 0;
}
