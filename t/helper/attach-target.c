/* SPDX-License-Identifier: MIT */
/* A program started plainly that allocates known blocks when told, for
 * palloc-run -p (t/3130). */
#include "common.h"

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

/*
 * Reads commands from standard input, one read(2) each (blocked there in
 * between, so that an attach interrupts that call):
 *   alloc N SIZE  keep N blocks of SIZE bytes from alloc_site()
 *   free          free the blocks kept
 *   byte          the next read must return exactly one byte: "X"
 *   quit          exit 0 (also at end of input)
 * Answers each on stdout ("ready" at start, "allocated N", "freed",
 * "byte X", "read failed: ..." then exit 3 when a read fails: EINTR must
 * never reach it). argv[1] "threads": 3 more threads allocate and free
 * in a loop meanwhile (their work is not counted).
 */

#define MAX_KEPT 100000
static void *kept[MAX_KEPT];
static size_t n_kept;
static volatile int stop;

__attribute__((noinline)) static void alloc_site(size_t n, size_t size)
{
	for (size_t i = 0; i < n && n_kept < MAX_KEPT; i++)
		kept[n_kept++] = malloc(size);
}

static void *churn(void *arg)
{
	size_t i = 0;

	(void)arg;
	while (!stop) {
		char *p = malloc(32 + i++ % 256);

		if (p)
			p[0] = 1;
		free(p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[3];
	int nth = 0;
	char buf[256];
	void *before = malloc(4096); /* a block from before any attach */

	if (argc > 1 && strcmp(argv[1], "threads") == 0)
		for (; nth < 3; nth++)
			pthread_create(&th[nth], NULL, churn, NULL);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		ssize_t n = read(0, buf, sizeof(buf) - 1);
		unsigned long a, b;

		if (n < 0) {
			printf("read failed: %s\n", strerror(errno));
			fflush(stdout);
			return 3;
		}
		if (n == 0)
			break;
		buf[n] = '\0';
		if (sscanf(buf, "alloc %lu %lu", &a, &b) == 2) {
			alloc_site(a, b);
			printf("allocated %lu\n", a);
		} else if (strncmp(buf, "free", 4) == 0) {
			for (size_t i = 0; i < n_kept; i++)
				free(kept[i]);
			n_kept = 0;
			printf("freed\n");
		} else if (strncmp(buf, "byte", 4) == 0) {
			printf("expecting a byte\n");
			fflush(stdout);
			n = read(0, buf, sizeof(buf));
			if (n < 0) {
				printf("read failed: %s\n", strerror(errno));
				fflush(stdout);
				return 3;
			}
			printf("byte %.*s (%zd)\n", (int)n, buf, n);
		} else if (strncmp(buf, "quit", 4) == 0) {
			break;
		}
		fflush(stdout);
	}
	stop = 1;
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	free(before);
	printf("bye\n");
	return 0;
}
