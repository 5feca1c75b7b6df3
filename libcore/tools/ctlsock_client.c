/* SPDX-License-Identifier: MIT */
/* The commands' half of the control socket: finding and asking an agent. */
#include "common.h"
#include "ctlsock_client.h"
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

/*
 * What /proc/PID/status says of a process (readable whatever its dumpable
 * flag, unlike the owner of /proc/PID): its thread group, uids, state and
 * thread count. 0 or -1.
 */
struct proc_status {
	pid_t tgid;
	uid_t uids[4]; /* real, effective, saved, file system */
	char state;    /* R, S, T, ... */
	long threads;
};

static int proc_status(pid_t pid, struct proc_status *ps)
{
	char path[64], line[256];
	unsigned int u[4];
	int got = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (got != 15 && fgets(line, sizeof(line), f)) {
		long t;

		if (sscanf(line, "Tgid: %ld", &t) == 1) {
			ps->tgid = (pid_t)t;
			got |= 1;
		} else if (sscanf(line, "Uid: %u %u %u %u", &u[0], &u[1], &u[2],
				  &u[3]) == 4) {
			for (int k = 0; k < 4; k++)
				ps->uids[k] = (uid_t)u[k];
			got |= 2;
		} else if (sscanf(line, "State: %c", &ps->state) == 1) {
			got |= 4;
		} else if (sscanf(line, "Threads: %ld", &ps->threads) == 1) {
			got |= 8;
		}
	}
	fclose(f);
	return got == 15 ? 0 : -1;
}

/*
 * A timed-out exchange: say why when the process shows it (stopped; or
 * single-threaded, so its own thread serves the socket, only while it
 * allocates: palloc(7), Threads), so the user is not left guessing.
 */
static void explain_timeout(pid_t pid)
{
	char why[MSG_MAX];
	struct proc_status ps;

	if (strncmp(msg_last(), "timed out", 9) != 0 ||
	    proc_status(pid, &ps) < 0)
		return;
	snprintf(why, sizeof(why), "%s", msg_last());
	if (ps.state == 'T' || ps.state == 't')
		msg_set("%s: the process is stopped", why);
	else if (ps.threads == 1)
		msg_set("%s: the process is single-threaded and answers only "
			"while it allocates (palloc(7), Threads)",
			why);
}

/*
 * Open the socket directory dir (O_PATH, its last component not a
 * symbolic link) and check that nobody but the caller or the owner of
 * process pid (pid 0: the caller only) can have put a socket there: a
 * directory owned by one of them, without group or other permissions (the
 * agent makes it 0700). Returns the fd, or -1 with msg_set() saying why
 * ("unsafe socket directory 'DIR': owned by uid N").
 */
static int open_dir_checked(const char *dir, pid_t pid)
{
	uid_t me = geteuid();
	struct proc_status ps;
	struct stat st;
	bool owner_ok;
	int fd;

	fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOTDIR || errno == ELOOP) {
			errno = EPERM;
			return msg_set("unsafe socket directory '%s': not a "
				       "directory",
				       dir);
		}
		return msg_set_errno(errno, "cannot open socket directory '%s'",
				     dir);
	}
	if (fstat(fd, &st) < 0) {
		close(fd);
		return msg_set_errno(errno, "cannot stat '%s'", dir);
	}
	owner_ok = st.st_uid == me;
	if (!owner_ok && pid > 0 && proc_status(pid, &ps) == 0)
		for (int k = 0; k < 4; k++)
			owner_ok |= st.st_uid == ps.uids[k];
	if (!owner_ok) {
		close(fd);
		errno = EPERM;
		return msg_set("unsafe socket directory '%s': owned by uid %u",
			       dir, (unsigned)st.st_uid);
	}
	if (st.st_mode & 077) {
		close(fd);
		errno = EPERM;
		return msg_set("unsafe socket directory '%s': mode %04o, "
			       "open to group or others",
			       dir, (unsigned)(st.st_mode & 07777));
	}
	return fd;
}

/* Split "DIR/NAME" at its last '/' into dir[CTLSOCK_PATH_MAX]; the name. */
static const char *split_path(const char *path, char *dir)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;

	if (!slash || n == 0 || n >= CTLSOCK_PATH_MAX) {
		snprintf(dir, CTLSOCK_PATH_MAX, "%s", slash ? "/" : ".");
		return slash ? slash + 1 : path;
	}
	memcpy(dir, path, n);
	dir[n] = '\0';
	return slash + 1;
}

/*
 * Whether path is a socket in a safe directory for pid. False with
 * *eacces set when a directory refused, and the first unsafe directory's
 * reason kept in unsafe[MSG_MAX] (if still empty).
 */
static bool try_path(const char *path, pid_t pid, bool *eacces, char *unsafe)
{
	char dir[CTLSOCK_PATH_MAX];
	const char *name = split_path(path, dir);
	struct stat st;
	int dfd;

	if (lstat(path, &st) < 0) {
		if (errno == EACCES)
			*eacces = true;
		return false;
	}
	if (!S_ISSOCK(st.st_mode))
		return false;
	dfd = open_dir_checked(dir, pid);
	if (dfd < 0) {
		if (!*unsafe)
			snprintf(unsafe, MSG_MAX, "%s", msg_last());
		return false;
	}
	/* the same file through the checked directory */
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISSOCK(st.st_mode)) {
		close(dfd);
		return false;
	}
	close(dfd);
	return true;
}

/*
 * Look for a bound socket ".../palloc.../PID.sock" in /proc/net/unix that
 * try_path() accepts (another user may have bound one of that name too).
 */
static bool find_in_net_unix(pid_t pid, char *buf, size_t len, bool *eacces,
			     char *unsafe)
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
		found = try_path(buf, pid, eacces, unsafe);
	}
	fclose(f);
	return found;
}

int ctlsock_find(pid_t pid, char *buf, size_t len)
{
	char dir[CTLSOCK_PATH_MAX], procpath[64], unsafe[MSG_MAX] = "";
	bool eacces = false;
	struct stat st;
	const char *x;

	if (ctlsock_dir(dir, sizeof(dir)) == 0 &&
	    ctlsock_path(dir, pid, buf, len) == 0 &&
	    try_path(buf, pid, &eacces, unsafe))
		return 0;
	if (ctlsock_tmp_dir(geteuid(), dir, sizeof(dir)) == 0 &&
	    ctlsock_path(dir, pid, buf, len) == 0 &&
	    try_path(buf, pid, &eacces, unsafe))
		return 0;
	x = getenv("XDG_RUNTIME_DIR");
	if (x && x[0] == '/' &&
	    snprintf(dir, sizeof(dir), "%s/palloc", x) < (int)sizeof(dir) &&
	    ctlsock_path(dir, pid, buf, len) == 0 &&
	    try_path(buf, pid, &eacces, unsafe))
		return 0;
	/* The owner of the process may be someone else (or root via sudo). */
	snprintf(procpath, sizeof(procpath), "/proc/%d", (int)pid);
	if (stat(procpath, &st) == 0) {
		if (snprintf(dir, sizeof(dir), "/run/user/%u/palloc",
			     (unsigned)st.st_uid) < (int)sizeof(dir) &&
		    ctlsock_path(dir, pid, buf, len) == 0 &&
		    try_path(buf, pid, &eacces, unsafe))
			return 0;
		if (ctlsock_tmp_dir(st.st_uid, dir, sizeof(dir)) == 0 &&
		    ctlsock_path(dir, pid, buf, len) == 0 &&
		    try_path(buf, pid, &eacces, unsafe))
			return 0;
	}
	if (find_in_net_unix(pid, buf, len, &eacces, unsafe))
		return 0;
	if (*unsafe) {
		errno = EPERM;
		return msg_set("%s", unsafe);
	}
	if (eacces) {
		errno = EACCES;
		return msg_set("permission denied (the agent belongs to "
			       "another user)");
	}
	errno = ENOENT;
	return msg_set("no palloc agent in this process");
}

/*
 * Connect to name in the checked directory dfd (through /proc/self/fd, so
 * the directory checked is the one used; path is for messages), waiting
 * until deadline at most while the agent's backlog is full (a unix stream
 * connect then fails with EAGAIN rather than blocking in non-blocking
 * mode). Returns the blocking fd or -1.
 */
static int connect_at(int dfd, const char *name, const char *path,
		      long deadline, int timeout_ms)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int n, fd;

	n = snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s",
		     dfd, name);
	if (n < 0 || (size_t)n >= sizeof(sa.sun_path))
		return msg_set("socket path too long '%s'", path);
	for (;;) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    0);
		if (fd < 0)
			return msg_set_errno(errno, "socket");
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		if (errno == EAGAIN && http_now_ms() < deadline) {
			close(fd);
			usleep(10000);
			continue;
		}
		close(fd);
		if (errno == EAGAIN)
			return msg_set("timed out after %d ms waiting to "
				       "connect",
				       timeout_ms);
		if (errno == ECONNREFUSED)
			return msg_set("stale socket '%s': connection refused",
				       path);
		if (errno == EACCES || errno == EPERM)
			return msg_set("permission denied on '%s' (the agent "
				       "belongs to another user)",
				       path);
		return msg_set_errno(errno, "cannot connect to '%s'", path);
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		close(fd);
		return msg_set_errno(errno, "fcntl");
	}
	return fd;
}

/*
 * The process at the other end of fd (SO_PEERCRED: the one that called
 * listen) must be pid, or pid's thread group when pid names a thread, and
 * run as the caller's user unless the caller is root. 0 or -1.
 */
static int check_peer(int fd, pid_t pid, const char *path)
{
	struct ucred cr;
	socklen_t n = sizeof(cr);
	uid_t me = geteuid();
	struct proc_status ps;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &n) < 0 ||
	    n != sizeof(cr))
		return msg_set_errno(errno, "cannot check the peer of '%s'",
				     path);
	if (cr.pid != pid && (proc_status(pid, &ps) < 0 || cr.pid != ps.tgid))
		return msg_set("socket '%s' is served by process %d, not by "
			       "process %d",
			       path, (int)cr.pid, (int)pid);
	if (me != 0 && cr.uid != me)
		return msg_set("socket '%s' is served by uid %u, not by you "
			       "(uid %u)",
			       path, (unsigned)cr.uid, (unsigned)me);
	return 0;
}

int ctlsock_get_path(const char *path, const char *target, int timeout_ms,
		     struct http_response *resp)
{
	char req[HTTP_PATH_MAX * 2 + 64], dir[CTLSOCK_PATH_MAX];
	long deadline = http_now_ms() + timeout_ms;
	const char *name = split_path(path, dir);
	pid_t pid = ctlsock_name_pid(name);
	int fd, dfd, n;

	n = snprintf(req, sizeof(req),
		     "GET %s HTTP/1.0\r\nHost: palloc\r\n"
		     "User-Agent: palloc\r\n\r\n",
		     target);
	if (n < 0 || (size_t)n >= sizeof(req))
		return msg_set("request too long '%s'", target);
	if (!pid)
		return msg_set("not an agent's socket '%s': want PID.sock",
			       path);
	dfd = open_dir_checked(dir, pid);
	if (dfd < 0)
		return -1;
	fd = connect_at(dfd, name, path, deadline, timeout_ms);
	close(dfd);
	if (fd < 0)
		return -1;
	if (check_peer(fd, pid, path) < 0) {
		close(fd);
		return -1;
	}
	if (http_write_all(fd, req, (size_t)n) < 0) {
		msg_set_errno(errno, "cannot send the request");
		close(fd);
		return -1;
	}
	shutdown(fd, SHUT_WR);
	if (http_read_response_until(fd, deadline, timeout_ms,
				     CTLSOCK_MAX_RESPONSE, resp) < 0) {
		close(fd);
		explain_timeout(pid);
		return -1;
	}
	close(fd);
	return 0;
}

int ctlsock_get(pid_t pid, const char *target, int timeout_ms,
		struct http_response *resp)
{
	char path[CTLSOCK_PATH_MAX];

	if (pid <= 0 || !ctlsock_pid_alive(pid))
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
		    size_t *cap, ctlsock_warn_fn *warn, void *ctx)
{
	struct dirent *e;
	int dfd, lfd;
	DIR *d;

	dfd = open_dir_checked(dir, 0);
	if (dfd < 0) {
		/* absent is normal; anything else is said and skipped */
		if (errno != ENOENT && warn)
			warn(ctx, msg_last());
		return 0;
	}
	lfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(dfd);
	d = lfd < 0 ? NULL : fdopendir(lfd);
	if (!d) {
		if (lfd >= 0)
			close(lfd);
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		pid_t pid = ctlsock_name_pid(e->d_name);
		struct ctlsock_agent *a;
		bool dup = false;

		if (!pid || !ctlsock_pid_alive(pid))
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
	return ctlsock_list_warn(out, n, NULL, NULL);
}

int ctlsock_list_warn(struct ctlsock_agent **out, size_t *n,
		      ctlsock_warn_fn *warn, void *ctx)
{
	char dir[CTLSOCK_PATH_MAX], tmp[CTLSOCK_PATH_MAX];
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (ctlsock_dir(dir, sizeof(dir)) == 0 &&
	    list_dir(dir, out, n, &cap, warn, ctx) < 0)
		goto fail;
	if (ctlsock_tmp_dir(geteuid(), tmp, sizeof(tmp)) == 0 &&
	    strcmp(tmp, dir) != 0 && list_dir(tmp, out, n, &cap, warn, ctx) < 0)
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
