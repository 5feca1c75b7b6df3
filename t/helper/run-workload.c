/* SPDX-License-Identifier: MIT */
/* A palloc-run test program: known live blocks, then an exit, signal or wait. */
#include "common.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * run-workload KEEP_COUNT KEEP_SIZE [EXIT | kill:SIG | wait | fork]
 *
 * Allocates KEEP_COUNT blocks of KEEP_SIZE bytes in keep_blocks() and keeps
 * them (the table of pointers is main's), allocates and frees as many in churn_blocks(), then: exits with
 * status EXIT (default 0); kills itself with signal SIG; prints "ready" and
 * waits for a signal (SIGTERM exits 0 through the handler below, so the
 * agent writes its profile at exit); or forks a child that allocates the
 * same again and exits, and waits for it. The functions are not inlined and
 * exported (-export-dynamic) so symbolized profiles name them.
 */

static void **kept;
static volatile sig_atomic_t got_term;

__attribute__((noinline)) void keep_blocks(size_t n, size_t size);
__attribute__((noinline)) void churn_blocks(size_t n, size_t size);

__attribute__((noinline)) void keep_blocks(size_t n, size_t size)
{
	for (size_t i = 0; i < n; i++) {
		kept[i] = malloc(size);
		if (!kept[i])
			exit(99);
		memset(kept[i], 1, size);
	}
}

__attribute__((noinline)) void churn_blocks(size_t n, size_t size)
{
	for (size_t i = 0; i < n; i++) {
		char *p = malloc(size);

		if (!p)
			exit(99);
		p[0] = 1;
		free(p);
	}
}

static void on_term(int sig)
{
	(void)sig;
	got_term = 1;
}

int main(int argc, char **argv)
{
	size_t n, size;
	const char *what = argc > 3 ? argv[3] : "0";

	if (argc < 3) {
		fprintf(stderr, "usage: run-workload COUNT SIZE [EXIT|kill:SIG|wait|fork]\n");
		return 2;
	}
	n = strtoul(argv[1], NULL, 10);
	size = strtoul(argv[2], NULL, 10);
	/* The table is main's, so keep_blocks holds exactly n * size. */
	kept = calloc(n ? n : 1, sizeof(*kept));
	if (!kept)
		return 99;
	keep_blocks(n, size);
	churn_blocks(n, size);
	if (strncmp(what, "kill:", 5) == 0) {
		kill(getpid(), (int)strtol(what + 5, NULL, 10));
		pause();
		return 98;
	}
	if (strcmp(what, "wait") == 0) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_term;
		sigaction(SIGTERM, &sa, NULL);
		printf("ready\n");
		fflush(stdout);
		while (!got_term)
			pause();
		return 0;
	}
	if (strcmp(what, "fork") == 0) {
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			keep_blocks(n, size);
			exit(0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) < 0)
			return 97;
		return WIFEXITED(status) ? WEXITSTATUS(status) : 96;
	}
	return (int)strtol(what, NULL, 10);
}
