/* SPDX-License-Identifier: MIT */
/* Small files (/proc, /sys, cgroup) read into the caller's buffer. */
#include "smallfile.h"
#include "msg.h"
#include "num.h"

#include <fcntl.h>
#include <unistd.h>

ssize_t smallfile_read(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	size_t n = 0;
	int err;

	buf[0] = '\0';
	if (fd < 0)
		return -1;
	while (n < cap - 1) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = errno;
			close(fd);
			errno = err;
			return -1;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	return (ssize_t)n;
}

int smallfile_parse_u64(const char *buf, size_t n, uint64_t *out)
{
	char num[SMALLFILE_U64_CAP];

	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	if (memchr(buf, '\0', n)) {
		msg_set("NUL byte in a number");
		errno = EINVAL;
		return -1;
	}
	/* longer than any u64: num_parse_u64() could not take it whole */
	if (n >= sizeof(num)) {
		msg_set("number too long");
		errno = EINVAL;
		return -1;
	}
	memcpy(num, buf, n);
	num[n] = '\0';
	if (strcmp(num, "max") == 0) {
		*out = UINT64_MAX;
		return 0;
	}
	if (num_parse_u64(num, false, out) < 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int smallfile_u64(const char *path, uint64_t *out)
{
	char buf[64];
	ssize_t n = smallfile_read(path, buf, sizeof(buf));

	if (n < 0)
		return -1;
	/* a full buffer may have left the rest of the file unread */
	if ((size_t)n == sizeof(buf) - 1) {
		msg_set("number too long");
		errno = EINVAL;
		return -1;
	}
	return smallfile_parse_u64(buf, (size_t)n, out);
}
