/* SPDX-License-Identifier: MIT */
/* Control socket paths, stale-socket cleanup, agent discovery and the client.
 */
#include "common.h"
#include "ctlsock.h"
#include "msg.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
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

static int tmp_dir(uid_t uid, char *buf, size_t len)
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
		return tmp_dir(geteuid(), buf, len);
	n = snprintf(buf, len, "%s/palloc", x);
	if (n < 0 || (size_t)n >= len || (size_t)n + 16 >= CTLSOCK_PATH_MAX)
		return tmp_dir(geteuid(), buf, len);
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

/* The pid of a name "N.sock", or 0 when the name is something else. */
static pid_t sock_name_pid(const char *name)
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

static bool pid_alive(pid_t pid)
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
		pid_t pid = sock_name_pid(e->d_name);
		char path[CTLSOCK_PATH_MAX];

		if (!pid || (pid != self && pid_alive(pid)))
			continue;
		if (ctlsock_path(dir, pid, path, sizeof(path)) < 0)
			continue;
		if (unlink(path) == 0)
			removed++;
	}
	closedir(d);
	return removed;
}

/* Whether path exists; false with *eacces set when a directory refused. */
static bool try_path(const char *path, bool *eacces)
{
	struct stat st;

	if (lstat(path, &st) == 0)
		return S_ISSOCK(st.st_mode);
	if (errno == EACCES)
		*eacces = true;
	return false;
}

/* Look for a bound socket ".../palloc.../PID.sock" in /proc/net/unix. */
static bool find_in_net_unix(pid_t pid, char *buf, size_t len)
{
	FILE *f = fopen("/proc/net/unix", "re");
	char line[512], suffix[32];
	bool found = false;

	if (!f)
		return false;
	snprintf(suffix, sizeof(suffix), "/%d.sock", (int)pid);
	while (!found && fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');
		size_t n, sl = strlen(suffix);

		if (!path)
			continue;
		n = strcspn(path, "\n");
		path[n] = '\0';
		if (n <= sl || strcmp(path + n - sl, suffix) != 0 ||
		    !strstr(path, "/palloc") || n >= len)
			continue;
		memcpy(buf, path, n + 1);
		found = true;
	}
	fclose(f);
	return found;
}

int ctlsock_find(pid_t pid, char *buf, size_t len)
{
	char dir[CTLSOCK_PATH_MAX], procpath[64];
	bool eacces = false;
	struct stat st;
	const char *x;

	if (ctlsock_dir(dir, sizeof(dir)) == 0 &&
	    ctlsock_path(dir, pid, buf, len) == 0 && try_path(buf, &eacces))
		return 0;
	if (tmp_dir(geteuid(), dir, sizeof(dir)) == 0 &&
	    ctlsock_path(dir, pid, buf, len) == 0 && try_path(buf, &eacces))
		return 0;
	x = getenv("XDG_RUNTIME_DIR");
	if (x && x[0] == '/' &&
	    snprintf(dir, sizeof(dir), "%s/palloc", x) < (int)sizeof(dir) &&
	    ctlsock_path(dir, pid, buf, len) == 0 && try_path(buf, &eacces))
		return 0;
	/* The owner of the process may be someone else (or root via sudo). */
	snprintf(procpath, sizeof(procpath), "/proc/%d", (int)pid);
	if (stat(procpath, &st) == 0) {
		if (snprintf(dir, sizeof(dir), "/run/user/%u/palloc",
			     (unsigned)st.st_uid) < (int)sizeof(dir) &&
		    ctlsock_path(dir, pid, buf, len) == 0 &&
		    try_path(buf, &eacces))
			return 0;
		if (tmp_dir(st.st_uid, dir, sizeof(dir)) == 0 &&
		    ctlsock_path(dir, pid, buf, len) == 0 &&
		    try_path(buf, &eacces))
			return 0;
	}
	if (find_in_net_unix(pid, buf, len)) {
		if (try_path(buf, &eacces))
			return 0;
	}
	if (eacces) {
		errno = EACCES;
		return msg_set("permission denied (the agent belongs to "
			       "another user)");
	}
	errno = ENOENT;
	return msg_set("no palloc agent in this process");
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/*
 * Connect to path, waiting at most timeout_ms while the agent's backlog is
 * full (a unix stream connect then fails with EAGAIN rather than
 * blocking in non-blocking mode). Returns the blocking fd or -1.
 */
static int connect_path(const char *path, int timeout_ms)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	long deadline = now_ms() + timeout_ms;
	size_t n = strlen(path);
	int fd;

	if (n >= sizeof(sa.sun_path))
		return msg_set("socket path too long '%s'", path);
	memcpy(sa.sun_path, path, n + 1);
	for (;;) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    0);
		if (fd < 0)
			return msg_set_errno(errno, "socket");
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		if (errno == EAGAIN && now_ms() < deadline) {
			close(fd);
			usleep(10000);
			continue;
		}
		if (errno == EAGAIN) {
			close(fd);
			return msg_set("timed out after %d ms waiting to "
				       "connect",
				       timeout_ms);
		}
		if (errno == ECONNREFUSED) {
			close(fd);
			return msg_set("stale socket '%s': connection refused",
				       path);
		}
		if (errno == EACCES || errno == EPERM) {
			close(fd);
			return msg_set("permission denied on '%s' (the agent "
				       "belongs to another user)",
				       path);
		}
		close(fd);
		return msg_set_errno(errno, "cannot connect to '%s'", path);
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		close(fd);
		return msg_set_errno(errno, "fcntl");
	}
	return fd;
}

int ctlsock_get_path(const char *path, const char *target, int timeout_ms,
		     struct http_response *resp)
{
	char req[HTTP_PATH_MAX * 2 + 64];
	int fd, n;

	n = snprintf(req, sizeof(req),
		     "GET %s HTTP/1.0\r\nHost: palloc\r\n"
		     "User-Agent: palloc\r\n\r\n",
		     target);
	if (n < 0 || (size_t)n >= sizeof(req))
		return msg_set("request too long '%s'", target);
	fd = connect_path(path, timeout_ms);
	if (fd < 0)
		return -1;
	if (http_write_all(fd, req, (size_t)n) < 0) {
		msg_set_errno(errno, "cannot send the request");
		close(fd);
		return -1;
	}
	shutdown(fd, SHUT_WR);
	if (http_read_response(fd, timeout_ms, 0, resp) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int ctlsock_get(pid_t pid, const char *target, int timeout_ms,
		struct http_response *resp)
{
	char path[CTLSOCK_PATH_MAX];

	if (pid <= 0 || !pid_alive(pid))
		return msg_set("no such process");
	if (ctlsock_find(pid, path, sizeof(path)) < 0)
		return -1;
	return ctlsock_get_path(path, target, timeout_ms, resp);
}

static int cmp_agent(const void *a, const void *b)
{
	const struct ctlsock_agent *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static int list_dir(const char *dir, struct ctlsock_agent **out, size_t *n,
		    size_t *cap)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		pid_t pid = sock_name_pid(e->d_name);
		struct ctlsock_agent *a;
		bool dup = false;

		if (!pid || !pid_alive(pid))
			continue;
		for (size_t i = 0; i < *n; i++)
			dup |= (*out)[i].pid == pid;
		if (dup)
			continue;
		if (*n == *cap) {
			size_t nc = *cap ? *cap * 2 : 16;
			struct ctlsock_agent *na =
				realloc(*out, nc * sizeof(**out));

			if (!na) {
				closedir(d);
				return msg_set_errno(ENOMEM, "listing agents");
			}
			*out = na;
			*cap = nc;
		}
		a = &(*out)[*n];
		a->pid = pid;
		if (ctlsock_path(dir, pid, a->path, sizeof(a->path)) < 0)
			continue;
		(*n)++;
	}
	closedir(d);
	return 0;
}

int ctlsock_list(struct ctlsock_agent **out, size_t *n)
{
	char dir[CTLSOCK_PATH_MAX];
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (ctlsock_dir(dir, sizeof(dir)) == 0 &&
	    list_dir(dir, out, n, &cap) < 0)
		goto fail;
	if (tmp_dir(geteuid(), dir, sizeof(dir)) == 0 &&
	    list_dir(dir, out, n, &cap) < 0)
		goto fail;
	if (*n)
		qsort(*out, *n, sizeof(**out), cmp_agent);
	return 0;
fail:
	free(*out);
	*out = NULL;
	*n = 0;
	return -1;
}
