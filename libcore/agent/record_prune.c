/* SPDX-License-Identifier: MIT */
/* The dead records of a record directory, pruned at start (agent_record.h). */
#include "agent_int.h"
#include "sys.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KEEP_DEAD 32 /* dead records kept in a directory */

/* "PID.START.rec": its pid and start, or false for another name. */
static bool record_name(const char *name, pid_t *pid, int64_t *start)
{
	uint64_t p = 0, t = 0;
	const char *c = name;

	if (*c < '1' || *c > '9')
		return false;
	for (; *c >= '0' && *c <= '9'; c++) {
		p = p * 10 + (uint64_t)(*c - '0');
		if (p > INT32_MAX)
			return false;
	}
	if (*c++ != '.' || *c < '0' || *c > '9')
		return false;
	for (; *c >= '0' && *c <= '9'; c++) {
		if (t > (uint64_t)INT64_MAX / 10 - 1)
			return false;
		t = t * 10 + (uint64_t)(*c - '0');
	}
	if (strcmp(c, ".rec") != 0)
		return false;
	*pid = (pid_t)p;
	*start = (int64_t)t;
	return true;
}

/* Is the record name (of pid) in dfd dead: its process gone, or its
 * state RECORD_EXITED? */
static bool record_dead(int dfd, const char *name, pid_t pid)
{
	uint32_t state = RECORD_RUNNING;
	bool dead;
	int fd;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return true;
	fd = sys_openat(dfd, name,
			O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0);
	if (fd < 0)
		return false;
	dead = pread(fd, &state, sizeof(state),
		     offsetof(struct record_header, state)) ==
		       (ssize_t)sizeof(state) &&
	       state == RECORD_EXITED;
	close(fd);
	return dead;
}

/*
 * Another record of our own pid: the image this process exec'd from (the
 * same start_ticks: exec keeps them), which wrote no profile and never
 * will; or a dead process's whose pid we were given since (other ticks).
 * 1: an earlier image's, 0: a dead process's, -1: unreadable.
 */
static int record_earlier_image(int dfd, const char *name, uint64_t *self)
{
	uint64_t ticks = 0;
	ssize_t n;
	int fd;

	fd = sys_openat(dfd, name,
			O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	n = pread(fd, &ticks, sizeof(ticks),
		  offsetof(struct record_header, start_ticks));
	close(fd);
	if (n != (ssize_t)sizeof(ticks))
		return -1;
	if (!*self)
		*self = record_start_ticks();
	return ticks == *self;
}

/* The layout of getdents64(2)'s entries (no opendir: it allocates). */
struct dirent_raw {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

void record_prune_dead(int dfd, const char *own)
{
	const pid_t self = sys_getpid();
	uint64_t self_ticks = 0;
	struct {
		int64_t start;
		char name[48];
	} keep[KEEP_DEAD];
	char buf[4096] __attribute__((aligned(8)));
	size_t n = 0;
	long got;
	int saved = errno;

	while ((got = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < got;) {
			const struct dirent_raw *d = (const void *)(buf + off);
			const char *name = d->d_name;
			size_t len, old = 0;
			int64_t start;
			pid_t pid;

			off += d->d_reclen;
			if ((d->d_type != DT_REG && d->d_type != DT_UNKNOWN) ||
			    !record_name(name, &pid, &start) ||
			    strcmp(name, own) == 0)
				continue;
			if (pid == self) {
				int r = record_earlier_image(dfd, name,
							     &self_ticks);

				if (r > 0 && !record_kept_for_run())
					unlinkat(dfd, name, 0);
				if (r != 0)
					continue;
			} else if (!record_dead(dfd, name, pid)) {
				continue;
			}
			len = strlen(name);
			if (len >= sizeof(keep[0].name))
				continue;
			if (n < KEEP_DEAD) {
				keep[n].start = start;
				memcpy(keep[n++].name, name, len + 1);
				continue;
			}
			for (size_t i = 1; i < n; i++)
				if (keep[i].start < keep[old].start)
					old = i;
			if (start < keep[old].start) {
				unlinkat(dfd, name, 0);
				continue;
			}
			unlinkat(dfd, keep[old].name, 0);
			keep[old].start = start;
			memcpy(keep[old].name, name, len + 1);
		}
	}
	errno = saved;
}
