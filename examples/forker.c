/* SPDX-License-Identifier: MIT */
/* Forks children that allocate and exit, then fork+execs itself. */
#include "common.h"

#include <sys/wait.h>
#include <unistd.h>

#include "example.h"

/*
 * Built with the project's CFLAGS (default -g -O2). In order, so that no
 * process inherits a named site's blocks from another:
 *
 * 1. --children N forked children (default 2), one after the other; child
 *    i runs child_work: (i + 1) * 100 blocks of 8 KiB, a quarter freed
 *    (those with index % 4 == 0), then returns from main (exit status 0).
 * 2. Unless --no-exec: a fork whose child execs this program (via
 *    /proc/self/exe) with --exec-child; that process runs exec_child_work:
 *    50 blocks of 32 KiB, all live at exit.
 * 3. The parent runs parent_work: 200 blocks of 1 KiB, all live at exit.
 *
 * Each process appends its own truth lines (its pid first) to the --truth
 * file, so a test can match them with the profile each process writes
 * (PALLOC_OUTPUT's %p). The parent exits 0 when every child did, else 1.
 */

#define CHILD_BLOCK 8192
#define EXEC_BLOCK 32768
#define PARENT_BLOCK 1024

static struct ex_site site;
static void *blocks[1000];

EX_SITE void child_work(unsigned index);
EX_SITE void exec_child_work(void);
EX_SITE void parent_work(void);

EX_SITE void child_work(unsigned index)
{
	size_t n = (size_t)(index + 1) * 100;

	for (size_t i = 0; i < n; i++) {
		blocks[i] = ex_keep(malloc(CHILD_BLOCK));
		ex_check(blocks[i], "malloc");
		ex_alloc(&site, CHILD_BLOCK);
	}
	for (size_t i = 0; i < n; i += 4) {
		free(blocks[i]);
		blocks[i] = NULL;
		ex_free(&site, CHILD_BLOCK);
	}
}

EX_SITE void exec_child_work(void)
{
	for (size_t i = 0; i < 50; i++) {
		blocks[i] = ex_keep(malloc(EXEC_BLOCK));
		ex_check(blocks[i], "malloc");
		ex_alloc(&site, EXEC_BLOCK);
	}
}

EX_SITE void parent_work(void)
{
	for (size_t i = 0; i < 200; i++) {
		blocks[i] = ex_keep(malloc(PARENT_BLOCK));
		ex_check(blocks[i], "malloc");
		ex_alloc(&site, PARENT_BLOCK);
	}
}

static const char help[] =
	"Usage: forker [--children <n>] [--no-exec] [--truth <file>]\n"
	"\n"
	"Fork <n> children (default 2) that allocate in child_work and\n"
	"exit, then fork and exec this program (exec_child_work), then\n"
	"allocate in parent_work. Each process appends its truth (pid\n"
	"site alloc_objects alloc_space inuse_objects inuse_space) to\n"
	"<file> and prints it on stderr.\n"
	"\n"
	"Options:\n"
	" -n, --children <n>   forked children, 0 to 8 (default 2)\n"
	"     --no-exec        skip the fork+exec step\n"
	"     --exec-child     run as the exec'd child (internal)\n" EX_HELP_OPTIONS
	"See examples/README.md.\n";

/* Wait for pid; true when it exited with status 0. */
static bool wait_ok(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
	unsigned long children = 2;
	bool no_exec = false, exec_child = false, all_ok = true;
	const struct ex_opt opts[] = {
		{"children", 'n', "child count", 0, 8, &children, NULL},
		{"no-exec", 0, NULL, 0, 0, NULL, &no_exec},
		{"exec-child", 0, NULL, 0, 0, NULL, &exec_child},
	};
	const char *truth =
		ex_options("forker", help, argc, argv, opts, ARRAY_SIZE(opts));

	if (exec_child) {
		site.name = "exec_child_work";
		exec_child_work();
		return ex_report("forker", truth, &site, 1);
	}
	if (ex_truth_start("forker", truth) != 0)
		return 2;

	for (unsigned i = 0; i < children; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("forker: fork");
			return 2;
		}
		if (pid == 0) {
			site.name = "child_work";
			child_work(i);
			/* exit(), not _exit(): the agent writes at exit */
			exit(ex_report("forker", truth, &site, 1));
		}
		all_ok &= wait_ok(pid);
	}
	if (!no_exec) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("forker: fork");
			return 2;
		}
		if (pid == 0) {
			char *args[] = {argv[0], (char *)"--exec-child", NULL,
					NULL, NULL};

			if (truth != NULL) {
				args[2] = (char *)"--truth";
				args[3] = (char *)truth;
			}
			execv("/proc/self/exe", args);
			perror("forker: exec '/proc/self/exe'");
			_exit(127);
		}
		all_ok &= wait_ok(pid);
	}
	site.name = "parent_work";
	parent_work();
	if (ex_report("forker", truth, &site, 1) != 0)
		return 2;
	return all_ok ? 0 : 1;
}
