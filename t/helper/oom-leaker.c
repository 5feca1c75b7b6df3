/* SPDX-License-Identifier: MIT */
/* A leak that runs into its memory cgroup's limit, for t/2010. */
#include "common.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

/*
 * leak_to_oom leaks argv[1] MiB (default 2; "64k": KiB) of touched memory
 * every 10 ms until the OOM killer ends the process (or argv[2] seconds
 * pass, default 60: exit status 3). With argv[3] = "threads" a second
 * thread (idle) makes the program threaded first, so the agent checks
 * from its thread. Prints "ready" on stdout when it starts leaking; with
 * argv[3] = "count" also the number of blocks leaked so far after each
 * (one line, written at once), the truth of what the process holds when
 * it is killed (the block being leaked then may be counted or not).
 */
static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

__attribute__((noinline)) static void leak_to_oom(size_t bytes)
{
	volatile char *p = malloc(bytes);

	if (!p)
		exit(2);
	for (size_t i = 0; i < bytes; i += 4096)
		p[i] = 0x5a;
	__asm__ volatile("" : : "r"(p) : "memory");
}

int main(int argc, char **argv)
{
	char *end = NULL;
	size_t size = argc > 1 ? strtoul(argv[1], &end, 10) : 2;
	long secs = argc > 2 ? strtol(argv[2], NULL, 10) : 60;
	struct timespec tick = {0, 10000000};
	pthread_t th;
	bool count = argc > 3 && strcmp(argv[3], "count") == 0;

	if (argc > 3 && strcmp(argv[3], "threads") == 0 &&
	    pthread_create(&th, NULL, idle, NULL) != 0)
		return 1;
	size <<= end && *end == 'k' ? 10 : 20;
	fputs("ready\n", stdout);
	fflush(stdout);
	for (long i = 0; i < secs * 100; i++) {
		leak_to_oom(size);
		if (count) {
			char line[32];
			int n = snprintf(line, sizeof(line), "%ld\n", i + 1);

			if (write(1, line, (size_t)n) != n)
				return 1;
		}
		nanosleep(&tick, NULL);
	}
	return 3;
}
