/* SPDX-License-Identifier: MIT */
/* push-steady: a service that allocates known blocks at a steady pace
 * (t/4070: palloc-dump --push's windows). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * push-steady SIZE PER_BURST INTERVAL_MS HOLD
 *
 * Every INTERVAL_MS, push_burst() allocates PER_BURST blocks of SIZE
 * bytes, keeping the last HOLD of them (the oldest freed first), and
 * says "burst T0 T1 N" on stdout: CLOCK_REALTIME in ns before the first
 * malloc and after the last, N the bursts so far. "ready" first. Runs
 * until killed. Exit 2 on bad arguments.
 */

static void **ring;
static size_t hold, next, held;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) static void push_burst(size_t size, long per)
{
	for (long i = 0; i < per; i++) {
		if (held == hold) {
			free(ring[next]);
			held--;
		}
		ring[next] = malloc(size);
		if (ring[next])
			memset(ring[next], 3, size);
		next = (next + 1) % hold;
		held++;
	}
	__asm__ volatile("" ::: "memory");
}

static void say(const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(1, s, n);

		if (w <= 0)
			_exit(2);
		s += w;
		n -= (size_t)w;
	}
}

int main(int argc, char **argv)
{
	long size, per, interval_ms, h;
	char line[128];
	long long bursts = 0;

	if (argc != 5 || (size = atol(argv[1])) <= 0 ||
	    (per = atol(argv[2])) <= 0 || (interval_ms = atol(argv[3])) <= 0 ||
	    (h = atol(argv[4])) <= 0)
		return 2;
	hold = (size_t)h;
	ring = calloc(hold, sizeof(*ring));
	if (!ring)
		return 2;
	say("ready\n", 6);
	for (;;) {
		struct timespec ts = {interval_ms / 1000,
				      interval_ms % 1000 * 1000000};
		long long t0 = now_ns(), t1;
		int n;

		push_burst((size_t)size, per);
		t1 = now_ns();
		n = snprintf(line, sizeof(line), "burst %lld %lld %lld\n", t0,
			     t1, ++bursts);
		say(line, (size_t)n);
		nanosleep(&ts, NULL);
	}
}
