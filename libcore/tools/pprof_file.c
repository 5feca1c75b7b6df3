/* SPDX-License-Identifier: MIT */
/* Reading and writing profile files (commands only; the agent writes fds). */
#include "pprof.h"
#include "msg.h"
#include "outfile.h"
#include "infile.h"
#include "pprof_read.h"

#include <unistd.h>

struct pprof_profile *pprof_read_file(const char *path)
{
	struct pprof_profile *p;
	char why[MSG_MAX];
	int fd = infile_fd_path(path);
	bool own = false, io = true;

	if (strcmp(path, "-") == 0) {
		fd = STDIN_FILENO;
	} else if (fd < 0) {
		fd = infile_open(path, NULL);
		if (fd < 0) {
			snprintf(why, sizeof(why), "%s", msg_last());
			msg_set("cannot read profile '%s': %s", path, why);
			return NULL;
		}
		own = true;
	}
	p = pprof_read_fd_io(fd, 0, &io);
	if (!p) {
		snprintf(why, sizeof(why), "%s", msg_last());
		msg_set("cannot %s profile '%s': %s", io ? "read" : "decode",
			path, why);
	}
	if (own)
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
		return msg_set("cannot write '%s': %s", path, why);
	}
	return outfile_commit(&o);
}
