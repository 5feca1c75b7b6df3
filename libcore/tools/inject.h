/* SPDX-License-Identifier: MIT */
/* A function called inside a running process, without a debugger (palloc-run
 * -p). */
#ifndef PALLOC_INJECT_H
#define PALLOC_INJECT_H

#include "common.h"

#include <limits.h>
#include <sys/types.h>

/*
 * palloc-run -p loads the agent into a process it did not start: it
 * makes one thread of it call dlopen(lib), dlsym(handle, fn) and fn(arg),
 * then return to what it was doing, every register (FPU, SSE, AVX
 * included), its signal mask and its alternate signal stack as they
 * were, and an interrupted system call restarted.
 *
 * How (x86-64 Linux, glibc 2.34 or later: dlopen, dlsym, dlerror in
 * libc.so.6). One thread is seized (PTRACE_SEIZE) and stopped
 * (PTRACE_INTERRUPT); the others run on. The moment is used only when no
 * loader or allocator lock can be held by that thread: its pc and every
 * word of its stack (up to 256 KiB above the stack pointer) are outside
 * the loader's code, the agent's, and the C library's malloc family,
 * fork, pthread_create and dl* functions; otherwise it is let go and
 * another moment (or thread) is tried, up to the timeout. Below its
 * stack pointer (past the red zone and 32 KiB more) go the strings, a
 * signal frame holding the saved registers (the restart of an
 * interrupted call applied: the call is made again, -ERESTART_RESTARTBLOCK
 * included, with its original arguments: a relative sleep starts again
 * in full), and the XSAVE area; a 200-byte trampoline goes into the
 * unused tail of the C library's last executable page (a private copy of
 * that page). One register write points the thread at the trampoline,
 * then the thread is detached: from there on it needs no tracer. The
 * trampoline makes the calls, fetches the signal mask and alternate
 * stack, and returns through rt_sigreturn(2) on the prepared frame.
 *
 * palloc-run killed (SIGKILL) at any moment leaves the process running:
 * before the register write the thread resumes where it was (the kernel
 * detaches it, the stopped call restarts); after it, the thread finishes
 * the calls on its own. What stays: the page of code (not executed
 * again) and, if the calls ran, the agent loaded.
 */

/* What inject_check() found and inject_call() uses. */
struct inject_target {
	pid_t pid;
	uintptr_t dlopen, dlsym, dlerror;
	uintptr_t code; /* where the trampoline goes */
	struct inject_range {
		uintptr_t lo, hi;
	} unsafe[64];
	size_t n_unsafe;
	/* The agent's path as the process opens it: the agent itself, or a
	 * copy inject_check() made in the process's mount namespace (then
	 * copy_dir is the directory holding it, copy_name its name, until
	 * inject_release()), or a copy an earlier attach loaded (reused:
	 * dlopen'd with RTLD_NOLOAD, never opened again). */
	char agent[PATH_MAX];
	int copy_dir; /* -1: none */
	char copy_name[80];
	bool reused;
};

/*
 * Check that process pid may be attached to and find its C library's
 * functions, with agent (an absolute path) to be loaded. Refusals, one
 * line through msg_set(), the process untouched: no such process; this
 * process; already traced (TracerPid); stopped; another user's without
 * CAP_SYS_PTRACE; Yama's ptrace_scope forbidding it (the sysctl named,
 * with its value); no libc.so.6 mapped (a static program), a Go
 * program; a C library without dlopen (glibc before 2.34); not x86-64;
 * the agent not the same file in the process's mount namespace
 * (/proc/PID/root) and no safe place to copy it to.
 *
 * A process in another mount namespace (a container) sees the agent
 * through its own root: when /proc/PID/root + agent is not the same file,
 * the agent is copied into the first of /tmp, /var/tmp, /dev/shm of that
 * root that is a real directory (each component opened O_NOFOLLOW from
 * /proc/PID/root, never a symlink), owned by root or by this user, not
 * writable by others unless sticky, on a mount that allows executing;
 * the copy is created there exclusively (O_EXCL, O_NOFOLLOW) under a
 * random name "palloc-agent-TAG-HEX.so" (TAG the directory), 0644, and
 * t->agent names it as the process sees it. An agent copy already
 * loaded by an earlier attach (its name in /proc/PID/maps) is reused.
 * Call inject_release() once the agent is loaded (or not). 0, or -1.
 */
int inject_check(pid_t pid, const char *agent, struct inject_target *t);

/* Remove the copy inject_check() made, if any (its directory is the one
 * checked: the name cannot lead elsewhere), and close that directory.
 * t->agent stays usable for a dlopen with RTLD_NOLOAD. */
void inject_release(struct inject_target *t);

/*
 * In one thread of t->pid: dlopen(lib, flags), then dlsym(handle, fn),
 * then fn(arg) (an int function of a string), as described above.
 * Waits up to timeout_ms for a safe moment and the calls' end. *ret:
 * fn's value. 0; or -1 with msg_set(): ptrace refused (EPERM: the
 * reason named, Yama's setting included), no safe moment in time,
 * dlopen failed (dlerror's text), fn not found, the process ended. The
 * process is never left stopped. With t->reused, flags get RTLD_NOLOAD.
 */
int inject_call(const struct inject_target *t, const char *lib, int flags,
		const char *fn, const char *arg, int timeout_ms, int *ret);

#endif /* PALLOC_INJECT_H */
