/* SPDX-License-Identifier: MIT */
/*
 * System calls of the agent's start and exit through syscall(2), which
 * the agent binds anyway (its futex lock), instead of the C library's
 * wrappers: each wrapper called once costs a lazy PLT binding, some 700
 * instructions of every process's start. Same results, errno
 * as the wrappers set it (-1 and errno on failure); async-signal-safe and
 * thread-safe as the system calls are. Linux only, as the agent. For the
 * cold paths only: the hot ones keep whatever they call.
 */
#ifndef PALLOC_AGENT_SYS_H
#define PALLOC_AGENT_SYS_H

#include "common.h"

#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#if !defined(__x86_64__) && !defined(__aarch64__)
#error "sys.h: struct stat is the kernel's only on x86_64 and arm64"
#endif

/* getpid(2), gettid(2), geteuid(2): never fail. */
static inline pid_t sys_getpid(void)
{
	return (pid_t)syscall(SYS_getpid);
}

static inline pid_t sys_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static inline uid_t sys_geteuid(void)
{
	return (uid_t)syscall(SYS_geteuid);
}

/* openat(2) with flags without O_CREAT/O_TMPFILE (mode 0) or with mode:
 * the descriptor, or -1 with errno. */
static inline int sys_openat(int dfd, const char *path, int flags, mode_t mode)
{
	return (int)syscall(SYS_openat, dfd, path, flags, mode);
}

/* fstat(2) into *st (x86_64 and arm64: the C library's struct stat is the
 * kernel's): 0, or -1 with errno. */
static inline int sys_fstat(int fd, struct stat *st)
{
	return (int)syscall(SYS_fstat, fd, st);
}

/* fchmod(2): 0, or -1 with errno. */
static inline int sys_fchmod(int fd, mode_t mode)
{
	return (int)syscall(SYS_fchmod, fd, mode);
}

/* fallocate(2): 0, or -1 with errno. */
static inline int sys_fallocate(int fd, int mode, off_t off, off_t len)
{
	return (int)syscall(SYS_fallocate, fd, mode, off, len);
}

/* mmap(2): the address, or MAP_FAILED with errno. */
static inline void *sys_mmap(void *addr, size_t len, int prot, int flags,
			     int fd, off_t off)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

#endif /* PALLOC_AGENT_SYS_H */
