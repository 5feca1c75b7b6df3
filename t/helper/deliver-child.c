/* SPDX-License-Identifier: MIT */
/* Processes that do what daemons do before their profile is written. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * deliver-child MODE [ARG]: a parent that allocates and forks one child,
 * which first does MODE, then allocates 20 blocks of 5000 bytes in
 * child_blocks() (kept), then exits 0; the parent exits with the child's
 * status. MODE:
 *   setuid         the child drops to uid and gid 65534 (nobody)
 *   chroot DIR     the child chroots into DIR (empty) and chdirs to /
 *   closefds       the child closes every fd (0 to 1023)
 *   title          the parent writes over its argv (a process title with
 *                  spaces and slashes, as nginx and PostgreSQL do) before
 *                  forking; with ARG "wait" it then waits for SIGTERM
 *   xfsz FILE      no child: palloc_dump(FILE) under the file size limit
 *                  the caller set must fail with EFBIG, leave the signal
 *                  mask, the SIGXFSZ handler and pending signals as they
 *                  were; then the program's own write past the limit still
 *                  reaches its handler. Exits 5 when all of that holds.
 */

static void *keep[64];

__attribute__((noinline)) static void child_blocks(void)
{
	for (int i = 0; i < 20; i++) {
		keep[i] = malloc(5000);
		memset(keep[i], i, 5000);
	}
}

__attribute__((noinline)) static void parent_blocks(void)
{
	for (int i = 20; i < 30; i++) {
		keep[i] = malloc(3000);
		memset(keep[i], i, 3000);
	}
}

static volatile sig_atomic_t xfsz_seen, term_seen;

static void on_xfsz(int sig)
{
	(void)sig;
	xfsz_seen++;
}

static void on_term(int sig)
{
	(void)sig;
	term_seen = 1;
}

/* A second thread, as servers have (the agent may serve its control
 * socket only to programs that have threads). */
static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int xfsz(const char *file)
{
	int (*dump)(const char *) =
		(int (*)(const char *))dlsym(RTLD_DEFAULT, "palloc_dump");
	sigset_t mask, before, after, pend;
	struct sigaction sa, now;
	char buf[4096];
	int fd, rc, err;

	if (!dump) {
		fprintf(stderr, "xfsz: no palloc_dump (no agent)\n");
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_xfsz;
	sigaction(SIGXFSZ, &sa, NULL);
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR2);
	sigprocmask(SIG_SETMASK, &mask, NULL);
	sigprocmask(SIG_SETMASK, NULL, &before);
	parent_blocks();
	rc = dump(file);
	err = errno;
	sigprocmask(SIG_SETMASK, NULL, &after);
	sigaction(SIGXFSZ, NULL, &now);
	sigpending(&pend);
	if (rc != -1 || err != EFBIG) {
		fprintf(stderr, "xfsz: palloc_dump returned %d (%s)\n", rc,
			strerror(err));
		return 1;
	}
	for (int sig = 1; sig < NSIG; sig++) {
		if (sigismember(&before, sig) != sigismember(&after, sig)) {
			fprintf(stderr, "xfsz: signal %d's mask changed\n",
				sig);
			return 1;
		}
	}
	if (now.sa_handler != on_xfsz || sigismember(&pend, SIGXFSZ) ||
	    xfsz_seen) {
		fprintf(stderr, "xfsz: handler %s, pending %d, seen %d\n",
			now.sa_handler == on_xfsz ? "kept" : "changed",
			sigismember(&pend, SIGXFSZ), (int)xfsz_seen);
		return 1;
	}
	/* The program's own write past the limit: its handler runs. */
	fd = open("own.out", O_WRONLY | O_CREAT | O_TRUNC, 0600);
	memset(buf, 'x', sizeof(buf));
	for (int i = 0; i < 64 && !xfsz_seen; i++)
		if (write(fd, buf, sizeof(buf)) < 0 && errno != EFBIG)
			break;
	close(fd);
	if (xfsz_seen != 1) {
		fprintf(stderr, "xfsz: own SIGXFSZ seen %d times\n",
			(int)xfsz_seen);
		return 1;
	}
	return 5;
}

/* Write over the whole argv area, as setproctitle() does. */
static void set_title(int argc, char **argv)
{
	static const char title[] = "nginx: worker process / is here";
	char *start = argv[0], *end = argv[argc - 1] + strlen(argv[argc - 1]);
	size_t room = (size_t)(end - start);

	memset(start, ' ', room);
	memcpy(start, title,
	       sizeof(title) - 1 < room ? sizeof(title) - 1 : room);
	for (int i = 1; i < argc; i++)
		argv[i] = NULL;
}

static void child(const char *mode, const char *arg)
{
	if (strcmp(mode, "setuid") == 0) {
		if (setgroups(0, NULL) < 0 || setgid(65534) < 0 ||
		    setuid(65534) < 0) {
			perror("setuid");
			_exit(1);
		}
	} else if (strcmp(mode, "chroot") == 0) {
		if (chroot(arg) < 0 || chdir("/") < 0) {
			perror("chroot");
			_exit(1);
		}
	} else if (strcmp(mode, "closefds") == 0) {
		for (int fd = 0; fd < 1024; fd++)
			close(fd);
	}
	child_blocks();
	exit(0);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	const char *arg = argc > 2 ? argv[2] : "";
	bool wait_term = false;
	int status;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: deliver-child MODE [ARG]\n");
		return 2;
	}
	if (strcmp(mode, "xfsz") == 0)
		return xfsz(arg);
	parent_blocks();
	if (strcmp(mode, "title") == 0) {
		wait_term = strcmp(arg, "wait") == 0;
		if (wait_term)
			signal(SIGTERM, on_term);
		set_title(argc, argv);
	}
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		child(mode, arg);
	if (waitpid(pid, &status, 0) < 0)
		return 1;
	if (wait_term) {
		pthread_t th;

		pthread_create(&th, NULL, idle, NULL);
		while (!term_seen)
			usleep(10000);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
