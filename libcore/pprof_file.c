/* SPDX-License-Identifier: MIT */
/* Reading and writing profile files (commands only; the agent writes fds). */
#include "pprof.h"
#include "msg.h"
#include "outfile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* Compressed or plain, a file larger than this is refused unread. */
#define MAX_FILE_SIZE ((size_t)1 << 30)

struct pprof_profile *pprof_read_file(const char *path)
{
	struct pprof_profile *p = NULL;
	unsigned char *buf = NULL, *nb;
	size_t len = 0, cap = 0;
	char why[MSG_MAX];
	struct stat sb;
	int fd, err = 0;
	bool is_stdin = strcmp(path, "-") == 0;

	fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		msg_set_errno(errno, "cannot open profile '%s'", path);
		return NULL;
	}
	/* a regular file is read into one buffer of its size (+1 to see EOF) */
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0 &&
	    (uint64_t)sb.st_size < MAX_FILE_SIZE) {
		cap = (size_t)sb.st_size + 1;
		buf = malloc(cap);
		if (!buf)
			cap = 0;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			if (cap >= MAX_FILE_SIZE) {
				msg_set("cannot read profile '%s': larger "
					"than %zu bytes",
					path, MAX_FILE_SIZE);
				goto out;
			}
			cap = cap ? cap * 2 : 256 * 1024;
			nb = realloc(buf, cap);
			if (!nb) {
				err = ENOMEM;
				break;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (err) {
		msg_set_errno(err, "cannot read profile '%s'", path);
		goto out;
	}
	p = pprof_decode(buf, len, 0, NULL);
	if (!p) {
		snprintf(why, sizeof(why), "%s", msg_last());
		msg_set("cannot decode profile '%s': %s", path, why);
	}
out:
	free(buf);
	if (!is_stdin)
		close(fd);
	return p;
}

int pprof_write_file(const struct pprof_profile *p, const char *path)
{
	struct outfile o;
	char why[MSG_MAX];

	if (outfile_open(&o, path) < 0)
		return -1;
	if (fflush(o.fp) != 0 || pprof_write_fd(p, fileno(o.fp)) < 0) {
		snprintf(why, sizeof(why), "%s", msg_last());
		outfile_abort(&o);
		return msg_set("cannot write profile '%s': %s", path, why);
	}
	return outfile_commit(&o);
}
