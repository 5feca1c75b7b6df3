/* SPDX-License-Identifier: MIT */
/*
 * Everything at once under the agent (t/3017): allocation churn in several
 * threads, dlopen/dlclose, fork (exit, _exit, exec), signals and thread
 * create/exit churn, for SECONDS; then it leaves KEEP blocks of KEEP_SIZE
 * bytes live from one stack and prints its own tally. It creates
 * stress.ready once its SIGUSR1 handler is in place and stress.done half a
 * second before it stops.
 *
 * usage: stress SECONDS THREADS DLLIB [FORK_PAUSE_US]
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 256
#define KEEP 1000
#define KEEP_SIZE 4321

static volatile int stop;
static volatile sig_atomic_t signals_seen;
static unsigned long tally_allocs, tally_frees, tally_forks, tally_execs,
	tally_dl, tally_threads, tally_sent, tally_bad;
static const char *dllib;
static long fork_pause_us = 150000;
static pthread_key_t key;
/*
 * fork overlaps dlopen/dlclose on purpose: a child may inherit an object
 * half unloaded, or miss one its parent's agent saw at the prepare handler
 * (agent/modtab.c). Its children leave by _exit only, as exit() would wait
 * for ever on glibc's __exit_funcs_lock held by a dlclose at the fork.
 */

static void *kept[KEEP];

static void add(unsigned long *c, unsigned long n)
{
	__atomic_add_fetch(c, n, __ATOMIC_RELAXED);
}

static unsigned rnd(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static void nap_us(long us)
{
	struct timespec ts = {us / 1000000, us % 1000000 * 1000};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Async-signal-safe: count, and one write(2) to /dev/null. */
static int devnull = -1;
static void on_usr1(int sig)
{
	int e = errno;

	(void)sig;
	signals_seen++;
	if (write(devnull, "s", 1) < 0)
		errno = e;
	errno = e;
}

static size_t rnd_size(unsigned *s)
{
	unsigned r = rnd(s);

	if (r % 64 == 0)
		return 65536 + r % 300000; /* some mmap-sized blocks */
	return 1 + r % 2048;
}

/* Allocation churn: SLOTS blocks, each op frees or (re)allocates one. */
static void *churn(void *arg)
{
	void *slot[SLOTS] = {0};
	unsigned s = (unsigned)(unsigned long)arg * 7919u + 1;
	unsigned long a = 0, f = 0;

	while (!stop) {
		for (int k = 0; k < 1000; k++) {
			unsigned i = rnd(&s) % SLOTS, op = rnd(&s) % 6;
			size_t n = rnd_size(&s);
			void *p;

			if (slot[i] && op < 2) {
				free(slot[i]);
				slot[i] = NULL;
				f++;
				continue;
			}
			if (slot[i]) {
				p = realloc(slot[i], n);
				if (p)
					slot[i] = p;
				else
					add(&tally_bad, 1);
				continue;
			}
			switch (op) {
			case 0:
				p = malloc(n);
				break;
			case 1:
				p = calloc(n / 8 + 1, 8);
				break;
			case 2:
				p = realloc(NULL, n);
				break;
			case 3:
				if (posix_memalign(&p, 64 << (rnd(&s) % 4), n))
					p = NULL;
				break;
			case 4:
				p = aligned_alloc(256,
						  (n + 255) & ~(size_t)255);
				break;
			default:
				p = malloc(n);
				break;
			}
			if (!p) {
				add(&tally_bad, 1);
				continue;
			}
			memset(p, 0x5a, n < 64 ? n : 64);
			slot[i] = p;
			a++;
		}
	}
	for (int i = 0; i < SLOTS; i++)
		if (slot[i]) {
			free(slot[i]);
			f++;
		}
	add(&tally_allocs, a);
	add(&tally_frees, f);
	return NULL;
}

static void *dl_loop(void *arg)
{
	(void)arg;
	while (!stop) {
		void *h, *p;
		void *(*fn)(void);

		h = dlopen(dllib, RTLD_NOW | RTLD_LOCAL);

		if (!h) {
			fprintf(stderr, "stress: dlopen: %s\n", dlerror());
			add(&tally_bad, 1);
			return NULL;
		}
		*(void **)&fn = dlsym(h, "stressdl_block");
		p = fn ? fn() : NULL;
		dlclose(h);
		free(p); /* freed after its stack's library is gone */
		add(&tally_allocs, 1);
		add(&tally_frees, 1);
		add(&tally_dl, 1);
		nap_us(2000);
	}
	return NULL;
}

static void *fork_loop(void *arg)
{
	unsigned n = 0;

	(void)arg;
	while (!stop) {
		pid_t pid;
		int st;

		pid = fork();

		if (pid < 0) {
			add(&tally_bad, 1);
			break;
		}
		if (pid == 0) {
			void *p[16];

			if (n % 3 == 2) {
				execl("/bin/true", "true", (char *)NULL);
				_exit(126);
			}
			for (int i = 0; i < 16; i++)
				p[i] = malloc(100 + (size_t)i);
			for (int i = 0; i < 8; i++)
				free(p[i]);
			/* exit() here waits forever, with or without the
			 * agent, when the fork caught another thread holding
			 * glibc's __exit_funcs_lock: _exit only (t/3016
			 * covers exit in children). */
			_exit(0);
		}
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "stress: child %d: status 0x%x\n",
				(int)pid, st);
			add(&tally_bad, 1);
		}
		add(n % 3 == 2 ? &tally_execs : &tally_forks, 1);
		n++;
		nap_us(fork_pause_us);
	}
	return NULL;
}

static void *signal_loop(void *arg)
{
	(void)arg;
	while (!stop) {
		kill(getpid(), SIGUSR1);
		add(&tally_sent, 1);
		nap_us(200);
	}
	return NULL;
}

static void key_dtor(void *p)
{
	free(p);
	add(&tally_frees, 1);
}

static void *short_thread(void *arg)
{
	void *p = malloc(48), *q = calloc(3, 100);

	(void)arg;
	pthread_setspecific(key, malloc(64)); /* freed by key_dtor */
	free(p);
	free(q);
	add(&tally_allocs, 3);
	add(&tally_frees, 2);
	if ((unsigned long)arg % 2)
		pthread_exit(NULL);
	return NULL;
}

static void *thread_loop(void *arg)
{
	unsigned long i = 0;

	(void)arg;
	while (!stop) {
		pthread_t t;
		pthread_attr_t at;
		int detach = i % 4 == 3;

		pthread_attr_init(&at);
		if (detach)
			pthread_attr_setdetachstate(&at,
						    PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &at, short_thread, (void *)i) == 0) {
			if (!detach)
				pthread_join(t, NULL);
			add(&tally_threads, 1);
		}
		pthread_attr_destroy(&at);
		i++;
		nap_us(500);
	}
	return NULL;
}

/* Tell the test script where we are (files in the current directory). */
static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0644);

	if (fd >= 0)
		close(fd);
}

/* The blocks left live at exit, all from this one stack. */
__attribute__((noinline)) static void keep_live(void)
{
	for (int i = 0; i < KEEP; i++)
		kept[i] = malloc(KEEP_SIZE);
	add(&tally_allocs, KEEP);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	pthread_t th[64], aux[4];
	double secs;
	int n;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: stress SECONDS THREADS DLLIB "
				"[FORK_PAUSE_US]\n");
		return 2;
	}
	secs = strtod(argv[1], NULL);
	n = (int)strtol(argv[2], NULL, 10);
	if (n < 1 || n > 64)
		n = 4;
	dllib = argv[3];
	if (argc == 5)
		fork_pause_us = strtol(argv[4], NULL, 10);
	devnull = open("/dev/null", O_WRONLY);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL); /* no SA_RESTART: EINTR everywhere */
	pthread_key_create(&key, key_dtor);
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, churn, (void *)(long)i);
	pthread_create(&aux[0], NULL, dl_loop, NULL);
	pthread_create(&aux[1], NULL, fork_loop, NULL);
	pthread_create(&aux[2], NULL, signal_loop, NULL);
	pthread_create(&aux[3], NULL, thread_loop, NULL);
	touch("stress.ready");
	nap_us((long)(secs * 1e6));
	touch("stress.done");
	nap_us(500000); /* outside queries in flight finish */
	stop = 1;
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 4; i++)
		pthread_join(aux[i], NULL);
	nap_us(20000); /* the last detached threads finish */
	keep_live();
	printf("tally: allocs %lu frees %lu keep %d keep_size %d forks %lu "
	       "execs %lu dlopens %lu threads %lu signals_sent %lu "
	       "signals_seen %d bad %lu\n",
	       tally_allocs, tally_frees, KEEP, KEEP_SIZE, tally_forks,
	       tally_execs, tally_dl, tally_threads, tally_sent,
	       (int)signals_seen, tally_bad);
	return tally_bad ? 1 : 0;
}
