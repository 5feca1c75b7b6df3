/* SPDX-License-Identifier: MIT */
/* A long-running process with a steady leak, for live-process tests. */
#include "common.h"

#include <signal.h>
#include <time.h>

#include "example.h"

/*
 * Built with the project's CFLAGS (default -g -O2). Every tick (100 ms)
 * leak_some leaks rate/10 bytes in blocks of --chunk bytes (never freed),
 * and churn_some allocates and frees 100 blocks of 256 bytes. It runs for
 * --seconds (0: until SIGINT or SIGTERM, which end it cleanly, with the
 * truth printed and exit status 0). With --truth FILE the truth is
 * rewritten (temporary name, then rename) after every tick, so a test
 * that fetches a live profile can read what had been allocated by then:
 * the file's values are a lower bound of what the profile may show and
 * the next tick's values an upper bound.
 */

#define MAX_LEAKS (1 << 20)

static struct ex_site sites[2] = {
	{.name = "leak_some"},
	{.name = "churn_some"},
};

static void *leaks[MAX_LEAKS];
static size_t n_leaks;
static volatile sig_atomic_t stop;

EX_SITE void leak_some(size_t bytes, size_t chunk);
EX_SITE void churn_some(void);

EX_SITE void leak_some(size_t bytes, size_t chunk)
{
	while (bytes >= chunk && n_leaks < MAX_LEAKS) {
		leaks[n_leaks] = ex_keep(malloc(chunk));
		ex_check(leaks[n_leaks], "malloc");
		ex_alloc(&sites[0], chunk);
		n_leaks++;
		bytes -= chunk;
	}
}

EX_SITE void churn_some(void)
{
	for (int i = 0; i < 100; i++) {
		void *p = ex_keep(malloc(256));

		ex_check(p, "malloc");
		ex_alloc(&sites[1], 256);
		free(p);
		ex_free(&sites[1], 256);
	}
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* Rewrite path with the current truth: path.tmp, then rename. */
static int rewrite_truth(const char *path)
{
	char tmp[4096];
	int n;

	n = snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -1;
	if (ex_truth_start("leaker", tmp) != 0 ||
	    ex_report_quiet(tmp, sites, ARRAY_SIZE(sites)) != 0)
		return -1;
	return rename(tmp, path);
}

static const char help[] =
	"Usage: leaker [--seconds <n>] [--rate <bytes>] [--chunk "
	"<bytes>]\n"
	"              [--truth <file>]\n"
	"\n"
	"Leak <rate> bytes per second (default 1048576) from "
	"leak_some()\n"
	"in blocks of <chunk> bytes (default 65536), with some churn "
	"from\n"
	"churn_some(), for <n> seconds (default 10; 0: until SIGINT or\n"
	"SIGTERM). Prints its pid at start and the truth (pid site\n"
	"alloc_objects alloc_space inuse_objects inuse_space) at the "
	"end\n"
	"on stderr; with --truth, rewrites <file> after every 100 ms "
	"tick.\n"
	"\n"
	"Options:\n"
	" -s, --seconds <n>    run time in seconds, 0 to 86400\n"
	" -r, --rate <bytes>   leaked bytes per second\n"
	" -c, --chunk <bytes>  size of each leaked block\n"
	"     --truth <file>   keep the truth in <file>\n"
	" -h, --help           display this help\n"
	"\n"
	"See examples/README.md.\n";

int main(int argc, char **argv)
{
	const struct timespec tick = {0, 100 * 1000 * 1000};
	unsigned long seconds = 10, rate = 1 << 20, chunk = 64 << 10;
	const struct ex_opt opts[] = {
		{"seconds", 's', "seconds", 0, 86400, &seconds, NULL},
		{"rate", 'r', "rate", 0, 1UL << 30, &rate, NULL},
		{"chunk", 'c', "chunk", 1, 1UL << 30, &chunk, NULL},
	};
	const char *truth;
	struct sigaction sa;
	unsigned long ticks = 0;
	size_t carry = 0;

	truth = ex_options("leaker", help, argc, argv, opts, ARRAY_SIZE(opts));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fprintf(stderr, "leaker: pid %ld\n", (long)getpid());
	if (truth != NULL && rewrite_truth(truth) < 0) {
		fprintf(stderr, "leaker: cannot write '%s': %s\n", truth,
			strerror(errno));
		return 2;
	}

	while (!stop && (seconds == 0 || ticks < seconds * 10)) {
		carry += rate / 10;
		leak_some(carry, chunk);
		carry %= chunk;
		churn_some();
		ticks++;
		if (truth != NULL && rewrite_truth(truth) < 0) {
			fprintf(stderr, "leaker: cannot write '%s': %s\n",
				truth, strerror(errno));
			return 2;
		}
		nanosleep(&tick, NULL);
	}
	return ex_report("leaker", NULL, sites, ARRAY_SIZE(sites));
}
