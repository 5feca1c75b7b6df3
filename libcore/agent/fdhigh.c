/* SPDX-License-Identifier: MIT */
/* The agent's own descriptors, out of the program's way. */
#include "fdhigh.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

/* How many numbers below the top are tried. */
#define AGENT_FD_SPAN 32

/* The number the agent's descriptors go below, or 0 when there is no room. */
static int fd_top(void)
{
	struct rlimit rl;
	rlim_t top = 1024;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < top)
		top = rl.rlim_cur;
	return top < AGENT_FD_MIN_LIMIT ? 0 : (int)top;
}

bool agent_fd_room(void)
{
	return fd_top() > 0;
}

int agent_fd_high(int fd)
{
	int top = fd_top(), nfd = -1, err = EMFILE;

	if (fd < 0)
		return fd;
	/* the lowest free number in [top - SPAN, top), if any */
	if (top > 0) {
		nfd = fcntl(fd, F_DUPFD_CLOEXEC, top - AGENT_FD_SPAN);
		err = errno;
		if (nfd >= top) {
			close(nfd);
			nfd = -1;
			err = EMFILE;
		}
	}
	close(fd);
	if (nfd < 0)
		errno = err;
	return nfd;
}
