/* SPDX-License-Identifier: MIT */
/* Input files that may be hostile: opened without blocking, read bounded. */
#include "common.h"
#include "infile.h"
#include "msg.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

static const char *type_name(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFIFO:
		return "a FIFO";
	case S_IFSOCK:
		return "a socket";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFDIR:
		return "a directory";
	default:
		return "not a file";
	}
}

int infile_open(const char *path, struct stat *st)
{
	struct stat sb, rb;
	char self[64];
	int pfd, fd;

	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return msg_set("%s", strerror(errno));
	if (fstat(pfd, &sb) < 0) {
		int err = errno;

		close(pfd);
		errno = err;
		return msg_set("%s", strerror(err));
	}
	if (!S_ISREG(sb.st_mode)) {
		close(pfd);
		errno = EINVAL;
		return msg_set("not a regular file (%s)",
			       type_name(sb.st_mode));
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		/* no /proc: the name again, checked to be the same file */
		fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	}
	close(pfd);
	if (fd < 0)
		return msg_set("%s", strerror(errno));
	if (fstat(fd, &rb) < 0 || !S_ISREG(rb.st_mode) ||
	    rb.st_dev != sb.st_dev || rb.st_ino != sb.st_ino) {
		close(fd);
		errno = EINVAL;
		return msg_set("not a regular file (replaced while opened)");
	}
	if (st)
		*st = rb;
	return fd;
}

int infile_fd_path(const char *path)
{
	const char *p;
	long v = 0;

	if (strncmp(path, "/dev/fd/", 8) == 0)
		p = path + 8;
	else if (strncmp(path, "/proc/self/fd/", 14) == 0)
		p = path + 14;
	else
		return -1;
	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		if (v > INT_MAX)
			return -1;
	}
	return *p ? -1 : (int)v;
}

int infile_read_fd(int fd, size_t max, unsigned char **buf, size_t *len)
{
	unsigned char *b = NULL, *nb;
	size_t n = 0, cap = 0;
	struct stat st;

	*buf = NULL;
	*len = 0;
	/* A regular file says its size: refused unread when too large, else
	 * read into one buffer of that size (+1 to see the end). */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		if ((uint64_t)st.st_size > max) {
			errno = EFBIG;
			return msg_set("larger than %zu bytes (%lld)", max,
				       (long long)st.st_size);
		}
		cap = (size_t)st.st_size + 1;
		b = malloc(cap);
		if (!b) {
			errno = ENOMEM;
			return msg_set("%s", strerror(ENOMEM));
		}
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 256 * 1024;

			if (n > max) {
				free(b);
				errno = EFBIG;
				return msg_set("larger than %zu bytes", max);
			}
			if (ncap > max + 1)
				ncap = max + 1;
			if (ncap <= cap)
				ncap = cap + 1;
			nb = realloc(b, ncap);
			if (!nb) {
				free(b);
				errno = ENOMEM;
				return msg_set("%s", strerror(ENOMEM));
			}
			b = nb;
			cap = ncap;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = errno;

			free(b);
			errno = err;
			return msg_set("%s", strerror(err));
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > max) {
		free(b);
		errno = EFBIG;
		return msg_set("larger than %zu bytes", max);
	}
	*buf = b;
	*len = n;
	return 0;
}
