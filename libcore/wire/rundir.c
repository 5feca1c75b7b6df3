/* SPDX-License-Identifier: MIT */
/* The user's palloc directory, where records live (both sides). */
#include "common.h"
#include "rundir.h"
#include "msg.h"

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

int rundir_tmp(uid_t uid, char *buf, size_t len)
{
	int n = snprintf(buf, len, "/tmp/palloc-%u", (unsigned)uid);

	if (n < 0 || (size_t)n >= len)
		return msg_set("record directory name too long");
	return 0;
}

int rundir_path(char *buf, size_t len)
{
	const char *x = xdg_dir();
	int n;

	if (!x)
		return rundir_tmp(geteuid(), buf, len);
	n = snprintf(buf, len, "%s/palloc", x);
	if (n < 0 || (size_t)n >= len)
		return rundir_tmp(geteuid(), buf, len);
	return 0;
}

int rundir_prepare(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return msg_set_errno(errno, "cannot create '%s'", dir);
	if (lstat(dir, &st) < 0)
		return msg_set_errno(errno, "cannot stat '%s'", dir);
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return msg_set("unsafe record directory '%s': not a directory",
			       dir);
	}
	if (st.st_uid != geteuid()) {
		errno = EPERM;
		return msg_set("unsafe record directory '%s': owned by uid %u",
			       dir, (unsigned)st.st_uid);
	}
	if (st.st_mode & 077) {
		/* Ours: tighten it rather than give up. */
		if (chmod(dir, 0700) < 0)
			return msg_set_errno(errno, "cannot chmod '%s'", dir);
	}
	return 0;
}
