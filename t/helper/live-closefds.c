/* SPDX-License-Identifier: MIT */
/* live-closefds: a daemon-like program that closes every descriptor above 2
 * (an agent that kept one would lose it), then opens its own TCP listener
 * and duplicates it onto the numbers up to 63; it accepts one connection,
 * late. */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	void *keep = malloc(1 << 20);
	char buf[256];
	ssize_t n;
	int s, c;

	/* Never hang a test: a stolen connection would leave accept waiting. */
	alarm(15);
	/* Let the agent start its control thread first. */
	sleep(1);
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	s = socket(AF_INET, SOCK_STREAM, 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(s, 5) < 0 || getsockname(s, (struct sockaddr *)&a, &len) < 0)
		return 1;
	for (int fd = s + 1; fd < 64; fd++)
		dup2(s, fd);
	printf("listening fd %d port %d\n", s, ntohs(a.sin_port));
	fflush(stdout);
	/* Late to accept: a connection made meanwhile waits in the backlog,
	 * unless another thread accepts on this descriptor first. */
	sleep(3);
	c = accept(s, NULL, NULL);
	if (c < 0)
		return 1;
	n = read(c, buf, sizeof(buf) - 1);
	printf("program accepted a connection (%s)\n",
	       n > 0 && strncmp(buf, "GET ", 4) == 0 ? "GET" : "?");
	(void)!write(c, "HTTP/1.0 200 OK\r\n\r\nprogram\n", 27);
	close(c);
	free(keep);
	return 0;
}
