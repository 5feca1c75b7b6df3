/* SPDX-License-Identifier: MIT */
/* A program that keeps 1 MiB more every 100 ms, for palloc-run --timeline. */
#include "common.h"

#include <time.h>
#include <unistd.h>

/*
 * timeline-grow [STEPS]: keeps one more block of 1 MiB, touched, every
 * 100 ms in grow_step(), STEPS times (default 40: 4 s), then prints
 * "held BYTES" (what it holds: STEPS MiB) on stdout, waits 500 ms holding
 * it all and exits 0. t/3140 checks the timeline against that line.
 */
__attribute__((noinline)) void *grow_step(void);

__attribute__((noinline)) void *grow_step(void)
{
	char *p = malloc(1 << 20);

	if (!p)
		exit(2);
	memset(p, 0x5a, 1 << 20);
	return p;
}

int main(int argc, char **argv)
{
	long steps = argc > 1 ? strtol(argv[1], NULL, 10) : 40;
	struct timespec tick = {0, 100 * 1000 * 1000};
	struct timespec hold = {0, 500 * 1000 * 1000};
	void **kept;

	if (steps < 1 || steps > 4096)
		return 1;
	kept = calloc((size_t)steps, sizeof(*kept));
	if (!kept)
		return 2;
	for (long i = 0; i < steps; i++) {
		kept[i] = grow_step();
		nanosleep(&tick, NULL);
	}
	printf("held %ld\n", steps << 20);
	fflush(stdout);
	nanosleep(&hold, NULL);
	return 0;
}
