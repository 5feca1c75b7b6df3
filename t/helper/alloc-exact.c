/* SPDX-License-Identifier: MIT */
/* Allocations with known counts and sizes, for the agent's exact-value tests.
 */
#include "common.h"

#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * Every site uses a size no other site (and, in practice, nothing in libc)
 * uses, so a test finds each site's sample in `pprof -raw` output by its
 * values alone: the truth line printed for a site is
 *
 *	site NAME: ALLOC_OBJECTS ALLOC_SPACE INUSE_OBJECTS INUSE_SPACE
 *
 * exactly as the agent must report it at PALLOC_SAMPLE_RATE=1 (requested
 * bytes). Sites are separate noinline functions with one call line each.
 * Modes: basic, threads [N], fork, forkstress [N], dlopen LIB, many [N],
 * peak, sampled, sleep MS, tick MS, dump PATH, none, freeonly [N], grow,
 * kill. tick is sleep that also allocates (and frees) 16 bytes every
 * 10 ms; kill is basic, then SIGKILL to itself (status 137, nothing of
 * exit runs).
 */

#define NOINLINE __attribute__((noinline))

static void *keep[4096];
static size_t n_keep;

/* Loop bounds the compiler cannot see, so that no loop is unrolled into
 * several call sites (each site must be one stack). */
static volatile int v2 = 2, v3 = 3, v4 = 4, v5 = 5, v7 = 7, v9 = 9, v10 = 10,
		    v11 = 11, v50 = 50, v100 = 100;

static void truth(const char *site, long ao, long as, long io, long is)
{
	printf("site %s: %ld %ld %ld %ld\n", site, ao, as, io, is);
}

static NOINLINE void site_malloc(void)
{
	void *p[10];

	for (int i = 0; i < v10; i++)
		p[i] = malloc(1001);
	for (int i = 0; i < v4; i++)
		free(p[i]);
	for (int i = 4; i < v10; i++)
		keep[n_keep++] = p[i];
	truth("malloc", 10, 10010, 6, 6006);
}

static NOINLINE void site_calloc(void)
{
	for (int i = 0; i < v5; i++)
		keep[n_keep++] = calloc(3, 347);
	truth("calloc", 5, 5205, 5, 5205);
}

static NOINLINE void *site_realloc_first(void)
{
	return realloc(NULL, 2001);
}

static NOINLINE void *site_realloc_grow(void *p)
{
	return realloc(p, 4003);
}

static NOINLINE void site_realloc(void)
{
	void *p = site_realloc_first();

	keep[n_keep++] = site_realloc_grow(p);
	truth("realloc-first", 1, 2001, 0, 0);
	truth("realloc-grow", 1, 4003, 1, 4003);
}

static NOINLINE void site_reallocarray(void)
{
	keep[n_keep++] = reallocarray(NULL, 7, 1009);
	truth("reallocarray", 1, 7063, 1, 7063);
}

static NOINLINE void site_aligned(void)
{
	void *p;

	for (int i = 0; i < v3; i++) {
		if (posix_memalign(&p, 64, 3011) == 0)
			keep[n_keep++] = p;
	}
	truth("posix_memalign", 3, 9033, 3, 9033);
	for (int i = 0; i < v2; i++)
		free(memalign(256, 3013));
	truth("memalign", 2, 6026, 0, 0);
	keep[n_keep++] = aligned_alloc(128, 3072);
	truth("aligned_alloc", 1, 3072, 1, 3072);
	keep[n_keep++] = valloc(5009);
	truth("valloc", 1, 5009, 1, 5009);
}

static NOINLINE void site_strdup(void)
{
	/* Allocations libc makes for the caller (strdup calls malloc). */
	char s[1500];

	memset(s, 'x', sizeof(s) - 1);
	s[sizeof(s) - 1] = '\0';
	for (int i = 0; i < v3; i++)
		keep[n_keep++] = strdup(s);
	truth("strdup", 3, 4500, 3, 4500);
}

/* C++ operators looked up at run time: with libstdc++ linked they forward
 * to it, without they fall back to malloc/free in the agent. */
static NOINLINE void site_cxx(void)
{
	void *(*nw)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "_Znwm");
	void *(*na)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "_Znam");
	void (*dl)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "_ZdlPv");
	void (*dls)(void *, size_t) =
		(void (*)(void *, size_t))dlsym(RTLD_DEFAULT, "_ZdlPvm");
	void (*da)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "_ZdaPv");
	void *(*nwa)(size_t, size_t) = (void *(*)(size_t, size_t))dlsym(
		RTLD_DEFAULT, "_ZnwmSt11align_val_t");
	void (*dla)(void *, size_t) = (void (*)(void *, size_t))dlsym(
		RTLD_DEFAULT, "_ZdlPvSt11align_val_t");
	void *p[7];

	if (!nw || !na || !dl || !dls || !da || !nwa || !dla) {
		printf("no C++ operators\n");
		return;
	}
	for (int i = 0; i < v7; i++)
		p[i] = nw(5003);
	for (int i = 0; i < v3; i++)
		dl(p[i]);
	for (int i = 3; i < v5; i++)
		dls(p[i], 5003);
	truth("new", 7, 35021, 2, 10006);
	for (int i = 0; i < v4; i++)
		p[i] = na(5017);
	for (int i = 0; i < v4; i++)
		da(p[i]);
	truth("new[]", 4, 20068, 0, 0);
	p[0] = nwa(5021, 64);
	if ((uintptr_t)p[0] % 64 != 0)
		printf("misaligned operator new\n");
	keep[n_keep++] = p[0];
	p[1] = nwa(5023, 128);
	dla(p[1], 128);
	truth("new-aligned", 1, 5021, 1, 5021);
	truth("new-aligned-freed", 1, 5023, 0, 0);
}

static void basic(void)
{
	site_malloc();
	site_calloc();
	site_realloc();
	site_reallocarray();
	site_aligned();
	site_strdup();
	site_cxx();
}

struct worker {
	int id;
	pthread_barrier_t *bar;
};

static NOINLINE void *worker_main(void *arg)
{
	struct worker *w = arg;
	char name[16];
	void *p[100];

	snprintf(name, sizeof(name), "palloc-w%d", w->id);
	pthread_setname_np(pthread_self(), name);
	/* Let the rename be seen: the agent re-reads names every 10 ms. */
	usleep(30000);
	pthread_barrier_wait(w->bar);
	for (int i = 0; i < v100; i++)
		p[i] = malloc(6001);
	for (int i = 0; i < v50; i++)
		free(p[i]);
	return NULL;
}

static void threads(int n)
{
	pthread_t th[64];
	struct worker w[64];
	pthread_barrier_t bar;

	if (n > 64)
		n = 64;
	pthread_barrier_init(&bar, NULL, (unsigned)n);
	for (int i = 0; i < n; i++) {
		w[i].id = i;
		w[i].bar = &bar;
		pthread_create(&th[i], NULL, worker_main, &w[i]);
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	/* Each thread is its own sample (thread label): 100 6001-byte
	 * blocks, 50 still live. */
	truth("thread", 100, 600100, 50, 300050);
}

static NOINLINE void child_allocs(void)
{
	for (int i = 0; i < v11; i++)
		keep[n_keep++] = malloc(6007);
}

static int do_fork(void)
{
	pid_t pid;
	int st;

	for (int i = 0; i < v9; i++)
		keep[n_keep++] = malloc(6011);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		child_allocs();
		printf("child %d\n", (int)getpid());
		exit(0);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	printf("parent %d\n", (int)getpid());
	truth("parent", 9, 54099, 9, 54099);
	truth("child", 11, 66077, 11, 66077);
	return 0;
}

static int do_dlopen(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW);
	void (*fn)(void);

	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	fn = (void (*)(void))dlsym(h, "dlalloc_run");
	if (!fn)
		return 1;
	fn();
	truth("dlopen", 13, 104117, 13, 104117);
	return 0;
}

/* Threads keep allocating while the main thread forks; every child
 * allocates, frees and exits through exit() (so it writes a profile). */
static void *churn_main(void *arg)
{
	volatile int *stop = arg;

	while (!*stop) {
		void *p = malloc(64);

		free(p);
	}
	return NULL;
}

static int fork_stress(int n)
{
	pthread_t th[4];
	volatile int stop = 0;
	int bad = 0;

	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, churn_main, (void *)&stop);
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			void *p = malloc(7001);

			free(p);
			keep[n_keep++] = malloc(7003);
			exit(0);
		}
		if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			bad++;
	}
	stop = 1;
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	printf("children failed: %d\n", bad);
	return bad != 0;
}

/* PALLOC_PEAK: 100 blocks at once (the peak), all freed, then 10. */
static NOINLINE void peak(void)
{
	void *p[100];

	for (int i = 0; i < v100; i++)
		p[i] = malloc(10007);
	for (int i = 0; i < v100; i++)
		free(p[i]);
	for (int i = 0; i < v10; i++)
		keep[n_keep++] = malloc(10009);
	truth("peak-site", 100, 1000700, 0, 0);
	truth("after-peak", 10, 100090, 10, 100090);
}

/* For the statistical test at the default rate: a thread named "big"
 * allocates and frees 400 blocks of 1 MiB, one named "small" 1000000
 * blocks of 100 bytes. */
static void *big_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "big");
	usleep(30000);
	for (int i = 0; i < 400; i++) {
		void *p = malloc(1 << 20);

		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
	return NULL;
}

static void *small_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "small");
	usleep(30000);
	for (int i = 0; i < 1000000; i++) {
		void *p = malloc(100);

		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
	return NULL;
}

static void sampled(void)
{
	pthread_t a, b;

	pthread_create(&a, NULL, big_main, NULL);
	pthread_join(a, NULL);
	pthread_create(&b, NULL, small_main, NULL);
	pthread_join(b, NULL);
	printf("big: 400 %d\n", 400 << 20);
	printf("small: 1000000 100000000\n");
}

/* freeonly: main allocates n blocks, a thread that allocates nothing
 * frees them all; its frees must count in free_count. */
struct freeonly {
	void **p;
	long n;
};

static void *freeonly_main(void *arg)
{
	struct freeonly *f = arg;

	for (long i = 0; i < f->n; i++)
		free(f->p[i]);
	return NULL;
}

static int freeonly(long n)
{
	struct freeonly f = {.n = n};
	pthread_t th;

	f.p = malloc((size_t)n * sizeof(*f.p));
	if (!f.p)
		return 1;
	for (long i = 0; i < n; i++)
		f.p[i] = malloc(4099);
	if (pthread_create(&th, NULL, freeonly_main, &f) != 0)
		return 1;
	pthread_join(th, NULL);
	free(f.p);
	printf("freed by the thread: %ld\n", n);
	return 0;
}

/* grow: 30 steps of 100 ms, each adding ten 1 MiB blocks (300 MiB of
 * address space, one page touched each), then all freed: the peak is
 * 300 blocks; PALLOC_PEAK=1 writes its peak file about once a second. */
static NOINLINE void grow_site(void **p)
{
	*p = malloc(1 << 20);
	if (*p)
		*(volatile char *)*p = 1;
}

static void grow(void)
{
	static void *p[300];

	for (int i = 0; i < 300; i++) {
		grow_site(&p[i]);
		if (i % 10 == 9)
			usleep(100000);
	}
	for (int i = 0; i < 300; i++)
		free(p[i]);
	usleep(1500000);
	truth("grow_site", 300, 300L << 20, 0, 0);
}

static NOINLINE void many(long n)
{
	/* A churn loop for overhead checks: n malloc(32)+free pairs. */
	for (long i = 0; i < n; i++) {
		void *p = malloc(32);

		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "basic";

	if (strcmp(mode, "basic") == 0)
		basic();
	else if (strcmp(mode, "kill") == 0) {
		basic();
		fflush(stdout);
		kill(getpid(), SIGKILL);
	} else if (strcmp(mode, "threads") == 0)
		threads(argc > 2 ? (int)strtol(argv[2], NULL, 10) : 8);
	else if (strcmp(mode, "fork") == 0)
		return do_fork();
	else if (strcmp(mode, "dlopen") == 0 && argc > 2)
		return do_dlopen(argv[2]);
	else if (strcmp(mode, "many") == 0)
		many(argc > 2 ? strtol(argv[2], NULL, 10) : 1000000);
	else if (strcmp(mode, "none") == 0)
		return 0;
	else if (strcmp(mode, "forkstress") == 0)
		return fork_stress(argc > 2 ? (int)strtol(argv[2], NULL, 10)
					    : 20);
	else if (strcmp(mode, "peak") == 0)
		peak();
	else if (strcmp(mode, "sampled") == 0)
		sampled();
	else if (strcmp(mode, "freeonly") == 0)
		return freeonly(argc > 2 ? strtol(argv[2], NULL, 10) : 1000);
	else if (strcmp(mode, "grow") == 0)
		grow();
	else if (strcmp(mode, "dump") == 0 && argc > 2) {
		/* palloc_dump(PATH), found at run time so that the program
		 * also runs without the agent ("no agent", exit 3). */
		int (*dump)(const char *) = (int (*)(const char *))dlsym(
			RTLD_DEFAULT, "palloc_dump");

		site_malloc();
		if (!dump) {
			printf("no agent\n");
			return 3;
		}
		if (dump(argv[2]) != 0 || dump(NULL) != 0) {
			perror("palloc_dump");
			return 1;
		}
		while (n_keep > 0)
			free(keep[--n_keep]);
	} else if (strcmp(mode, "sleep") == 0) {
		site_malloc();
		usleep((useconds_t)strtol(argc > 2 ? argv[2] : "1000", NULL,
					  10) *
		       1000);
	} else if (strcmp(mode, "tick") == 0) {
		long ms = strtol(argc > 2 ? argv[2] : "1000", NULL, 10);

		site_malloc();
		for (long t = 0; t < ms; t += 10) {
			free(malloc(16));
			usleep(10000);
		}
	} else {
		fprintf(stderr, "alloc-exact: unknown mode '%s'\n", mode);
		return 2;
	}
	return 0;
}
