/* SPDX-License-Identifier: MIT */
/* Unit test of libcore/unwind: 60-deep recursion without frame pointers. */
#include "common.h"

#include <dlfcn.h>
#include <pthread.h>

#include "msg.h"
#include "tap.h"
#include "unwind.h"

/*
 * This file is compiled -O2 -fomit-frame-pointer (mk/examples.am), like
 * Debian's binaries: the recursion below has no frame-pointer chain, so
 * the fp unwinder cannot follow it while dwarf and auto must.
 */

#define DEPTH 60
#define MAXPCS 128

/* The walk taken at the leaf of one recursion, in one mode. */
struct walk {
	enum unwind_mode mode;
	uintptr_t pcs[MAXPCS];
	size_t n;
	uintptr_t skipped[MAXPCS];
	size_t n_skipped;
};

/* Exported (the test links with -rdynamic) so that dladdr names them. */
int deep_recurse(int depth, struct walk *w);
int deep_leaf(struct walk *w);
int main(void);
void *deep_thread(void *arg);
void *stress_thread(void *arg);
int stress_recurse(int depth, size_t *minmax);
size_t garbage_rbp_walk(uintptr_t garbage, uintptr_t *pcs, size_t max);

/*
 * One call site for every mode, so that pcs[0] must be the same return
 * address whatever the unwinder.
 */
__attribute__((noinline)) int deep_leaf(struct walk *w)
{
	if (unwind_init(w->mode) < 0)
		return -1;
	w->n = unwind_backtrace(w->pcs, MAXPCS, 0);
	w->n_skipped = unwind_backtrace(w->skipped, MAXPCS, 1);
	return 0;
}

/* The asm after the call keeps GCC from turning the recursion into a loop. */
__attribute__((noinline)) int deep_recurse(int depth, struct walk *w)
{
	int r;

	if (depth <= 1)
		r = deep_leaf(w);
	else
		r = deep_recurse(depth - 1, w);
	__asm__ volatile("" : "+r"(r));
	return r;
}

static const char *sym_name(uintptr_t pc)
{
	Dl_info info;

	/* pc - 1: the call instruction, inside the caller even at its end. */
	if (dladdr((void *)(pc - 1), &info) == 0 || info.dli_sname == NULL)
		return "?";
	return info.dli_sname;
}

static size_t count_name(const struct walk *w, const char *name)
{
	size_t c = 0;

	for (size_t i = 0; i < w->n; i++)
		if (!strcmp(sym_name(w->pcs[i]), name))
			c++;
	return c;
}

static void describe(const struct walk *w, const char *where)
{
	printf("# %s %s: %zu frames:", where, unwind_mode_name(w->mode), w->n);
	for (size_t i = 0; i < w->n && i < 8; i++)
		printf(" %s", sym_name(w->pcs[i]));
	if (w->n > 8)
		printf(" ... %s", sym_name(w->pcs[w->n - 1]));
	putchar('\n');
}

static struct walk walks[3];

static void run_modes(const char *where)
{
	static const enum unwind_mode modes[] = {UNWIND_FP, UNWIND_DWARF,
						 UNWIND_AUTO};

	for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
		memset(&walks[i], 0, sizeof(walks[i]));
		walks[i].mode = modes[i];
		tap_ok(deep_recurse(DEPTH, &walks[i]) == 0, "%s %s: walk ran",
		       where, unwind_mode_name(modes[i]));
		describe(&walks[i], where);
	}
}

/* dwarf and auto must see everything; fp only its first frame for sure. */
static void check_modes(const char *where, const char *root)
{
	for (size_t i = 0; i < 3; i++) {
		const struct walk *w = &walks[i];
		const char *m = unwind_mode_name(w->mode);

		tap_ok(w->n >= 1 && !strcmp(sym_name(w->pcs[0]), "deep_leaf"),
		       "%s %s: first frame is deep_leaf (got %s)", where, m,
		       w->n ? sym_name(w->pcs[0]) : "nothing");
		tap_ok(w->n >= 1 && w->pcs[0] == walks[1].pcs[0],
		       "%s %s: first frame is the same return address as "
		       "dwarf's",
		       where, m);
		tap_ok(w->n_skipped + 1 == w->n ||
			       (w->n_skipped == w->n && w->n == MAXPCS),
		       "%s %s: skip 1 gives one frame less (%zu, %zu)", where,
		       m, w->n_skipped, w->n);
		if (w->mode == UNWIND_FP) {
			printf("# %s fp: %zu frames, %zu deep_recurse, "
			       "%zu %s\n",
			       where, w->n, count_name(w, "deep_recurse"),
			       count_name(w, root), root);
			continue;
		}
		tap_ok(w->n >= DEPTH + 1, "%s %s: at least %d frames (got %zu)",
		       where, m, DEPTH + 1, w->n);
		tap_ok(count_name(w, "deep_recurse") == DEPTH,
		       "%s %s: %d deep_recurse frames (got %zu)", where, m,
		       DEPTH, count_name(w, "deep_recurse"));
		tap_ok(count_name(w, root) == 1, "%s %s: reaches %s", where, m,
		       root);
		tap_ok(w->n >= 2 && w->pcs[1] == walks[1].pcs[1] &&
			       w->pcs[DEPTH] == walks[1].pcs[DEPTH],
		       "%s %s: same addresses as dwarf", where, m);
	}
}

void *deep_thread(void *arg)
{
	(void)arg;
	run_modes("thread");
	__asm__ volatile("" ::: "memory");
	return NULL;
}

/*
 * Calls unwind_backtrace with rbp holding `garbage`, as it does in code
 * that uses rbp as a general register: the fp walk reads that as the
 * caller's frame and must stop without faulting.
 */
__attribute__((noinline)) size_t garbage_rbp_walk(uintptr_t garbage,
						  uintptr_t *pcs, size_t max)
{
	register uintptr_t rbp __asm__("rbp") = garbage;
	size_t n;

	__asm__ volatile("" : "+r"(rbp));
	n = unwind_backtrace(pcs, max, 0);
	__asm__ volatile("" : : "r"(rbp));
	return n;
}

static void check_garbage(void)
{
	uintptr_t lo = 0, hi = 0, pcs[MAXPCS];
	uintptr_t fake[8];
	int here;
	size_t n;

	tap_ok(unwind_find_vma((uintptr_t)&here, &lo, &hi) == 0 &&
		       (uintptr_t)&here >= lo && (uintptr_t)&here < hi,
	       "unwind_find_vma finds the stack");
	tap_ok(unwind_find_vma(0, &lo, &hi) < 0, "address 0 is in no mapping");
	if (unwind_init(UNWIND_FP) < 0)
		return;
	unwind_find_vma((uintptr_t)&here, &lo, &hi);
	/* a fake frame above us whose saved rbp points back down */
	fake[0] = (uintptr_t)&fake[0] - 64;
	fake[1] = 0x1234567;
	fake[2] = 0;
	const uintptr_t bad[] = {
		0,
		1,
		0xdeadbeef,
		(uintptr_t)-8,
		(uintptr_t)&here - 4096, /* below: not increasing */
		hi - 8,			 /* record past the top */
		hi,			 /* outside */
		(uintptr_t)&fake[0] + 1, /* misaligned */
		(uintptr_t)&fake[0],	 /* loops back down */
		(uintptr_t)main,	 /* code, not stack */
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		n = garbage_rbp_walk(bad[i], pcs, MAXPCS);
		tap_ok(n >= 1 && n <= 2 &&
			       !strcmp(sym_name(pcs[0]), "garbage_rbp_walk"),
		       "fp with rbp=%#lx: stops after %zu frames",
		       (unsigned long)bad[i], n);
	}
}

/*
 * Many threads walking at once, each with its first walk (libunwind's
 * per-thread caches, the fp stack bounds) racing the others': every walk
 * of a thread must return the same number of frames.
 */
#define STRESS_THREADS 8
#define STRESS_WALKS 2000

__attribute__((noinline)) int stress_recurse(int depth, size_t *minmax)
{
	uintptr_t pcs[MAXPCS];
	int r = 0;

	if (depth > 1) {
		r = stress_recurse(depth - 1, minmax);
	} else {
		for (int i = 0; i < STRESS_WALKS; i++) {
			size_t n = unwind_backtrace(pcs, MAXPCS, 0);

			if (n < minmax[0])
				minmax[0] = n;
			if (n > minmax[1])
				minmax[1] = n;
		}
	}
	__asm__ volatile("" : "+r"(r));
	return r;
}

void *stress_thread(void *arg)
{
	stress_recurse(20, arg);
	__asm__ volatile("" ::: "memory");
	return NULL;
}

static void check_stress(enum unwind_mode mode)
{
	pthread_t th[STRESS_THREADS];
	size_t minmax[STRESS_THREADS][2];
	size_t lo = SIZE_MAX, hi = 0;
	int started = 0;

	if (unwind_init(mode) < 0)
		return;
	for (int i = 0; i < STRESS_THREADS; i++) {
		minmax[i][0] = SIZE_MAX;
		minmax[i][1] = 0;
		if (pthread_create(&th[i], NULL, stress_thread, minmax[i]) == 0)
			started++;
	}
	for (int i = 0; i < started; i++) {
		pthread_join(th[i], NULL);
		if (minmax[i][0] < lo)
			lo = minmax[i][0];
		if (minmax[i][1] > hi)
			hi = minmax[i][1];
	}
	tap_ok(started == STRESS_THREADS && lo == hi &&
		       (mode == UNWIND_FP || lo >= 21),
	       "%s: %d threads x %d walks at once, all %zu..%zu frames",
	       unwind_mode_name(mode), started, STRESS_WALKS, lo, hi);
}

int main(void)
{
	enum unwind_mode m = UNWIND_FP;
	pthread_t th;

	tap_ok(unwind_parse_mode("dwarf", &m) == 0 && m == UNWIND_DWARF,
	       "parse dwarf");
	tap_ok(unwind_parse_mode("auto", &m) == 0 && m == UNWIND_AUTO,
	       "parse auto");
	tap_ok(unwind_parse_mode("fp", &m) == 0 && m == UNWIND_FP, "parse fp");
	tap_ok(unwind_parse_mode("frame", &m) < 0 && m == UNWIND_FP &&
		       strstr(msg_last(), "'frame'") != NULL,
	       "parse rejects 'frame': %s", msg_last());
	tap_ok(!strcmp(unwind_mode_name(UNWIND_DWARF), "dwarf"), "mode name");

	run_modes("main");
	check_modes("main", "main");

	tap_ok(pthread_create(&th, NULL, deep_thread, NULL) == 0 &&
		       pthread_join(th, NULL) == 0,
	       "thread ran");
	check_modes("thread", "deep_thread");

	check_garbage();
	check_stress(UNWIND_AUTO);
	check_stress(UNWIND_DWARF);
	check_stress(UNWIND_FP);

	return tap_done();
}
