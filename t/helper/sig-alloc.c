/* SPDX-License-Identifier: MIT */
/* sig-alloc: a single-threaded program that allocates in signal handlers
 * (unsafe, but common, and it works without the agent), or forks there;
 * and a long-running allocator for the live tests. */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * sig-alloc malloc N   SIGALRM every 200 us; the handler mallocs and
 *                      frees while the main loop does too, N times
 * sig-alloc fork N     SIGALRM 1 ms after the last handler returned; the
 *                      handler forks, the child _exit()s, the parent reaps
 *                      it, N times (re-armed by the handler: a fork and
 *                      exit slower than 1 ms must not starve the main
 *                      loop, whose mallocs the signal is to interrupt)
 * sig-alloc threads    allocate, then print the "Threads:" line of
 *                      /proc/self/status
 * sig-alloc live S [thread]
 *                      allocate and free 4 KiB every 10 ms for S seconds
 *                      (with "thread": after starting a sleeping thread)
 * Prints "handled N" at the end.
 */

static volatile sig_atomic_t handled;
static int fork_mode;

/* The next SIGALRM, 1 ms (fork) or 200 us from now (async-signal-safe):
 * re-armed by the handler, so a slow handler never starves the loop. */
static void rearm(void)
{
	struct itimerval it = {.it_value = {.tv_usec = fork_mode ? 1000 : 200}};

	setitimer(ITIMER_REAL, &it, NULL);
}

static void on_alarm(int sig)
{
	(void)sig;
	if (fork_mode) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		rearm();
	} else {
		/* Above the tcache bins (1032 bytes): from the arena, under its
		 * lock once glibc believes the process multithreaded. */
		free(malloc(2048 + (size_t)(handled % 2048)));
		rearm();
	}
	handled++;
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int live(long seconds, int thread)
{
	pthread_t th;

	if (thread && pthread_create(&th, NULL, sleeper, NULL) != 0)
		return 1;
	for (long t = 0; t < seconds * 100; t++) {
		free(malloc(4096));
		usleep(10000);
	}
	return 0;
}

static void threads_line(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "Threads:", 8) == 0)
			fputs(line, stdout);
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	struct itimerval it = {{0, 0}, {0, 200}};
	struct sigaction sa;
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 1000;
	unsigned long i = 0;

	if (argc < 2)
		return 2;
	if (strcmp(argv[1], "threads") == 0) {
		for (int k = 0; k < 1000; k++)
			free(malloc((size_t)k * 64));
		threads_line();
		return 0;
	}
	if (strcmp(argv[1], "live") == 0)
		return live(n, argc > 3 && strcmp(argv[3], "thread") == 0);
	fork_mode = strcmp(argv[1], "fork") == 0;
	if (fork_mode) {
		it.it_interval.tv_usec = 0;
		it.it_value.tv_usec = 1000;
	}
	/*
	 * The thread cache made before the first alarm: glibc's tcache_init
	 * takes the arena lock even in a single-threaded process, so a
	 * handler interrupting the main loop's first malloc there would wait
	 * for ever, with or without palloc (a hang seen in 3 runs of 16).
	 */
	free(malloc(1));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	/*
	 * The main loop's blocks are mmap'd (a fixed threshold: glibc would
	 * raise its own after the first free), the handler's come from the
	 * heap: without locks (a single-threaded glibc) the two share no free
	 * list, so the program works by design, not by chance; with glibc's
	 * multithreaded path the arena lock is held around each mmap, where
	 * the handler's malloc would wait for ever.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	while (handled < n) {
		void *p = malloc(256 * 1024 + i % 4096);

		free(p);
		i++;
	}
	it.it_interval.tv_usec = it.it_value.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	printf("handled %ld\n", (long)handled);
	return 0;
}
