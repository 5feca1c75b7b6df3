/* SPDX-License-Identifier: MIT */
/* A deterministic program whose per-function heap profile is known exactly. */
#include "common.h"

#include "example.h"

/*
 * Built with the project's CFLAGS (default -g -O2). Each site function
 * below is EX_SITE (no inlining, no cloning), keeps or frees every pointer
 * through ex_keep() so the compiler cannot drop an allocation, and makes
 * no tail call into the allocator (the caller of malloc must be the site
 * itself). All sizes are at least 64 bytes, so at PALLOC_SAMPLE_RATE=1 a
 * sample's weight size/(1 - exp(-size)) is size exactly in a double.
 *
 * The sites and what each must show (bytes are requested bytes):
 *
 * site            calls                              alloc obj/bytes   inuse
 * obj/bytes churn_small     1000000 malloc 64..176, freed      1000000
 * 120000000   0 0 keep_medium     8000 malloc 4096, live             8000
 * 32768000       8000 32768000 zeroed_calloc   1000 calloc(100, 40), half freed
 * 1000 4000000        500 2000000 by release_half (another function)
 * grow_buffer     malloc 1024 then 14 reallocs to    15 33553408         1
 * 16777216 16 MiB: each realloc frees the old block and allocates the new size
 * at the realloc call (the agent's rule) aligned_blocks  300 aligned_alloc(64,
 * 2048), live  300 614400          300 614400 posix_aligned   100
 * posix_memalign(4096, 16384),   100 1638400         50 819200 odd ones freed
 * large_blocks    3 malloc 8 MiB live, 1 of 12 MiB   4 37748736          3
 * 25165824 freed
 *
 * The program computes these as it runs (example.h) and prints them at the
 * end, after every allocation above. Its other heap users are libc's own
 * (the dynamic loader, stdio if --help is printed); tests compare only the
 * functions named here.
 */

enum {
	S_CHURN,
	S_MEDIUM,
	S_CALLOC,
	S_GROW,
	S_ALIGNED,
	S_POSIX,
	S_LARGE,
	S_COUNT
};

static struct ex_site sites[S_COUNT] = {
	[S_CHURN] = {.name = "churn_small"},
	[S_MEDIUM] = {.name = "keep_medium"},
	[S_CALLOC] = {.name = "zeroed_calloc"},
	[S_GROW] = {.name = "grow_buffer"},
	[S_ALIGNED] = {.name = "aligned_blocks"},
	[S_POSIX] = {.name = "posix_aligned"},
	[S_LARGE] = {.name = "large_blocks"},
};

#define CHURN_COUNT 1000000
#define MEDIUM_COUNT 8000
#define CALLOC_COUNT 1000
#define GROW_STEPS 14
#define ALIGNED_COUNT 300
#define POSIX_COUNT 100
#define LARGE_LIVE 3

static void *medium[MEDIUM_COUNT];
static void *zeroed[CALLOC_COUNT];
static void *grown;
static void *aligned[ALIGNED_COUNT];
static void *posix[POSIX_COUNT];
static void *large[LARGE_LIVE];

EX_SITE void churn_small(void);
EX_SITE void keep_medium(void);
EX_SITE void zeroed_calloc(void);
EX_SITE void release_half(void);
EX_SITE void grow_buffer(void);
EX_SITE void aligned_blocks(void);
EX_SITE void posix_aligned(void);
EX_SITE void large_blocks(void);

EX_SITE void churn_small(void)
{
	for (size_t i = 0; i < CHURN_COUNT; i++) {
		size_t size = 64 + (i % 8) * 16;
		void *p = malloc(size);

		ex_check(p, "malloc");
		ex_keep(p);
		ex_alloc(&sites[S_CHURN], size);
		free(p);
		ex_free(&sites[S_CHURN], size);
	}
}

EX_SITE void keep_medium(void)
{
	for (size_t i = 0; i < MEDIUM_COUNT; i++) {
		medium[i] = ex_keep(malloc(4096));
		ex_check(medium[i], "malloc");
		ex_alloc(&sites[S_MEDIUM], 4096);
	}
}

EX_SITE void zeroed_calloc(void)
{
	for (size_t i = 0; i < CALLOC_COUNT; i++) {
		zeroed[i] = ex_keep(calloc(100, 40));
		ex_check(zeroed[i], "calloc");
		ex_alloc(&sites[S_CALLOC], 100 * 40);
	}
}

/* Frees what zeroed_calloc allocated: the inuse stays zeroed_calloc's. */
EX_SITE void release_half(void)
{
	for (size_t i = 0; i < CALLOC_COUNT; i += 2) {
		free(zeroed[i]);
		zeroed[i] = NULL;
		ex_free(&sites[S_CALLOC], 100 * 40);
	}
}

EX_SITE void grow_buffer(void)
{
	size_t size = 1024;

	grown = ex_keep(malloc(size));
	ex_check(grown, "malloc");
	ex_alloc(&sites[S_GROW], size);
	for (int i = 0; i < GROW_STEPS; i++) {
		void *p = realloc(grown, size * 2);

		ex_check(p, "realloc");
		ex_free(&sites[S_GROW], size);
		size *= 2;
		grown = ex_keep(p);
		ex_alloc(&sites[S_GROW], size);
	}
}

EX_SITE void aligned_blocks(void)
{
	for (size_t i = 0; i < ALIGNED_COUNT; i++) {
		aligned[i] = ex_keep(aligned_alloc(64, 2048));
		ex_check(aligned[i], "aligned_alloc");
		ex_alloc(&sites[S_ALIGNED], 2048);
	}
}

EX_SITE void posix_aligned(void)
{
	for (size_t i = 0; i < POSIX_COUNT; i++) {
		if (posix_memalign(&posix[i], 4096, 16384) != 0)
			posix[i] = NULL;
		ex_check(posix[i], "posix_memalign");
		ex_keep(posix[i]);
		ex_alloc(&sites[S_POSIX], 16384);
	}
	for (size_t i = 1; i < POSIX_COUNT; i += 2) {
		free(posix[i]);
		posix[i] = NULL;
		ex_free(&sites[S_POSIX], 16384);
	}
}

EX_SITE void large_blocks(void)
{
	void *p;

	for (size_t i = 0; i < LARGE_LIVE; i++) {
		large[i] = ex_keep(malloc(8 << 20));
		ex_check(large[i], "malloc");
		ex_alloc(&sites[S_LARGE], 8 << 20);
	}
	p = ex_keep(malloc(12 << 20));
	ex_check(p, "malloc");
	ex_alloc(&sites[S_LARGE], 12 << 20);
	free(p);
	ex_free(&sites[S_LARGE], 12 << 20);
}

static const char help[] =
	"Usage: truth [--truth <file>]\n"
	"\n"
	"Allocate a fixed, known pattern from named functions, then "
	"print\n"
	"what a heap profile of this run must show per function, on\n"
	"stderr and (with --truth) in <file>: lines\n" EX_HELP_TRUTH_LINES
	"Inuse values are those at exit, when the agent writes its "
	"profile.\n"
	"\n"
	"Options:\n" EX_HELP_OPTIONS "See examples/README.md.\n";

int main(int argc, char **argv)
{
	const char *truth = ex_options("truth", help, argc, argv, NULL, 0);

	if (ex_truth_start("truth", truth) != 0)
		return 2;

	churn_small();
	keep_medium();
	zeroed_calloc();
	release_half();
	grow_buffer();
	aligned_blocks();
	posix_aligned();
	large_blocks();

	return ex_report("truth", truth, sites, S_COUNT);
}
