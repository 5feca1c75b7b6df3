/* SPDX-License-Identifier: MIT */
/* Reading a /proc file line by line inside the target (lines.h). */
#include "config.h"
#include "common.h"
#include "agent/lines.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int agent_lines(const char *path,
		void (*fn)(const char *line, size_t len, void *arg), void *arg)
{
	char buf[8192];
	size_t have = 0;
	bool skip = false; /* inside a line longer than buf */
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - have);
		size_t start = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		/* memchr, not a loop over the bytes: a tenth of the
		 * instructions (/proc/self/maps is some 8 KiB). */
		for (;;) {
			const char *nl =
				memchr(buf + start, '\n', have - start);

			if (!nl)
				break;
			if (!skip)
				fn(buf + start, (size_t)(nl - buf) - start,
				   arg);
			skip = false;
			start = (size_t)(nl - buf) + 1;
		}
		/* A line longer than buf (no /proc/self/maps line is: PATH_MAX
		 * is 4096) is dropped whole. */
		if (start == 0 && have == sizeof(buf)) {
			start = have;
			skip = true;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
	}
	if (have && !skip)
		fn(buf, have, arg);
	close(fd);
	return 0;
}
