/* SPDX-License-Identifier: MIT */
/* Output files for the commands, through base/safefile.c's rules. */
#include "outfile.h"
#include "infile.h"
#include "msg_cli.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* A descriptor the caller handed down ("/dev/fd/N"), open, or -1. */
static int handed_fd(const char *path)
{
	int fd = infile_fd_path(path);

	if (fd < 0 || fcntl(fd, F_GETFD) < 0)
		return -1;
	return fd;
}

int outfile_check(const char *path)
{
	struct safefile sf;
	int rc;

	if (!path || strcmp(path, "-") == 0 || handed_fd(path) >= 0)
		return 0;
	/* The same checks as outfile_open(); the temporary is dropped. */
	rc = safefile_open(&sf, path, 0600);
	if (rc == 0)
		safefile_abort(&sf);
	return rc < 0 ? -1 : 0;
}

/* Write in place: a descriptor handed down (dup'd) or the discard. */
static int open_direct(struct outfile *o, const char *path, int fd)
{
	int d = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1;

	o->fp = d >= 0 ? fdopen(d, "w") : fopen("/dev/null", "we");
	if (!o->fp) {
		int e = errno;

		if (d >= 0)
			close(d);
		return msg_set_errno(e, "cannot write '%s'", path);
	}
	o->direct = true;
	return 0;
}

int outfile_open(struct outfile *o, const char *path)
{
	int rc, fd;

	memset(o, 0, sizeof(*o));
	o->sf.fd = o->sf.dirfd = -1;
	if (!path || strcmp(path, "-") == 0) {
		o->fp = stdout;
		return 0;
	}
	fd = handed_fd(path);
	if (fd >= 0)
		return open_direct(o, path, fd);
	o->path = strdup(path);
	if (!o->path)
		return msg_set_errno(ENOMEM, "cannot write '%s'", path);
	rc = safefile_open(&o->sf, o->path, 0666);
	if (rc != 0) {
		free(o->path);
		o->path = NULL;
		/* 1: /dev/null, never opened at the user's name */
		return rc > 0 ? open_direct(o, path, -1) : -1;
	}
	fd = fcntl(o->sf.fd, F_DUPFD_CLOEXEC, 3);
	o->fp = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!o->fp) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		safefile_abort(&o->sf);
		free(o->path);
		o->path = NULL;
		return msg_set_errno(e, "cannot write '%s'", path);
	}
	safefile_xfsz_begin(&o->xfsz);
	return 0;
}

/* Close the stream: 0, or the errno of the first failure. */
static int close_fp(FILE *fp, bool sync)
{
	int e = 0;

	errno = 0;
	if (fflush(fp) != 0 || ferror(fp))
		e = errno ? errno : EIO;
	if (!e && sync && fsync(fileno(fp)) != 0)
		e = errno;
	if (fclose(fp) != 0 && !e)
		e = errno ? errno : EIO;
	return e;
}

int outfile_commit(struct outfile *o)
{
	int e;

	if (o->direct) {
		e = close_fp(o->fp, false);
		memset(o, 0, sizeof(*o));
		return e ? msg_set_errno(e, "write error") : 0;
	}
	if (!o->path) {
		/* The reason is kept for the report at exit (msg_init). */
		if (fflush(o->fp) != 0)
			msg_stdout_failed(errno);
		if (ferror(o->fp))
			return msg_set("write error on standard output");
		return 0;
	}
	e = close_fp(o->fp, true);
	safefile_xfsz_end(&o->xfsz, e);
	if (e) {
		safefile_abort(&o->sf);
		msg_set("cannot write '%s': %s%s", o->path, strerror(e),
			e == EFBIG ? " (the file size limit, RLIMIT_FSIZE or "
				     "ulimit -f)"
				   : "");
	} else if (safefile_commit(&o->sf, NULL) < 0) {
		e = errno ? errno : EIO;
	}
	free(o->path);
	memset(o, 0, sizeof(*o));
	return e ? -1 : 0;
}

void outfile_abort(struct outfile *o)
{
	if (o->direct) {
		fclose(o->fp);
	} else if (o->path) {
		fclose(o->fp);
		safefile_xfsz_end(&o->xfsz, 0);
		safefile_abort(&o->sf);
	}
	free(o->path);
	memset(o, 0, sizeof(*o));
}
