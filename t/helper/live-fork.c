/* SPDX-License-Identifier: MIT */
/* live-fork: a parent and its forked child, each keeping 8 MiB from its own
 * function, alive for a while, for the control-socket-after-fork test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHUNK 65536
#define CHUNKS 128

static void *kept[CHUNKS];

static __attribute__((noinline)) void parent_keep(void)
{
	for (int i = 0; i < CHUNKS; i++) {
		kept[i] = malloc(CHUNK);
		if (kept[i])
			memset(kept[i], 1, CHUNK);
	}
}

static __attribute__((noinline)) void child_keep(void)
{
	for (int i = 0; i < CHUNKS; i++) {
		kept[i] = malloc(CHUNK);
		if (kept[i])
			memset(kept[i], 2, CHUNK);
	}
}

/*
 * Wait, allocating and freeing 64 KiB every 10 ms: a single-threaded
 * program is served live from its own allocations (palloc(7), Threads).
 */
static void idle(int seconds)
{
	for (long t = 0; t < seconds * 100L; t++) {
		/* volatile: a malloc and free pair is not optimised away */
		void *volatile p = malloc(64 * 1024);

		free(p);
		usleep(10000);
	}
}

int main(int argc, char **argv)
{
	unsigned seconds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 10;
	pid_t child;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: live-fork SECONDS PIDFILE\n");
		return 2;
	}
	parent_keep();
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		for (int i = 0; i < CHUNKS; i++)
			free(kept[i]);
		child_keep();
		idle(seconds);
		return 0;
	}
	f = fopen(argv[2], "w");
	if (!f)
		return 1;
	fprintf(f, "%d %d\n", (int)getpid(), (int)child);
	fclose(f);
	waitpid(child, NULL, 0);
	/* The parent outlives its child, whose exit must not take the
	 * parent's socket with it. */
	idle(seconds);
	return 0;
}
