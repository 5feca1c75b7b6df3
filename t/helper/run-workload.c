/* SPDX-License-Identifier: MIT */
/* A palloc-run test program: known live blocks, then an exit, signal or wait.
 */
#include "common.h"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * run-workload KEEP_COUNT KEEP_SIZE [EXIT | kill:SIG | wait | serve | fork |
 *                                     sigs | churn:TIMES]
 *
 * Allocates KEEP_COUNT blocks of KEEP_SIZE bytes in keep_blocks() and keeps
 * them (the table of pointers is main's), allocates and frees as many in
 * churn_blocks(), then: exits with status EXIT (default 0); kills itself with
 * signal SIG; prints "ready" and waits for a signal (SIGTERM exits 0 through
 * the handler below, so the agent writes its profile at exit); serve is wait
 * in nanosleep(2), as servers wait (an idle point of the agent's, where it
 * takes the allocator's figures: palloc(7), Threads); or forks a child
 * that allocates the same again and exits, and waits for it; or (sigs) prints
 * "ready", then records every SIGINT and SIGUSR1 with who sent it until two
 * seconds pass without one, and prints one line per signal: "INT kernel" (a
 * terminal), "INT parent" (kill(2) from palloc-run), "INT other"; or
 * (churn:TIMES) churns TIMES times more in churn_blocks and exits 0. The
 * functions are not inlined and exported (-export-dynamic) so symbolized
 * profiles name them.
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

struct sig_seen {
	int sig, code;
	pid_t pid;
};
static struct sig_seen seen[64];
static volatile sig_atomic_t n_seen;

static void on_sig(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	if (n_seen < (sig_atomic_t)ARRAY_SIZE(seen)) {
		seen[n_seen] = (struct sig_seen){sig, si->si_code, si->si_pid};
		n_seen++;
	}
}

/* The "sigs" mode: who sends us SIGINT and SIGUSR1. */
static int record_signals(void)
{
	struct sigaction sa;
	struct timespec t = {0, 10 * 1000 * 1000};

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sig;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	/*
	 * Until 2 s pass with no new signal after the first (a duplicate
	 * comes within milliseconds), 20 s at most: a loaded machine may
	 * take long to deliver the first.
	 */
	for (int i = 0, quiet = 0; i < 2000 && quiet < 200; i++) {
		sig_atomic_t before = n_seen;

		nanosleep(&t, NULL);
		quiet = n_seen == 0 || n_seen != before ? 0 : quiet + 1;
	}
	for (sig_atomic_t i = 0; i < n_seen; i++)
		printf("%s %s\n", seen[i].sig == SIGINT ? "INT" : "USR1",
		       seen[i].code == SI_KERNEL  ? "kernel"
		       : seen[i].pid == getppid() ? "parent"
						  : "other");
	return 0;
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
		fprintf(stderr,
			"usage: run-workload COUNT SIZE "
			"[EXIT|kill:SIG|wait|serve|fork|sigs|churn:TIMES]\n");
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
	if (strcmp(what, "wait") == 0 || strcmp(what, "serve") == 0) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_term;
		sigaction(SIGTERM, &sa, NULL);
		printf("ready\n");
		fflush(stdout);
		/* serve: as servers wait, in a timed wait the agent sees (an
		 * idle point: it takes the allocator's figures there). */
		while (!got_term) {
			struct timespec ts = {.tv_nsec = 100000000};

			if (what[0] == 's')
				nanosleep(&ts, NULL);
			else
				pause();
		}
		return 0;
	}
	if (strcmp(what, "sigs") == 0)
		return record_signals();
	if (strncmp(what, "churn:", 6) == 0) {
		for (long i = strtol(what + 6, NULL, 10); i > 0; i--)
			churn_blocks(n, size);
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
