/* SPDX-License-Identifier: MIT */
/* A process whose memory is known, for palloc-explain's tests (t/11NN). */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Usage: explain-workload [--seconds N] [--file PATH] SCENARIO...
 *
 * Sets up each SCENARIO, prints "truth PART BYTES" for the parts of
 * palloc-explain it makes known (PART as palloc-explain names it), then
 * "ready", and waits until its standard input (a pipe or terminal) reaches
 * end of file, a signal ends it, or N seconds (default 300) pass.
 *
 *   frag      200 MB of 1024-byte blocks, every other one freed: about
 *             100 MB in use and 100 MB held free by the allocator
 *   arenas    8 threads each keeping 16 MiB of 4000-byte blocks (glibc
 *             gives each its own arena)
 *   bigblocks 8 blocks of 16 MiB (mmap'd by glibc), written through
 *   mmap      64 MiB of anonymous mmap written outside malloc, aligned
 *             to 64 MiB like a glibc arena heap
 *   stacks    16 threads each writing 1 MiB of its own stack
 *   file      a 100 MiB file (PATH, default explain-file.dat) mapped and
 *             read through
 */

#define MIB (1024 * 1024)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int started;

/* Tell main one thread is set up, then sleep until the process ends. */
static void *park(void)
{
	pthread_mutex_lock(&lock);
	started++;
	pthread_cond_broadcast(&cond);
	for (;;)
		pthread_cond_wait(&cond, &lock);
	return NULL;
}

static void wait_started(int n)
{
	pthread_mutex_lock(&lock);
	while (started < n)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

static void die(const char *what)
{
	fprintf(stderr, "explain-workload: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void frag(void)
{
	size_t size = 1024, n = (size_t)200 * 1000 * 1000 / size, i;
	char **v = malloc(n * sizeof(*v));

	if (!v)
		die("malloc");
	for (i = 0; i < n; i++) {
		v[i] = malloc(size);
		if (!v[i])
			die("malloc");
		memset(v[i], 1, size);
	}
	for (i = 0; i < n; i += 2)
		free(v[i]);
	/* The pointer array itself is in use too (n * 8 bytes). */
	printf("truth heap_inuse %zu\n", n / 2 * size + n * sizeof(*v));
	printf("truth allocator_free %zu\n", (n + 1) / 2 * size);
}

static void *arena_thread(void *arg)
{
	size_t i, n = 16 * MIB / 4000;

	(void)arg;
	for (i = 0; i < n; i++) {
		char *p = malloc(4000);

		if (!p)
			die("malloc");
		memset(p, 2, 4000);
	}
	return park();
}

static void arenas(void)
{
	pthread_t t;

	started = 0;
	for (int i = 0; i < 8; i++)
		if (pthread_create(&t, NULL, arena_thread, NULL) != 0)
			die("pthread_create");
	wait_started(8);
	printf("truth heap_inuse %zu\n", (size_t)8 * (16 * MIB / 4000) * 4000);
}

static void bigblocks(void)
{
	for (int i = 0; i < 8; i++) {
		char *p = malloc(16 * MIB);

		if (!p)
			die("malloc");
		memset(p, 3, 16 * MIB);
	}
	printf("truth heap_inuse %zu\n", (size_t)8 * 16 * MIB);
}

/* 64 MiB at a 64 MiB-aligned address: the shape of a full glibc arena heap,
 * which palloc-explain must not take for one. */
static void anon_mmap(void)
{
	size_t len = 64 * MIB;
	char *m = mmap(NULL, 2 * len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
	     *p;
	size_t head;

	if (m == MAP_FAILED)
		die("mmap");
	p = (char *)(((unsigned long)m + len - 1) & ~(unsigned long)(len - 1));
	head = (size_t)(p - m);
	if (head)
		munmap(m, head);
	munmap(p + len, len - head);
	memset(p, 4, 64 * MIB);
	printf("truth direct_mmap %zu\n", (size_t)64 * MIB);
}

/* Write 1 MiB of this thread's stack (not optimized away: volatile). */
static void *stack_thread(void *arg)
{
	volatile char buf[MIB];

	(void)arg;
	for (size_t i = 0; i < sizeof(buf); i += 512)
		buf[i] = 5;
	return park();
}

static void stacks(void)
{
	pthread_t t;
	int n = 16;

	started = 0;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t, NULL, stack_thread, NULL) != 0)
			die("pthread_create");
	wait_started(n);
	printf("truth thread_stacks %zu\n", (size_t)n * MIB);
}

/* What file() read: volatile and global, so that no read is optimized
 * away and no compiler calls it unused. */
static volatile unsigned long file_sum;

static void file(const char *path)
{
	size_t len = 100 * MIB, i;
	static char block[MIB];
	unsigned char *p;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		die(path);
	memset(block, 6, sizeof(block));
	for (i = 0; i < len; i += sizeof(block))
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
			die("write");
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap");
	close(fd);
	for (i = 0; i < len; i += 4096)
		file_sum += p[i];
	printf("truth mapped_files %zu\n", len);
}

/*
 * Until stdin ends (when it is a pipe or terminal) or SECONDS pass. It
 * waits as servers and interpreters do, in ppoll(2) or nanosleep(2): the
 * agent takes the allocator's figures there (an idle point, palloc(7)).
 */
static void wait_end(int seconds)
{
	struct stat st;
	struct pollfd pfd = {.fd = 0, .events = POLLIN};
	struct timespec ts = {.tv_sec = seconds};
	char buf[256];

	if (fstat(0, &st) == 0 &&
	    (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) ||
	     S_ISSOCK(st.st_mode)) &&
	    !(S_ISCHR(st.st_mode) && !isatty(0))) {
		while (ppoll(&pfd, 1, &ts, NULL) > 0)
			if (read(0, buf, sizeof(buf)) <= 0)
				return;
		return;
	}
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	const char *path = "explain-file.dat";
	int seconds = 300, i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
			seconds = (int)strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--file") == 0 && i + 1 < argc)
			path = argv[++i];
		else if (strcmp(argv[i], "frag") == 0)
			frag();
		else if (strcmp(argv[i], "arenas") == 0)
			arenas();
		else if (strcmp(argv[i], "bigblocks") == 0)
			bigblocks();
		else if (strcmp(argv[i], "mmap") == 0)
			anon_mmap();
		else if (strcmp(argv[i], "stacks") == 0)
			stacks();
		else if (strcmp(argv[i], "file") == 0)
			file(path);
		else {
			fprintf(stderr, "explain-workload: unknown '%s'\n",
				argv[i]);
			return 2;
		}
	}
	printf("ready\n");
	fflush(stdout);
	wait_end(seconds);
	return 0;
}
