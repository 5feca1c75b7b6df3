/* SPDX-License-Identifier: MIT */
/* Atomic output files for the commands (the agent has its own writer). */
#include "outfile.h"
#include "msg_cli.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int outfile_open(struct outfile *o, const char *path)
{
	struct stat st;
	mode_t mask;
	int fd;

	memset(o, 0, sizeof(*o));
	if (!path || strcmp(path, "-") == 0) {
		o->fp = stdout;
		return 0;
	}
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		o->fp = fopen(path, "we");
		if (!o->fp)
			return msg_set_errno(errno, "cannot open '%s'", path);
		o->direct = true;
		return 0;
	}
	o->path = strdup(path);
	if (!o->path || asprintf(&o->tmp, "%s.tmp.XXXXXX", path) < 0) {
		free(o->path);
		o->tmp = NULL;
		return msg_set_errno(ENOMEM, "cannot open '%s'", path);
	}
	fd = mkstemp(o->tmp);
	if (fd < 0) {
		int e = errno;

		free(o->tmp);
		free(o->path);
		return msg_set_errno(e, "cannot open '%s'", path);
	}
	/* mkstemp makes 0600; output files are ordinary files. */
	mask = umask(0);
	umask(mask);
	(void)fchmod(fd, 0666 & ~mask);
	o->fp = fdopen(fd, "w");
	if (!o->fp) {
		int e = errno;

		close(fd);
		unlink(o->tmp);
		free(o->tmp);
		free(o->path);
		return msg_set_errno(e, "cannot open '%s'", path);
	}
	return 0;
}

int outfile_commit(struct outfile *o)
{
	int e = 0;

	if (o->direct) {
		if (fflush(o->fp) != 0 || ferror(o->fp))
			e = errno ? errno : EIO;
		if (fclose(o->fp) != 0 && !e)
			e = errno;
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
	if (fflush(o->fp) != 0 || ferror(o->fp) || fsync(fileno(o->fp)) != 0)
		e = errno ? errno : EIO;
	if (fclose(o->fp) != 0 && !e)
		e = errno;
	if (!e && rename(o->tmp, o->path) != 0)
		e = errno;
	if (e) {
		unlink(o->tmp);
		msg_set_errno(e, "cannot write '%s'", o->path);
	}
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof(*o));
	return e ? -1 : 0;
}

void outfile_abort(struct outfile *o)
{
	if (o->direct)
		fclose(o->fp);
	if (o->path) {
		fclose(o->fp);
		unlink(o->tmp);
	}
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof(*o));
}
