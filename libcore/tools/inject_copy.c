/* SPDX-License-Identifier: MIT */
/*
 * palloc-run -p's agent for a process in another mount namespace: copied
 * in through /proc/PID/root (inject_int.h).
 */
#include "common.h"
#include "inject_int.h"
#include "msg.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* Where a copy may go, under the process's root, and the tag its name
 * carries (so that a later attach knows its path from its name alone). */
static const struct {
	const char *tag;
	const char *dir[2]; /* components, each opened O_NOFOLLOW */
	const char *path;   /* as the process sees it */
} copy_dirs[] = {
	{"tmp", {"tmp", NULL}, "/tmp"},
	{"vartmp", {"var", "tmp"}, "/var/tmp"},
	{"shm", {"dev", "shm"}, "/dev/shm"},
};

void inject_copy_of_maps(const char *bn, char *out, size_t cap)
{
	char name[96];
	size_t n = strcspn(bn, " ");

	if (n >= sizeof(name))
		return;
	memcpy(name, bn, n);
	name[n] = '\0';
	if (n < 3 || strcmp(name + n - 3, ".so") != 0 ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-.") != n)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(copy_dirs); i++) {
		size_t tl = strlen(copy_dirs[i].tag);

		if (strncmp(name + 13, copy_dirs[i].tag, tl) == 0 &&
		    name[13 + tl] == '-') {
			snprintf(out, cap, "%s/%s", copy_dirs[i].path, name);
			return;
		}
	}
}

/* The directory i of copy_dirs under root, opened without following a
 * symlink, and fit for a copy; -1 when not. */
static int copy_dir_open(int root, size_t i)
{
	struct stat st;
	struct statvfs sv;
	int fd = root, next;

	for (int k = 0; k < 2 && copy_dirs[i].dir[k]; k++) {
		next = openat(fd, copy_dirs[i].dir[k],
			      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd != root)
			close(fd);
		if (next < 0)
			return -1;
		fd = next;
	}
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    (st.st_uid != 0 && st.st_uid != geteuid()) ||
	    ((st.st_mode & (S_IWOTH | S_IWGRP)) && !(st.st_mode & S_ISVTX)) ||
	    fstatvfs(fd, &sv) < 0 || (sv.f_flag & ST_NOEXEC) ||
	    (sv.f_flag & ST_RDONLY)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Copy the bytes of from into to. 0 or -1 (errno). */
static int copy_bytes(int from, int to)
{
	static char buf[65536];
	ssize_t n;

	while ((n = read(from, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		for (ssize_t w, off = 0; off < n; off += w) {
			w = write(to, buf + off, (size_t)(n - off));
			if (w < 0 && errno != EINTR)
				return -1;
			if (w < 0)
				w = 0;
		}
	}
	return 0;
}

int inject_copy_agent(pid_t pid, const char *agent, struct inject_target *t)
{
	char path[64], hex[33];
	uint8_t rnd[16];
	int root, src, dst = -1, dir = -1, e = 0;
	size_t i;

	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	root = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return msg_set_errno(errno,
				     "the agent '%s' is not in the process's "
				     "mount namespace, and its root '%s' "
				     "cannot be opened to copy it there",
				     agent, path);
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		close(root);
		return msg_set_errno(errno, "no random name for the agent's "
					    "copy");
	}
	for (size_t k = 0; k < sizeof(rnd); k++)
		snprintf(hex + 2 * k, 3, "%02x", rnd[k]);
	for (i = 0; i < ARRAY_SIZE(copy_dirs) && dst < 0; i++) {
		dir = copy_dir_open(root, i);
		if (dir < 0)
			continue;
		snprintf(t->copy_name, sizeof(t->copy_name),
			 "palloc-agent-%s-%s.so", copy_dirs[i].tag, hex);
		dst = openat(dir, t->copy_name,
			     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				     O_CLOEXEC,
			     0644);
		if (dst < 0) {
			close(dir);
			dir = -1;
		}
	}
	close(root);
	if (dst < 0)
		return msg_set("the agent '%s' is not in the process's mount "
			       "namespace, and none of /tmp, /var/tmp, "
			       "/dev/shm there is a safe place to copy it to "
			       "(a real directory, not writable by others "
			       "unless sticky, executable)",
			       agent);
	i--;
	src = open(agent, O_RDONLY | O_CLOEXEC);
	if (src < 0 || copy_bytes(src, dst) < 0 || fchmod(dst, 0644) < 0)
		e = errno ? errno : EIO;
	if (src >= 0)
		close(src);
	if (close(dst) < 0 && !e)
		e = errno;
	if (e) {
		unlinkat(dir, t->copy_name, 0);
		close(dir);
		return msg_set_errno(e,
				     "cannot copy the agent into '%s' of "
				     "the process's mount namespace",
				     copy_dirs[i].path);
	}
	t->copy_dir = dir;
	snprintf(t->agent, sizeof(t->agent), "%s/%s", copy_dirs[i].path,
		 t->copy_name);
	return 0;
}
