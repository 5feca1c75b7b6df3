/* SPDX-License-Identifier: MIT */
/* Test helper: 64 MiB of anonymous memory that never comes through malloc.
 */
#include "common.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * mmap-heap [wait]: maps 64 MiB of anonymous memory itself and touches
 * every page (as Go, V8, the JVM or pymalloc keep their heaps), while
 * mallocing only 100 blocks of 100 bytes. The agent must say that most of
 * the process's memory did not come through malloc. With "wait", it then
 * prints "ready" and waits for SIGTERM (exit 0 through exit(3)).
 */

#define MAPPED ((size_t)64 << 20)

static volatile sig_atomic_t term;

static void on_term(int sig)
{
	(void)sig;
	term = 1;
}

int main(int argc, char **argv)
{
	bool wait_term = argc > 1 && strcmp(argv[1], "wait") == 0;
	sigset_t block, none;
	void *small[100];
	char *p;

	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &none);
	sigdelset(&none, SIGTERM);
	signal(SIGTERM, on_term);
	p = mmap(NULL, MAPPED, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 99;
	for (size_t i = 0; i < MAPPED; i += 4096)
		p[i] = 1;
	for (size_t i = 0; i < ARRAY_SIZE(small); i++)
		small[i] = malloc(100);
	if (wait_term) {
		if (write(1, "ready\n", 6) != 6)
			return 98;
		while (!term)
			sigsuspend(&none);
	}
	for (size_t i = 0; i < ARRAY_SIZE(small); i++)
		free(small[i]);
	return 0;
}
