/* SPDX-License-Identifier: MIT */
/* Control socket paths and stale-socket cleanup (both sides). */
#include "common.h"
#include "ctlsock.h"
#include "msg.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

/* XDG_RUNTIME_DIR if usable: absolute, a directory owned by us. */
static const char *xdg_dir(void)
{
	const char *x = getenv("XDG_RUNTIME_DIR");
	struct stat st;

	if (!x || x[0] != '/')
		return NULL;
	if (stat(x, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return NULL;
	return x;
}

int ctlsock_tmp_dir(uid_t uid, char *buf, size_t len)
{
	int n = snprintf(buf, len, "/tmp/palloc-%u", (unsigned)uid);

	if (n < 0 || (size_t)n >= len)
		return msg_set("socket directory name too long");
	return 0;
}

int ctlsock_dir(char *buf, size_t len)
{
	const char *x = xdg_dir();
	int n;

	if (!x)
		return ctlsock_tmp_dir(geteuid(), buf, len);
	n = snprintf(buf, len, "%s/palloc", x);
	if (n < 0 || (size_t)n >= len || (size_t)n + 16 >= CTLSOCK_PATH_MAX)
		return ctlsock_tmp_dir(geteuid(), buf, len);
	return 0;
}

int ctlsock_prepare_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return msg_set_errno(errno, "cannot create '%s'", dir);
	if (lstat(dir, &st) < 0)
		return msg_set_errno(errno, "cannot stat '%s'", dir);
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return msg_set("unsafe socket directory '%s': not a directory",
			       dir);
	}
	if (st.st_uid != geteuid()) {
		errno = EPERM;
		return msg_set("unsafe socket directory '%s': owned by uid %u",
			       dir, (unsigned)st.st_uid);
	}
	if (st.st_mode & 077) {
		/* Ours: tighten it rather than give up. */
		if (chmod(dir, 0700) < 0)
			return msg_set_errno(errno, "cannot chmod '%s'", dir);
	}
	return 0;
}

int ctlsock_path(const char *dir, pid_t pid, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%d.sock", dir, (int)pid);

	if (n < 0 || (size_t)n >= len || (size_t)n >= CTLSOCK_PATH_MAX)
		return msg_set("socket path too long in '%s'", dir);
	return 0;
}

pid_t ctlsock_name_pid(const char *name)
{
	long v = 0;
	const char *p = name;

	if (*p < '1' || *p > '9')
		return 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		if (v > INT_MAX)
			return 0;
	}
	return strcmp(p, ".sock") == 0 ? (pid_t)v : 0;
}

bool ctlsock_pid_alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

int ctlsock_clean_stale(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int removed = 0;
	pid_t self = getpid();

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		pid_t pid = ctlsock_name_pid(e->d_name);
		char path[CTLSOCK_PATH_MAX];

		if (!pid || (pid != self && ctlsock_pid_alive(pid)))
			continue;
		if (ctlsock_path(dir, pid, path, sizeof(path)) < 0)
			continue;
		if (unlink(path) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}
