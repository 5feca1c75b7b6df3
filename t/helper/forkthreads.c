/* SPDX-License-Identifier: MIT */
/*
 * A threaded forker built like Debian's binaries (-O2 -fomit-frame-pointer,
 * t/3031): a second thread churns malloc/free (so at -r 1 it is inside the
 * unwinder, and the loader's dl_iterate_phdr, much of the time) while the
 * main thread forks FORKS times; each child allocates 3000 blocks of 700
 * bytes in child_alloc() at once and _exits. Prints "child PID" for each.
 *
 * usage: forkthreads FORKS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define BLOCKS 3000
#define BLOCK_SIZE 700

static volatile int stop;
/* Global, so that the compiler cannot drop the allocations as unused. */
void *kept[BLOCKS];

static void *churn(void *arg)
{
	unsigned s = 1;

	(void)arg;
	while (!stop) {
		void *p[8];

		for (int i = 0; i < 8; i++) {
			s = s * 1103515245u + 12345u;
			p[i] = malloc(16 + (s >> 8) % 2048);
		}
		for (int i = 0; i < 8; i++)
			free(p[i]);
	}
	return NULL;
}

/* Named in the child's stacks: the caller of malloc. */
__attribute__((noinline)) void child_alloc(void);
__attribute__((noinline)) void child_alloc(void)
{
	for (int i = 0; i < BLOCKS; i++)
		kept[i] = malloc(BLOCK_SIZE);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	int forks = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 4;
	pthread_t th;
	int bad = 0;

	if (pthread_create(&th, NULL, churn, NULL) != 0)
		return 2;
	for (int k = 0; k < forks; k++) {
		pid_t pid;
		int st;

		usleep(2000);
		pid = fork();
		if (pid < 0)
			return 2;
		if (pid == 0) {
			child_alloc();
			_exit(0);
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			bad++;
		printf("child %d\n", (int)pid);
	}
	stop = 1;
	pthread_join(th, NULL);
	return bad ? 1 : 0;
}
