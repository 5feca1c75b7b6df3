/* SPDX-License-Identifier: MIT */
/* idle-alloc: a single-threaded program that allocates known blocks, then
 * waits without allocating (t/4064, t/4065). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * idle-alloc pause      keep 10 blocks of 100000 bytes (keep_blocks),
 *                       say "ready" on stdout, then pause() for ever
 * idle-alloc read       the same, then read(2) a pipe nobody writes
 * idle-alloc sleep      the same, then nanosleep(2) for ever (where the
 *                       agent takes the allocator's figures: palloc(7),
 *                       Threads, idle points)
 * idle-alloc signal     the same, then wait for signals: each SIGUSR1
 *                       makes 5 blocks of 50000 bytes (more_blocks),
 *                       kept, and says "more N" (N: the rounds so far)
 * idle-alloc scribble SEED all|entries|sparse
 *                       the same, then overwrite its own record (found
 *                       in /proc/self/maps) with random bytes from SEED:
 *                       all of it, the entries only (the header kept),
 *                       or one byte in 64; say "scribbled", pause()
 * Exit 2 on trouble (no record for scribble).
 */

#define BLOCKS 10
#define BLOCK_BYTES 100000
#define MORE 5
#define MORE_BYTES 50000

static void *kept[BLOCKS + 4096];
static size_t n_kept;
static volatile sig_atomic_t usr1;

__attribute__((noinline)) static void keep_blocks(void)
{
	for (int i = 0; i < BLOCKS; i++) {
		kept[n_kept] = malloc(BLOCK_BYTES);
		memset(kept[n_kept++], 1, BLOCK_BYTES);
	}
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void more_blocks(void)
{
	for (int i = 0; i < MORE && n_kept < sizeof(kept) / sizeof(kept[0]);
	     i++) {
		kept[n_kept] = malloc(MORE_BYTES);
		memset(kept[n_kept++], 2, MORE_BYTES);
	}
	__asm__ volatile("" ::: "memory");
}

static void on_usr1(int sig)
{
	(void)sig;
	usr1 = 1;
}

static void say(const char *s)
{
	(void)!write(STDOUT_FILENO, s, strlen(s));
}

/* The record's mapping: [*start, *end) of the line naming "/PID.N.rec". */
static int find_record(unsigned long *start, unsigned long *end, char *path,
		       size_t cap)
{
	char line[4096], want[32];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = -1;

	if (!f)
		return -1;
	snprintf(want, sizeof(want), "/%d.", (int)getpid());
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');
		size_t n;

		if (!p || !strstr(p, want) || !strstr(p, ".rec"))
			continue;
		n = strcspn(p, "\n");
		p[n] = '\0';
		if (sscanf(line, "%lx-%lx", start, end) != 2)
			continue;
		snprintf(path, cap, "%s", p);
		found = 0;
	}
	fclose(f);
	return found;
}

static int scribble(unsigned seed, const char *how)
{
	unsigned long start, end;
	char path[4096];
	struct stat st;
	unsigned char *p;
	size_t len, from = 0;

	if (find_record(&start, &end, path, sizeof(path)) < 0 ||
	    stat(path, &st) < 0) {
		fprintf(stderr, "idle-alloc: no record mapped\n");
		return 2;
	}
	len = end - start;
	if ((unsigned long)st.st_size < len)
		len = (size_t)st.st_size;
	p = (unsigned char *)start;
	srand(seed);
	if (strcmp(how, "entries") == 0)
		from = 16384; /* RECORD_DATA: the header stays */
	for (size_t i = from; i < len; i++) {
		if (strcmp(how, "sparse") == 0 && rand() % 64)
			continue;
		p[i] = (unsigned char)rand();
	}
	say("scribbled\n");
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "pause";
	int fds[2];
	char c;
	unsigned rounds = 0;

	keep_blocks();
	if (strcmp(mode, "scribble") == 0)
		return scribble(argc > 2 ? (unsigned)atoi(argv[2]) : 1,
				argc > 3 ? argv[3] : "all");
	if (strcmp(mode, "signal") == 0) {
		struct sigaction sa;
		sigset_t block, old;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr1;
		sigaction(SIGUSR1, &sa, NULL);
		sigemptyset(&block);
		sigaddset(&block, SIGUSR1);
		sigprocmask(SIG_BLOCK, &block, &old);
		say("ready\n");
		for (;;) {
			char line[32];

			while (!usr1)
				sigsuspend(&old);
			usr1 = 0;
			more_blocks();
			snprintf(line, sizeof(line), "more %u\n", ++rounds);
			say(line);
		}
	}
	say("ready\n");
	if (strcmp(mode, "read") == 0) {
		if (pipe(fds) < 0)
			return 2;
		for (;;)
			if (read(fds[0], &c, 1) < 0 && errno != EINTR)
				return 2;
	}
	if (strcmp(mode, "sleep") == 0) {
		struct timespec ts = {.tv_sec = 3600};

		for (;;)
			nanosleep(&ts, NULL);
	}
	for (;;)
		pause();
}
