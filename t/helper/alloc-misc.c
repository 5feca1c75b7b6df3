/* SPDX-License-Identifier: MIT */
/* Edge cases the agent must not change: errno, realloc(p, 0), overflow, exec.
 */
#include "common.h"

#include <malloc.h>
#include <unistd.h>

/*
 * Each mode checks what a program sees and prints "ok NAME" or
 * "FAIL NAME: why" lines; exit status 1 when anything failed. Run the same
 * binary with and without the agent: the output must be identical.
 * Modes: errno, realloc0, overflow, align, exec PROG ARGS...
 */

static int failed;

static void check(bool cond, const char *name, const char *why)
{
	if (cond) {
		printf("ok %s\n", name);
	} else {
		printf("FAIL %s: %s\n", name, why);
		failed = 1;
	}
}

static __attribute__((noinline)) void mode_errno(void)
{
	void *p, *q;

	errno = 1234;
	p = malloc(16);
	check(p && errno == 1234, "malloc keeps errno", "errno changed");
	errno = 4321;
	free(p);
	check(errno == 4321, "free keeps errno", "errno changed");
	errno = 0;
	p = malloc(SIZE_MAX / 2);
	check(!p && errno == ENOMEM, "huge malloc gives ENOMEM",
	      "no ENOMEM from a failed malloc");
	free(p); /* NULL unless the check failed */
	errno = 0;
	p = realloc(NULL, SIZE_MAX / 2);
	check(!p && errno == ENOMEM, "huge realloc gives ENOMEM",
	      "no ENOMEM from a failed realloc");
	free(p);
	p = malloc(64);
	errno = 0;
	q = realloc(p, SIZE_MAX / 2);
	check(!q && errno == ENOMEM,
	      "failed realloc keeps the block and gives ENOMEM", "bad");
	if (q)
		p = q;
	memset(p, 1, 64); /* still ours */
	free(p);
	errno = 777;
	p = calloc(10, 10);
	check(p && errno == 777, "calloc keeps errno", "errno changed");
	free(p);
	errno = 0;
	p = aligned_alloc(64, SIZE_MAX / 2);
	check(!p && errno == ENOMEM, "huge aligned_alloc gives ENOMEM", "bad");
}

static __attribute__((noinline)) void *site_realloc0_alloc(void)
{
	return malloc(9001);
}

static void mode_realloc0(void)
{
	void *p = site_realloc0_alloc();
	void *q;

	memset(p, 2, 9001);
	q = realloc(p, 0);
	/* glibc frees and returns NULL; other allocators may return a
	 * minimum block, which must then be freeable. */
	free(q);
	check(true, "realloc(p, 0)", "");
	printf("site realloc0: 1 9001 0 0\n");
	free(NULL);
	check(true, "free(NULL)", "");
}

static void mode_overflow(void)
{
	/* volatile: the compiler must not see the overflow coming */
	volatile size_t half = SIZE_MAX / 2;
	void *p;

	errno = 0;
	p = calloc(half, 4);
	check(!p && errno == ENOMEM, "calloc overflow gives NULL, ENOMEM",
	      "calloc overflow not refused");
	errno = 0;
	free(p);
	p = reallocarray(NULL, half, 4);
	check(!p && errno == ENOMEM, "reallocarray overflow gives ENOMEM",
	      "reallocarray overflow not refused");
	free(p);
	p = calloc(1000, 1000);
	check(p != NULL, "calloc 1e6 zeroed", "NULL");
	if (p) {
		bool zero = true;

		for (size_t i = 0; i < 1000000; i += 997)
			zero &= ((char *)p)[i] == 0;
		check(zero, "calloc memory is zero", "not zero");
	}
	free(p);
}

static void mode_align(void)
{
	static const size_t aligns[] = {16, 32, 64, 256, 4096, 65536};
	void *p;

	for (size_t i = 0; i < ARRAY_SIZE(aligns); i++) {
		size_t a = aligns[i];
		char name[64];

		snprintf(name, sizeof(name), "posix_memalign %zu", a);
		check(posix_memalign(&p, a, 100) == 0 && (uintptr_t)p % a == 0,
		      name, "misaligned");
		free(p);
		snprintf(name, sizeof(name), "aligned_alloc %zu", a);
		p = aligned_alloc(a, a * 2);
		check(p && (uintptr_t)p % a == 0, name, "misaligned");
		free(p);
		snprintf(name, sizeof(name), "memalign %zu", a);
		p = memalign(a, 100);
		check(p && (uintptr_t)p % a == 0, name, "misaligned");
		free(p);
	}
	check(posix_memalign(&p, 3, 100) == EINVAL, "posix_memalign EINVAL",
	      "bad alignment accepted");
	p = valloc(10);
	check(p && (uintptr_t)p % (uintptr_t)sysconf(_SC_PAGESIZE) == 0,
	      "valloc", "misaligned");
	free(p);
	p = pvalloc(10);
	check(p && (uintptr_t)p % (uintptr_t)sysconf(_SC_PAGESIZE) == 0,
	      "pvalloc", "misaligned");
	free(p);
	p = malloc(100);
	check(malloc_usable_size(p) >= 100, "malloc_usable_size", "too small");
	free(p);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (strcmp(mode, "errno") == 0) {
		mode_errno();
	} else if (strcmp(mode, "realloc0") == 0) {
		mode_realloc0();
	} else if (strcmp(mode, "overflow") == 0) {
		mode_overflow();
	} else if (strcmp(mode, "align") == 0) {
		mode_align();
	} else if (strcmp(mode, "exec") == 0 && argc > 2) {
		void *p = malloc(100);

		free(p);
		fflush(stdout);
		execvp(argv[2], argv + 2);
		perror("execvp");
		return 127;
	} else {
		fprintf(stderr, "alloc-misc: unknown mode '%s'\n", mode);
		return 2;
	}
	return failed;
}
