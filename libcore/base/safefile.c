/* SPDX-License-Identifier: MIT */
/* Safe file creation: exclusive temporaries, no symlink or FIFO followed. */
#include "safefile.h"
#include "msg.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Attempts at a fresh random temporary name before giving up. */
#define TMP_TRIES 16

/* splitmix64's finalizer: spreads the clock and counter fallback. */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* 64 unpredictable bits: getrandom(2), else (no entropy yet, or
 * seccomp) the clock, pid, a stack address and a counter, mixed. */
static uint64_t random64(void)
{
	static uint64_t counter;
	struct timespec ts;
	uint64_t r = 0, x;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
		return r;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	x = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	x ^= (uint64_t)getpid() << 32 ^ (uint64_t)(uintptr_t)&ts;
	x += __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) *
	     0x9e3779b97f4a7c15ull;
	return mix64(x ^ r);
}

/* ".palloc.<16 hex>.tmp": hidden, so it matches no output pattern. */
static void tmp_name(char out[40])
{
	static const char hex[] = "0123456789abcdef";
	uint64_t r = random64();
	size_t n = 0;

	memcpy(out, ".palloc.", 8);
	n = 8;
	for (int i = 0; i < 16; i++, r >>= 4)
		out[n++] = hex[r & 15];
	memcpy(out + n, ".tmp", 5);
}

/* Split path into its directory (opened O_PATH into sf->dirfd) and its
 * last component (sf->name). */
static int open_dir(struct safefile *sf, const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char dir[PATH_MAX];
	size_t dlen;

	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		errno = EISDIR;
		return msg_set_errno(errno, "cannot write '%s'", path);
	}
	if (strlen(base) > NAME_MAX) {
		errno = ENAMETOOLONG;
		return msg_set_errno(errno, "cannot write '%s'", path);
	}
	memcpy(sf->name, base, strlen(base) + 1);
	if (!slash) {
		dir[0] = '.';
		dlen = 1;
	} else if (slash == path) {
		dir[0] = '/';
		dlen = 1;
	} else {
		dlen = (size_t)(slash - path);
		if (dlen >= sizeof(dir)) {
			errno = ENAMETOOLONG;
			return msg_set_errno(errno, "cannot write '%s'", path);
		}
		memcpy(dir, path, dlen);
	}
	dir[dlen] = '\0';
	sf->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (sf->dirfd < 0)
		return msg_set_errno(errno, "cannot write '%s'", path);
	return 0;
}

/*
 * What is at the final name now: 0 absent or a regular file (may be
 * replaced), 1 /dev/null, -1 anything else (with errno and msg_set()).
 */
static int check_target(const struct safefile *sf)
{
	struct stat st;
	const char *what;

	if (fstatat(sf->dirfd, sf->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0; /* ENOENT; other errors surface at link time */
	if (S_ISREG(st.st_mode))
		return 0;
	if (S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 &&
	    minor(st.st_rdev) == 3)
		return 1;
	if (S_ISLNK(st.st_mode)) {
		errno = ELOOP;
		what = "it is a symbolic link, never followed";
	} else {
		errno = EEXIST;
		what = S_ISFIFO(st.st_mode)   ? "it is a FIFO"
		       : S_ISSOCK(st.st_mode) ? "it is a socket"
		       : S_ISDIR(st.st_mode)  ? "it is a directory"
		       : S_ISBLK(st.st_mode)  ? "it is a block device"
		       : S_ISCHR(st.st_mode)  ? "it is a character device"
					      : "it is no regular file";
	}
	msg_set("cannot write '%s': %s", sf->path, what);
	return -1;
}

/* The /proc path naming an open fd, for linkat(AT_SYMLINK_FOLLOW). */
static void fd_path(char out[32], int fd)
{
	char digits[12];
	size_t n = 0, k = 0;
	unsigned v = (unsigned)fd;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	memcpy(out, "/proc/self/fd/", 14);
	k = 14;
	while (n)
		out[k++] = digits[--n];
	out[k] = '\0';
}

/* An unnamed temporary that can be linked later, or -1 (then a named
 * one is used). */
static int open_unnamed(const struct safefile *sf, mode_t mode)
{
	char proc[32];
	struct stat st;
	int fd;

	fd = openat(sf->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
	if (fd < 0)
		return -1;
	/* No /proc (a chroot): linkat() could not name it. */
	fd_path(proc, fd);
	if (stat(proc, &st) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int safefile_open(struct safefile *sf, const char *path, mode_t mode)
{
	int rc, err;

	memset(sf, 0, sizeof(*sf));
	sf->dirfd = sf->fd = -1;
	sf->path = path;
	if (open_dir(sf, path) < 0)
		return -1;
	rc = check_target(sf);
	if (rc != 0) {
		err = errno;
		close(sf->dirfd);
		sf->dirfd = -1;
		errno = err;
		return rc;
	}
	sf->fd = open_unnamed(sf, mode);
	for (int i = 0; sf->fd < 0 && i < TMP_TRIES; i++) {
		tmp_name(sf->tmp);
		sf->fd = openat(sf->dirfd, sf->tmp,
				O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
					O_NONBLOCK | O_CLOEXEC,
				mode);
		if (sf->fd >= 0)
			sf->named = true;
		else if (errno != EEXIST)
			break;
	}
	if (sf->fd < 0) {
		err = errno;
		msg_set_errno(err, "cannot create a temporary file beside '%s'",
			      path);
		close(sf->dirfd);
		sf->dirfd = -1;
		errno = err;
		return -1;
	}
	return 0;
}

/*
 * The set of SIGXFSZ alone, or whether set holds it: the kernel's layout
 * of sigset_t (one bit per signal from bit 0, in unsigned longs), which
 * the C library's sigset_t begins with. Not sigemptyset(), sigaddset()
 * and sigismember(): inside the agent, three functions fewer to bind at
 * every start.
 */
#define XFSZ_BITS (8 * sizeof(unsigned long))

static void xfsz_only(sigset_t *set)
{
	unsigned long *w = (unsigned long *)set;

	memset(set, 0, sizeof(*set));
	w[(SIGXFSZ - 1) / XFSZ_BITS] = 1ul << ((SIGXFSZ - 1) % XFSZ_BITS);
}

static bool xfsz_in(const sigset_t *set)
{
	const unsigned long *w = (const unsigned long *)set;

	return w[(SIGXFSZ - 1) / XFSZ_BITS] >> ((SIGXFSZ - 1) % XFSZ_BITS) & 1;
}

void safefile_xfsz_begin(struct safefile_xfsz *x)
{
	sigset_t xfsz, pending;

	xfsz_only(&xfsz);
	pthread_sigmask(SIG_BLOCK, &xfsz, &x->old);
	x->was_pending = sigpending(&pending) == 0 && xfsz_in(&pending);
}

void safefile_xfsz_end(struct safefile_xfsz *x, int err)
{
	/*
	 * The kernel sends SIGXFSZ to this thread with the EFBIG; blocked,
	 * it waits in the thread's pending set: take it back, unless one was
	 * pending before (the program's own, left alone).
	 */
	if (err == EFBIG && !x->was_pending) {
		struct timespec zero = {0, 0};
		sigset_t xfsz;

		xfsz_only(&xfsz);
		while (sigtimedwait(&xfsz, NULL, &zero) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &x->old, NULL);
}

int safefile_write(struct safefile *sf, const void *buf, size_t len)
{
	const char *p = buf;
	struct safefile_xfsz x;
	int err = 0;

	safefile_xfsz_begin(&x);
	while (len) {
		ssize_t n = write(sf->fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : EIO;
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	safefile_xfsz_end(&x, err);
	if (!err)
		return 0;
	errno = err;
	if (err == EFBIG)
		msg_set("cannot write '%s': %s (the file size limit, "
			"RLIMIT_FSIZE or ulimit -f)",
			sf->path, strerror(err));
	else
		msg_set_errno(err, "cannot write '%s'", sf->path);
	return -1;
}

/* Give the unnamed temporary a fresh random name in the directory. */
static int link_tmp(struct safefile *sf, const char *proc)
{
	for (int i = 0; i < TMP_TRIES; i++) {
		tmp_name(sf->tmp);
		if (linkat(AT_FDCWD, proc, sf->dirfd, sf->tmp,
			   AT_SYMLINK_FOLLOW) == 0) {
			sf->named = true;
			return 0;
		}
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

/* Name the unnamed temporary: at the final name directly when that is
 * free (no temporary name ever appears), else through a temporary name.
 * 0, or -1 with errno. */
static int link_unnamed(struct safefile *sf)
{
	char proc[32];

	fd_path(proc, sf->fd);
	if (linkat(AT_FDCWD, proc, sf->dirfd, sf->name, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	if (errno != EEXIST)
		return -1;
	return link_tmp(sf, proc);
}

int safefile_commit(struct safefile *sf, struct stat *st)
{
	int err = 0, rc;

	if (st && fstat(sf->fd, st) < 0) {
		err = errno;
		msg_set_errno(err, "cannot write '%s'", sf->path);
	}
	/* Checked again: something may have appeared while writing. */
	rc = err ? 0 : check_target(sf);
	if (rc != 0) {
		err = rc > 0 ? EEXIST : errno;
		if (rc > 0)
			msg_set("cannot write '%s': /dev/null appeared there",
				sf->path);
	}
	if (!err && !sf->named && link_unnamed(sf) < 0) {
		err = errno;
		msg_set_errno(err, "cannot write '%s'", sf->path);
	}
	if (!err && sf->named &&
	    renameat(sf->dirfd, sf->tmp, sf->dirfd, sf->name) < 0) {
		err = errno;
		msg_set_errno(err, "cannot rename a temporary file to '%s'",
			      sf->path);
	}
	if (err) {
		safefile_abort(sf);
		errno = err;
		return -1;
	}
	close(sf->fd);
	close(sf->dirfd);
	sf->fd = sf->dirfd = -1;
	sf->named = false;
	return 0;
}

void safefile_abort(struct safefile *sf)
{
	int err = errno;

	if (sf->fd >= 0)
		close(sf->fd);
	if (sf->named)
		unlinkat(sf->dirfd, sf->tmp, 0);
	if (sf->dirfd >= 0)
		close(sf->dirfd);
	sf->fd = sf->dirfd = -1;
	sf->named = false;
	errno = err;
}

int safefile_write_file(const char *path, mode_t mode, const void *buf,
			size_t len, struct stat *st)
{
	struct safefile sf;
	int rc = safefile_open(&sf, path, mode);

	if (rc != 0)
		return rc;
	if (safefile_write(&sf, buf, len) < 0) {
		safefile_abort(&sf);
		return -1;
	}
	return safefile_commit(&sf, st);
}
