/* SPDX-License-Identifier: MIT */
/* palloc-run: the program run with the agent preloaded (run-spawn.h). */
#include "common.h"
#include "run-spawn.h"

#include "elfcheck.h"
#include "msg_cli.h"
#include "serve.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * Signal forwarding. palloc-run stays in the program's process group, as
 * env(1) and timeout --foreground do, so signals from the terminal (^C,
 * ^\, hangup) reach the program directly from the kernel; forwarding them
 * too would deliver them twice. The kernel marks those with SI_KERNEL, so
 * they are forwarded only when the program has left our process group.
 * Signals sent with kill(2) (SI_USER, SI_QUEUE: a supervisor, kill(1),
 * systemd) are addressed to palloc-run alone and are forwarded, except
 * those the program sends us itself. Once the program has been reaped,
 * a forwarded signal takes its default action on palloc-run (a second ^C
 * interrupts symbolization; profiles are replaced atomically).
 */
static const int forwarded[] = {SIGINT,	 SIGTERM, SIGHUP,
				SIGQUIT, SIGUSR1, SIGUSR2};
static volatile sig_atomic_t child_pid;

static void forward_signal(int sig, siginfo_t *si, void *ctx)
{
	pid_t pid = child_pid;
	int saved = errno;

	(void)ctx;
	if (pid <= 0) {
		signal(sig, SIG_DFL);
		raise(sig);
	} else if (si->si_code == SI_KERNEL) {
		if (getpgid(pid) != getpgrp())
			kill(pid, sig);
	} else if (si->si_pid != pid) {
		kill(pid, sig);
	}
	errno = saved;
}

void run_block_forwarded(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(&set, forwarded[i]);
	sigprocmask(SIG_BLOCK, &set, old);
}

static void install_forwarding(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(&sa.sa_mask, forwarded[i]);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++) {
		struct sigaction old;

		/* An ignored signal stays ignored, for us and the program. */
		if (sigaction(forwarded[i], NULL, &old) == 0 &&
		    old.sa_handler == SIG_IGN)
			continue;
		sigaction(forwarded[i], &sa, NULL);
	}
}

char *run_find_agent(void)
{
	const char *env = getenv("PALLOC_AGENT");
	char exe[PATH_MAX], cand[PATH_MAX + 64], *abs;
	ssize_t n;

	if (env && *env) {
		abs = realpath(env, NULL);
		if (!abs)
			msg_error(
				"cannot use agent '%s' (from PALLOC_AGENT): %s",
				env, strerror(errno));
		return abs;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(cand, sizeof(cand),
				 "%s/../libcore/.libs/libpalloc.so", exe);
			if (access(cand, R_OK) == 0)
				return realpath(cand, NULL);
		}
	}
	snprintf(cand, sizeof(cand), "%s/libpalloc.so", PALLOC_PKGLIBDIR);
	abs = realpath(cand, NULL);
	if (!abs)
		msg_error("cannot find the agent '%s': %s", cand,
			  strerror(errno));
	return abs;
}

int run_resolve_program(const char *name, char *out, size_t out_size)
{
	const char *path = getenv("PATH");
	bool saw_eacces = false;
	int err = ENOENT;

	if (!*name)
		return ENOENT;
	if (strchr(name, '/')) {
		struct stat st;

		if (snprintf(out, out_size, "%s", name) >= (int)out_size)
			return ENAMETOOLONG;
		if (stat(name, &st) < 0)
			return errno;
		if (S_ISDIR(st.st_mode))
			return EISDIR;
		if (access(name, X_OK) < 0)
			return errno;
		return 0;
	}
	if (!path) {
		static char defpath[256];
		size_t len = confstr(_CS_PATH, defpath, sizeof(defpath));

		path = len > 0 && len <= sizeof(defpath) ? defpath
							 : "/bin:/usr/bin";
	}
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		int dirlen = (int)(end - p);
		struct stat st;

		/* An empty entry means the working directory. */
		if (snprintf(out, out_size, "%.*s%s%s", dirlen, p,
			     dirlen ? "/" : "", name) < (int)out_size &&
		    stat(out, &st) == 0 && !S_ISDIR(st.st_mode)) {
			if (access(out, X_OK) == 0)
				return 0;
			saw_eacces = true;
		}
		if (!*end)
			break;
		p = end;
	}
	if (saw_eacces)
		err = EACCES;
	return err;
}

void run_set_env(const char *name, const char *value)
{
	if (setenv(name, value, 1) < 0) {
		msg_error("cannot set '%s': %s", name, strerror(errno));
		exit(PALLOC_EXIT_RUN_FAILED);
	}
}

void run_set_preload(const char *agent)
{
	const char *old = getenv("LD_PRELOAD");
	char *val;

	if (old && *old) {
		if (strstr(old, agent))
			return;
		if (asprintf(&val, "%s:%s", agent, old) < 0) {
			msg_error("cannot set 'LD_PRELOAD': %s",
				  strerror(ENOMEM));
			exit(PALLOC_EXIT_RUN_FAILED);
		}
		run_set_env("LD_PRELOAD", val);
		free(val);
	} else {
		run_set_env("LD_PRELOAD", agent);
	}
}

void run_wait_descendants(int grace_ms, run_reaped_fn *reaped)
{
	struct timespec tick = {0, 20 * 1000 * 1000};
	int waited = 0, status;

	for (;;) {
		pid_t p = waitpid(-1, &status, WNOHANG);

		if (p > 0) {
			reaped(p, status);
			continue;
		}
		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0 || waited >= grace_ms)
			return;
		nanosleep(&tick, NULL);
		waited += 20;
	}
}

/*
 * The agent cannot see the allocations of a program whose own malloc is
 * hidden (elfcheck.h); one that exports malloc gets the agent's warning.
 */
static void warn_hidden_malloc(const char *name, const char *path)
{
	if (elfcheck_hidden_malloc(path))
		msg_warn(
			"'%s' has its own malloc, not exported: its own allocations will not be seen",
			name);
}

void run_check_preloadable(const char *name, const char *path)
{
	struct elfcheck_result r;

	if (elfcheck_program(path, &r) < 0) {
		int e = errno;

		msg_error("cannot run '%s': %s", name, msg_last());
		exit(e == ENOENT ? PALLOC_EXIT_NOT_FOUND
				 : PALLOC_EXIT_CANNOT_RUN);
	}
	if (r.verdict == ELFCHECK_OK) {
		if (r.scripts == 0)
			warn_hidden_malloc(name, r.target);
		return;
	}
	/* What the kernel itself would refuse (ENOEXEC, ELOOP). */
	if (r.verdict == ELFCHECK_BAD_ELF || r.verdict == ELFCHECK_NESTED) {
		msg_error("cannot run '%s': '%s' is %s", name, r.target,
			  elfcheck_reason(r.verdict));
		exit(PALLOC_EXIT_CANNOT_RUN);
	}
	if (r.scripts > 0)
		msg_error("cannot profile '%s': its interpreter '%s' is %s",
			  name, r.target, elfcheck_reason(r.verdict));
	else
		msg_error("cannot profile '%s': %s", name,
			  elfcheck_reason(r.verdict));
	exit(PALLOC_EXIT_RUN_FAILED);
}

pid_t run_spawn(const char *path, char **argv, int *exec_errno)
{
	struct sigaction chld;
	sigset_t old;
	int fds[2];
	pid_t pid;
	ssize_t n;
	int err = 0;

	/*
	 * With SIGCHLD ignored (inherited), the kernel would reap the program
	 * itself and leave nothing to wait for: take the default for us and
	 * give the program back what it inherited.
	 */
	sigaction(SIGCHLD, NULL, &chld);
	signal(SIGCHLD, SIG_DFL);
	if (pipe2(fds, O_CLOEXEC) < 0) {
		msg_error("cannot create a pipe: %s", strerror(errno));
		exit(PALLOC_EXIT_RUN_FAILED);
	}
	run_block_forwarded(&old);
	install_forwarding();
	pid = fork();
	if (pid < 0) {
		msg_error("cannot fork: %s", strerror(errno));
		exit(PALLOC_EXIT_RUN_FAILED);
	}
	if (pid == 0) {
		close(fds[0]);
		if (chld.sa_handler == SIG_IGN)
			signal(SIGCHLD, SIG_IGN);
		sigprocmask(SIG_SETMASK, &old, NULL);
		serve_child_limits();
		execv(path, argv);
		err = errno;
		if (err == ENOEXEC) {
			/* execvp(3)'s rule: hand it to the shell. */
			size_t argc = 0;
			char **sh;

			while (argv[argc])
				argc++;
			sh = calloc(argc + 2, sizeof(*sh));
			if (sh) {
				sh[0] = (char *)"sh";
				sh[1] = (char *)path;
				for (size_t i = 1; i <= argc; i++)
					sh[i + 1] = argv[i];
				execv("/bin/sh", sh);
				err = errno;
			}
		}
		if (write(fds[1], &err, sizeof(err)) < 0)
			_exit(PALLOC_EXIT_CANNOT_RUN);
		_exit(err == ENOENT ? PALLOC_EXIT_NOT_FOUND
				    : PALLOC_EXIT_CANNOT_RUN);
	}
	child_pid = pid;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(fds[1]);
	do {
		n = read(fds[0], &err, sizeof(err));
	} while (n < 0 && errno == EINTR);
	close(fds[0]);
	if (n == (ssize_t)sizeof(err)) {
		*exec_errno = err;
		return -1;
	}
	return pid;
}

int run_wait_program(pid_t pid, run_reaped_fn *reaped)
{
	siginfo_t si;
	sigset_t old;
	int status = 0;

	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOWAIT) == 0) {
			if (si.si_pid == pid)
				break;
			/* an orphan adopted as subreaper: reap it now */
			if (si.si_pid > 0 &&
			    waitpid(si.si_pid, &status, WNOHANG) > 0)
				reaped(si.si_pid, status);
			continue;
		}
		if (errno != EINTR) {
			msg_error("cannot wait for the program: %s",
				  strerror(errno));
			exit(PALLOC_EXIT_RUN_FAILED);
		}
	}
	run_block_forwarded(&old);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	reaped(pid, status);
	child_pid = 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
	return status;
}
