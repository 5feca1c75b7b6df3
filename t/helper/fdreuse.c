/* SPDX-License-Identifier: MIT */
/*
 * What daemons do with descriptors, under the agent (t/3032, t/3033).
 *
 * fdreuse copy INPUT LOG: close descriptors 3..1023, open INPUT (it must
 * get 3) and LOG (4), copy INPUT to LOG 16 bytes at a time while
 * allocating from stacks of varying depth (so that sampled walks touch
 * new stack pages), then dup2 INPUT onto every number 5..63 that is free:
 * none may fail (EBUSY: a number the agent holds reserved). Exit 0, or 1
 * with the reason on stderr.
 *
 * fdreuse count: open /dev/null until it fails, print how many and the
 * errno name, close them, exit with the count.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Global, so that the compiler keeps the allocations. */
void *volatile sink;

__attribute__((noinline)) int deep(int depth);
__attribute__((noinline)) int deep(int depth)
{
	volatile char pad[512];

	pad[0] = (char)depth;
	if (depth > 0)
		return deep(depth - 1) + pad[0];
	free(sink);
	sink = malloc(100 + (size_t)depth);
	return 0;
}

static int copy(const char *in_path, const char *log_path)
{
	char buf[16];
	int in, log, d = 0;
	ssize_t n;

	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	in = open(in_path, O_RDONLY);
	log = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (in != 3 || log != 4) {
		fprintf(stderr, "fdreuse: got descriptors %d and %d\n", in,
			log);
		return 1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		deep(d);
		d = (d + 7) % 97;
		if (write(log, buf, (size_t)n) != n) {
			perror("fdreuse: write");
			return 1;
		}
	}
	for (int fd = 5; fd < 64; fd++) {
		if (fcntl(fd, F_GETFD) >= 0)
			continue;
		if (dup2(in, fd) != fd) {
			fprintf(stderr, "fdreuse: dup2 onto %d: %s\n", fd,
				strerror(errno));
			return 1;
		}
		close(fd);
	}
	return 0;
}

static int count(void)
{
	int fds[1100], n = 0, err = 0;

	while (n < 1100) {
		int fd = open("/dev/null", O_RDONLY);

		if (fd < 0) {
			err = errno;
			break;
		}
		fds[n++] = fd;
	}
	printf("%d %s\n", n, err == EMFILE ? "EMFILE" : strerror(err));
	for (int i = 0; i < n; i++)
		close(fds[i]);
	return n;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "copy") == 0)
		return copy(argv[2], argv[3]);
	if (argc == 2 && strcmp(argv[1], "count") == 0)
		return count();
	fprintf(stderr, "usage: fdreuse copy INPUT LOG | fdreuse count\n");
	return 2;
}
